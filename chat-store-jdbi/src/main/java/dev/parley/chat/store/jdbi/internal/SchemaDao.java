package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.util.List;
import org.jdbi.v3.sqlobject.customizer.Define;
import org.jdbi.v3.sqlobject.statement.SqlQuery;

/**
 * Probes of the schema, for a store whose host runs the migrations: every table of the current version
 * exists and is readable, and what later versions added is there. Whether an index exists is asked of each
 * database's own catalogue ({@link Sqlite}, {@link Postgres}; the store uses its database's, {@link #of}).
 */
public interface SchemaDao {
    /** The table version 9 added (runs' resume points). */
    String RESUME_POINTS = "parley_resume_points";

    /** The table version 12 added (the outbox). */
    String OUTBOX = "parley_outbox";

    /** The tables of the current schema version; each is probed when migrations are left to the host. */
    List<String> TABLES = List.of(
        "parley_threads", "parley_messages", "parley_runs", "parley_run_events", "parley_seq_reservations",
        "parley_inputs", "parley_thread_approvals", "parley_feedback", "parley_host_actions", RESUME_POINTS,
        "parley_attachments", "parley_blobs", "parley_unreferenced_blobs", "parley_blob_chunks", OUTBOX);

    /** Tables a version after 7 added, in version order: one missing means the schema is older than this version. */
    List<String> LATER_TABLES = List.of(RESUME_POINTS, "parley_attachments", "parley_blobs",
            "parley_unreferenced_blobs", "parley_blob_chunks");

    /** The interface to attach on a database. */
    static Class<? extends SchemaDao> of(Dialect dialect) {
        return switch (dialect) {
            case SQLITE -> Sqlite.class;
            case POSTGRESQL -> Postgres.class;
        };
    }

    /** Fails unless {@code table} exists and is readable; it reads no row. */
    @SqlQuery("SELECT COUNT(*) FROM <table> WHERE 1 = 0")
    long probeTable(@Define String table);

    /** Fails unless the columns added after version 1 exist (the host ran every migration). */
    @SqlQuery("SELECT COUNT(lease_owner) + COUNT(lease_until) + COUNT(events_compacted_at) FROM parley_runs WHERE 1 = 0")
    long probeLaterColumns();

    /** Fails unless the columns of version 5 (trees, client ids, search) exist. */
    @SqlQuery("SELECT COUNT(m.client_message_id) + COUNT(m.branch_depth) + COUNT(t.active_leaf_id) "
            + "FROM parley_messages m, parley_threads t WHERE 1 = 0")
    long probeVersion5Columns();

    /** Fails unless the column of version 6 (compact event rows) exists. */
    @SqlQuery("SELECT COUNT(first_seq) FROM parley_run_events WHERE 1 = 0")
    long probeVersion6Columns();

    /** Fails unless the column of version 8 (a run error's retry hint) exists. */
    @SqlQuery("SELECT COUNT(error_retry_after_seconds) FROM parley_runs WHERE 1 = 0")
    long probeVersion8Columns();

    /** Fails unless the column of version 13 (the context a run was started in) exists. */
    @SqlQuery("SELECT COUNT(start_context) FROM parley_runs WHERE 1 = 0")
    long probeVersion13Column();

    /** Fails unless the search of version 11 is there (each owner's texts newest first). */
    long probeVersion11Search();

    /** 1 if the index exists, else 0. */
    int indexExists(String name);

    /** How many foreign keys the table has (version 7 gave every child table one). */
    int foreignKeyCount(String table);

    /**
     * Checks the schema, each probe on a read of its own.
     *
     * @param scripts where the host finds the migration scripts, for the message of a failure
     * @throws ChatException STORE_FAILURE naming what is missing
     */
    static void require(StoreDatabase db, String scripts) {
        for (String table : TABLES) {
            if (LATER_TABLES.contains(table) || table.equals(OUTBOX)) {
                continue;
            }
            try {
                db.read("probing " + table, dao -> dao.schema().probeTable(table));
            } catch (ChatException e) {
                throw new ChatException(ErrorCode.STORE_FAILURE, "the Parley table " + table + " is missing or "
                        + "unreadable: run the migrations (ParleyMigrations.migrate, or the scripts at " + scripts
                        + ") or build the store with migrate(true)", e);
            }
        }
        String tooOld = "the Parley tables are older than this version: run the newer migrations "
                + "(ParleyMigrations.migrate, or the scripts at " + scripts + ") or build the store with migrate(true)";
        try {
            db.read("probing the schema version", dao -> dao.schema().probeLaterColumns());
            db.read("probing the schema version", dao -> dao.schema().probeVersion5Columns());
            db.read("probing the schema version", dao -> dao.schema().probeVersion6Columns());
        } catch (ChatException e) {
            throw new ChatException(ErrorCode.STORE_FAILURE, tooOld, e);
        }
        if (db.read("probing the schema version", dao -> dao.schema().indexExists(RunDao.ONE_ACTIVE_RUN_INDEX)) == 0) {
            throw new ChatException(ErrorCode.STORE_FAILURE, tooOld + " (the index " + RunDao.ONE_ACTIVE_RUN_INDEX
                    + " of version 3 is missing)");
        }
        if (db.read("probing the schema version", dao -> dao.schema().indexExists(MessageDao.CLIENT_ID_INDEX)) == 0) {
            throw new ChatException(ErrorCode.STORE_FAILURE, tooOld + " (the index " + MessageDao.CLIENT_ID_INDEX
                    + " of version 5 is missing)");
        }
        if (db.read("probing the schema version", dao -> dao.schema().foreignKeyCount("parley_run_events")) == 0) {
            throw new ChatException(ErrorCode.STORE_FAILURE, tooOld + " (the foreign keys of version 7 are missing)");
        }
        try {
            db.read("probing the schema version", dao -> dao.schema().probeVersion8Columns());
        } catch (ChatException e) {
            throw new ChatException(ErrorCode.STORE_FAILURE, tooOld + " (the column error_retry_after_seconds of "
                    + "version 8 is missing)", e);
        }
        for (String table : LATER_TABLES) {
            try {
                db.read("probing the schema version", dao -> dao.schema().probeTable(table));
            } catch (ChatException e) {
                throw new ChatException(ErrorCode.STORE_FAILURE, tooOld + " (the table " + table + " is missing)", e);
            }
        }
        try {
            db.read("probing the schema version", dao -> dao.schema().probeVersion11Search());
        } catch (ChatException e) {
            throw new ChatException(ErrorCode.STORE_FAILURE, tooOld + " (the search by owner of version 11 is missing)",
                    e);
        }
        try {
            db.read("probing the schema version", dao -> dao.schema().probeTable(OUTBOX));
        } catch (ChatException e) {
            throw new ChatException(ErrorCode.STORE_FAILURE, tooOld + " (the table " + OUTBOX + " of version 12 is "
                    + "missing)", e);
        }
        try {
            db.read("probing the schema version", dao -> dao.schema().probeVersion13Column());
        } catch (ChatException e) {
            throw new ChatException(ErrorCode.STORE_FAILURE, tooOld + " (the column start_context of version 13 is "
                    + "missing)", e);
        }
    }

    /** SQLite: the index in {@code sqlite_master}. */
    interface Sqlite extends SchemaDao {
        @Override
        @SqlQuery("SELECT COUNT(owner_key) FROM parley_message_search WHERE 1 = 0")
        long probeVersion11Search();

        @Override
        @SqlQuery("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = :name")
        int indexExists(String name);

        @Override
        @SqlQuery("SELECT COUNT(*) FROM pragma_foreign_key_list(:table)")
        int foreignKeyCount(String table);
    }

    /** PostgreSQL: the index in the search path (where the tables are found). */
    interface Postgres extends SchemaDao {
        @Override
        @SqlQuery("SELECT COUNT(owner_id) FROM parley_messages WHERE 1 = 0")
        long probeVersion11Search();

        @Override
        @SqlQuery("SELECT CASE WHEN to_regclass(:name) IS NULL THEN 0 ELSE 1 END")
        int indexExists(String name);

        @Override
        @SqlQuery("SELECT COUNT(*) FROM pg_constraint WHERE contype = 'f' AND conrelid = to_regclass(:table)")
        int foreignKeyCount(String table);
    }
}
