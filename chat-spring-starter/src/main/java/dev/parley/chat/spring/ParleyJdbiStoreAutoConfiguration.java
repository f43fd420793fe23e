package dev.parley.chat.spring;

import dev.parley.chat.store.ChatStore;
import dev.parley.chat.attachment.BlobStore;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The durable store, when the application has a {@link DataSource}: SQLite or PostgreSQL, detected from
 * the database. Parley's Flyway migrations (their own history table, {@code parley_schema_history}) run
 * at start-up unless {@code parley.store.migrate=false}. A host's {@link ChatStore} bean wins.
 */
@AutoConfiguration(before = ParleyAutoConfiguration.class,
        afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnClass({JdbiChatStore.class, DataSource.class})
@ConditionalOnSingleCandidate(DataSource.class)
@EnableConfigurationProperties(ParleyProperties.class)
public class ParleyJdbiStoreAutoConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(ChatStore.class)
    public JdbiChatStore parleyJdbiChatStore(DataSource dataSource, ParleyProperties properties) {
        return JdbiChatStore.builder(dataSource).migrate(properties.getStore().isMigrate()).build();
    }

    /** Attachment bytes in the same database, chunked; a host's {@link BlobStore} bean wins. */
    @Bean
    @ConditionalOnMissingBean(BlobStore.class)
    @ConditionalOnBean(JdbiChatStore.class)
    public BlobStore parleyJdbiBlobStore(JdbiChatStore store) {
        return store.blobStore();
    }
}
