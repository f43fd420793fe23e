package dev.parley.chat.store.jdbi;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.store.jdbi.internal.Dialect;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;

/**
 * The versioned schema of {@link JdbiChatStore}, for hosts that run migrations themselves (a deploy step,
 * their own tool) instead of letting the store run them at start-up.
 *
 * <p>Parley's migrations are kept apart from the host's: their own Flyway history table
 * ({@value #HISTORY_TABLE}), their own classpath location, tables prefixed {@code parley_}. A host with its
 * own Flyway runs a second Flyway for Parley — {@link #migrate(DataSource)} does exactly that — and must not
 * add Parley's location to its own (the version numbers would collide). A host with another tool applies
 * {@link #scripts(DatabaseKind)} in order and builds the store with {@code migrate(false)}.
 */
public final class ParleyMigrations {
    /** The Flyway history table of Parley's migrations. */
    public static final String HISTORY_TABLE = "parley_schema_history";

    /** The scripts of every version, in order; the same names exist for each database. */
    private static final List<String> SCRIPTS = List.of("V1__parley_tables.sql", "V2__run_leases.sql",
            "V3__one_active_run_per_thread.sql", "V4__pending_inputs.sql", "V5__conversation_trees_and_search.sql",
            "V6__compact_event_rows.sql", "V7__foreign_keys_and_secure_delete.sql", "V8__run_error_retry_after.sql",
            "V9__resume_points.sql", "V10__attachments.sql",
            "V11__search_newest_first_per_owner.sql", "V12__outbox.sql", "V13__run_start_context.sql");

    private ParleyMigrations() {
    }

    /** The Flyway location of a database's scripts, e.g. {@code classpath:dev/parley/chat/store/jdbi/migration/postgresql}. */
    public static String location(DatabaseKind kind) {
        return Dialect.of(kind).migrationLocation();
    }

    /**
     * A database's migration scripts as classpath resource names, in the order they must run (read them
     * with {@code ClassLoader.getResource}).
     */
    public static List<String> scripts(DatabaseKind kind) {
        String folder = Dialect.of(kind).migrationFolder();
        List<String> names = new ArrayList<>(SCRIPTS.size());
        for (String script : SCRIPTS) {
            names.add(folder + "/" + script);
        }
        return List.copyOf(names);
    }

    /**
     * Creates or upgrades Parley's tables in the data source's database (its current schema), recording
     * them in {@value #HISTORY_TABLE}. Safe to run again and from several instances at once (Flyway locks
     * its history table). A schema holding other tables is fine: Parley's history starts at a baseline.
     *
     * @throws ChatException STORE_FAILURE if the database cannot be reached or is not supported, or a
     *     migration fails
     */
    public static void migrate(DataSource dataSource) {
        Objects.requireNonNull(dataSource, "dataSource");
        migrate(dataSource, Dialect.detect(dataSource));
    }

    static void migrate(DataSource dataSource, Dialect dialect) {
        try {
            Flyway.configure(ParleyMigrations.class.getClassLoader())
                    .dataSource(dataSource)
                    .table(HISTORY_TABLE)
                    .locations(dialect.migrationLocation())
                    .baselineOnMigrate(true)
                    .baselineVersion("0")
                    .baselineDescription("before Parley")
                    .failOnMissingLocations(true)
                    .load()
                    .migrate();
        } catch (FlywayException e) {
            throw new ChatException(ErrorCode.STORE_FAILURE,
                    "migrating the Parley tables on " + dialect.kind().productName() + " failed", e);
        }
    }
}
