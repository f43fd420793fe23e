package dev.parley.chat.spring;

import dev.parley.chat.ChatException;
import dev.parley.chat.cluster.RunCoordinator;
import dev.parley.chat.store.jdbi.DatabaseKind;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import dev.parley.chat.store.jdbi.PostgresRunCoordinator;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Several instances on one PostgreSQL database ({@code parley.cluster.enabled=true}): a
 * {@link PostgresRunCoordinator} over the application's DataSource, which the engine then uses. The
 * store must be PostgreSQL (a SQLite file cannot be shared between hosts). A host's {@link RunCoordinator}
 * bean wins.
 */
@AutoConfiguration(after = ParleyJdbiStoreAutoConfiguration.class, before = ParleyAutoConfiguration.class)
@ConditionalOnClass({PostgresRunCoordinator.class, org.postgresql.PGConnection.class})
@ConditionalOnBooleanProperty("parley.cluster.enabled")
@ConditionalOnBean(DataSource.class)
@EnableConfigurationProperties(ParleyProperties.class)
public class ParleyClusterAutoConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(RunCoordinator.class)
    public PostgresRunCoordinator parleyRunCoordinator(DataSource dataSource, ParleyProperties properties,
            org.springframework.beans.factory.ObjectProvider<JdbiChatStore> store) {
        JdbiChatStore jdbi = store.getIfAvailable();
        if (jdbi != null && jdbi.databaseKind() != DatabaseKind.POSTGRESQL) {
            throw ChatException.configuration("parley.cluster.enabled needs PostgreSQL: the store runs on "
                    + jdbi.databaseKind() + ", which other hosts cannot share");
        }
        PostgresRunCoordinator.Builder builder = PostgresRunCoordinator.builder(dataSource);
        if (properties.getCluster().getInstanceId() != null) {
            builder.instanceId(properties.getCluster().getInstanceId());
        }
        return builder.build();
    }
}
