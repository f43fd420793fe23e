package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.ThreadStatus;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Parley's Flyway migrations: their own history and location, at start-up or left to the host. */
abstract class MigrationTest {
    private static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");
    TestDatabase database;

    abstract TestDatabase createDatabase();

    @BeforeEach
    void openDatabase() {
        database = createDatabase();
    }

    @AfterEach
    void closeDatabase() {
        database.close();
    }

    private Flyway parleyFlyway() {
        return Flyway.configure().dataSource(database.dataSource()).table(ParleyMigrations.HISTORY_TABLE)
                .locations(ParleyMigrations.location(database.kind())).load();
    }

    private static List<String> versions(MigrationInfo[] infos) {
        return Arrays.stream(infos).map(info -> info.getVersion().getVersion()).collect(Collectors.toList());
    }

    @Test
    void theStoreKeepsItsOwnHistoryBesideTheHosts() {
        Flyway host = Flyway.configure().dataSource(database.dataSource()).locations("classpath:db/host-migration").load();
        host.migrate();

        try (JdbiChatStore store = database.store().build()) {
            store.createThread(new ChatThread("t1", "alice", null, null, null, null, ThreadStatus.ACTIVE, T0, T0));
            assertThat(store.findThread("t1")).isPresent();
        }
        try (JdbiChatStore again = database.store().build()) {
            assertThat(again.findThread("t1")).as("a second start migrates nothing away").isPresent();
        }

        MigrationInfo[] parley = parleyFlyway().info().applied();
        assertThat(versions(parley)).as("a baseline under the host's tables, then Parley's versions").containsExactly("0", "1", "2");
        assertThat(parley[1].getScript()).isEqualTo("V1__parley_tables.sql");
        assertThat(parley[1].getState().isFailed()).isFalse();
        assertThat(host.info().applied()).extracting(MigrationInfo::getScript).containsExactly("V1__host_orders.sql");
        assertThat(host.validateWithResult().validationSuccessful).as("the host's history is untouched").isTrue();
        assertThat(host.info().pending()).isEmpty();
        Jdbi.create(database.dataSource()).useHandle(h -> {
            h.execute("INSERT INTO host_orders (id, note) VALUES (1, 'still mine')");
            assertThat(h.createQuery("SELECT COUNT(*) FROM parley_schema_history").mapTo(Integer.class).one()).isEqualTo(3);
            assertThat(h.createQuery("SELECT COUNT(*) FROM flyway_schema_history").mapTo(Integer.class).one()).isEqualTo(1);
        });
    }

    @Test
    void migrationsCanBeLeftToTheHost() {
        assertThatThrownBy(() -> database.store().migrate(false).build())
                .isInstanceOfSatisfying(ChatException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILURE);
                    assertThat(e.getMessage()).contains("parley_threads", "ParleyMigrations");
                });
        assertThat(parleyFlyway().info().applied()).as("nothing was migrated").isEmpty();

        ParleyMigrations.migrate(database.dataSource());
        ParleyMigrations.migrate(database.dataSource());
        assertThat(versions(parleyFlyway().info().applied())).containsExactly("1", "2");

        try (JdbiChatStore store = database.store().migrate(false).build()) {
            store.createThread(new ChatThread("t1", "alice", null, null, null, null, ThreadStatus.ACTIVE, T0, T0));
            assertThat(store.findThread("t1")).isPresent();
        }
    }

    @Test
    void theScriptsAreListedInOrderAndAreWhatFlywayApplies() {
        List<String> scripts = ParleyMigrations.scripts(database.kind());
        String location = ParleyMigrations.location(database.kind());
        assertThat(location).isEqualTo("classpath:dev/parley/chat/store/jdbi/migration/"
                + database.kind().name().toLowerCase(java.util.Locale.ROOT));
        for (String script : scripts) {
            assertThat(script).startsWith(location.substring("classpath:".length()) + "/");
            assertThat(getClass().getClassLoader().getResource(script)).as(script).isNotNull();
        }
        ParleyMigrations.migrate(database.dataSource());
        assertThat(parleyFlyway().info().applied()).extracting(MigrationInfo::getScript)
                .containsExactlyElementsOf(scripts.stream().map(s -> s.substring(s.lastIndexOf('/') + 1))
                        .collect(Collectors.toList()));
    }
}
