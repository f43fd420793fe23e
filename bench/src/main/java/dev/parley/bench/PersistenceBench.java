package dev.parley.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Section 2, persistence against the database's limit: the store's batched event appends
 * ({@code ChatStore.write(StoreBatch)}, batches of {@value #BATCH} events of one run, as the engine's batch
 * writer makes them when it is triggered by {@code eventFlushBatchSize}) against a plain JDBC batch insert
 * of the same rows ({@code run_id, seq, created_at, type, payload}, the payload JSON written beforehand)
 * into the same table {@code parley_run_events}, one transaction per batch, on a fresh SQLite file or a
 * fresh PostgreSQL schema each time.
 */
final class PersistenceBench {
    static final int BATCH = 512;
    private static final String INSERT = "INSERT INTO parley_run_events (run_id, seq, created_at, type, payload) "
            + "VALUES (?, ?, ?, ?, ?)";
    /** The store's own statement (chat-store-jdbi's Sql.INSERT_EVENT), for the diagnostic variant. */
    private static final String STORE_INSERT = INSERT + " ON CONFLICT (run_id, seq) DO NOTHING";
    private static final String UNNEST_INSERT = "INSERT INTO parley_run_events (run_id, seq, created_at, type, payload) "
            + "SELECT * FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::text[], ?::text[]) "
            + "ON CONFLICT (run_id, seq) DO NOTHING";

    private final Env env;
    private final int n;
    private final Map<String, Stats> results = new LinkedHashMap<>();

    PersistenceBench(Env env) {
        this.env = env;
        this.n = env.options.persistEvents;
    }

    Map<String, Stats> results() {
        return results;
    }

    private interface Variant {
        long run(List<RunEvent> events) throws Exception;
    }

    void run() throws Exception {
        System.out.println("== 2. Persistence: " + n + " events in batches of " + BATCH + ", store vs plain JDBC");
        Map<String, Variant> variants = new LinkedHashMap<>();
        variants.put("sqlite-store", this::sqliteStore);
        variants.put("sqlite-raw", this::sqliteRaw);
        variants.put("pg-store", events -> pgStore(events, false));
        variants.put("pg-raw", events -> pgRaw(events, false));
        variants.put("pg-store-rewrite", events -> pgStore(events, true));
        variants.put("pg-raw-rewrite", events -> pgRaw(events, true));
        variants.put("pg-raw-conflict-rewrite", events -> pgRaw(events, true, STORE_INSERT));
        variants.put("pg-raw-unnest", this::pgUnnest);
        int rounds = env.options.warmupRounds + env.options.rounds;
        for (int round = 0; round < rounds; round++) {
            boolean warm = round < env.options.warmupRounds;
            for (Map.Entry<String, Variant> v : variants.entrySet()) {
                List<RunEvent> events = events(n);
                Env.settle();
                long nanos = v.getValue().run(events);
                double rate = n / (nanos / 1e9);
                System.out.printf("   %s round %d%s: %.3f s, %,.0f events/s%n", v.getKey(), round + 1, warm ? " (warm-up)" : "",
                        nanos / 1e9, rate);
                if (!warm) {
                    results.computeIfAbsent(v.getKey(), k -> new Stats()).add(rate);
                }
            }
        }
        double encode = encodeRate(events(n));
        Report r = env.report;
        row("2a", "SQLite: store.write(batch of 512 events) vs plain JDBC batch insert", "sqlite-store", "sqlite-raw");
        row("2b", "PostgreSQL: store.write(batch of 512 events) vs plain JDBC batch insert", "pg-store", "pg-raw");
        Stats rewriteStore = results.get("pg-store-rewrite");
        Stats rewriteRaw = results.get("pg-raw-rewrite");
        r.row("2b2", "(diagnostic) PostgreSQL with the driver's reWriteBatchedInserts=true: store (raw)",
                rewriteStore.describe("ev/s") + " (raw " + Fmt.num(rewriteRaw.median()) + ")",
                "raw without rewrite: " + Fmt.num(results.get("pg-raw").median()),
                Fmt.ratio(rewriteStore.median() / results.get("pg-raw").median()), Report.Verdict.INFO);
        r.note("2b2: plain JDBC with the store's own statement (INSERT … ON CONFLICT (run_id, seq) DO NOTHING) and "
                + "reWriteBatchedInserts=true: " + results.get("pg-raw-conflict-rewrite").describe("ev/s"));
        r.note("2b3: (diagnostic) plain JDBC, one INSERT … SELECT FROM unnest(arrays) … ON CONFLICT DO NOTHING per batch "
                + "(the store's semantics in one statement and one round trip, no driver setting): "
                + results.get("pg-raw-unnest").describe("ev/s"));
        r.note("2: the store's own cost includes writing each event's JSON (ChatJson, " + Fmt.num(encode)
                + " events/s on one thread here), the raw insert gets the same JSON ready-made; both commit once per batch "
                + "of " + BATCH + " (SQLite: WAL, synchronous=FULL; PostgreSQL: " + env.databases.postgresVersion() + ")");
    }

    private void row(String id, String what, String store, String raw) {
        double s = results.get(store).median();
        double l = results.get(raw).median();
        double ratio = s / l;
        env.report.row(id, what, results.get(store).describe("ev/s"), "raw " + Fmt.num(l) + " ev/s; ≥ 0.5 × raw",
                Fmt.ratio(ratio), ratio >= 0.5 ? Report.Verdict.MET : Report.Verdict.MISSED);
    }

    /** The events of one LONG run: text deltas, as the Hermes adapter makes them. */
    static List<RunEvent> events(int count) {
        String runId = UUID.randomUUID().toString();
        String messageId = UUID.randomUUID().toString();
        long now = System.currentTimeMillis();
        List<RunEvent> events = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            events.add(new RunEvent(runId, i + 1, now + i / 100, new AgentStreamEvent.TextDelta(messageId, "t" + i + " ")));
        }
        return events;
    }

    private static double encodeRate(List<RunEvent> events) {
        ChatJson json = ChatJson.shared();
        long start = System.nanoTime();
        long chars = 0;
        for (RunEvent e : events) {
            chars += json.write(e.event()).length();
        }
        if (chars == 0) {
            throw new IllegalStateException();
        }
        return events.size() / ((System.nanoTime() - start) / 1e9);
    }

    /** Stores the thread and the run the events belong to: the store refuses events of a run it does not hold. */
    private static void holdTheRun(JdbiChatStore store, List<RunEvent> events) {
        String runId = events.get(0).runId();
        java.time.Instant now = java.time.Instant.now();
        dev.parley.chat.model.ChatThread thread = new dev.parley.chat.model.ChatThread("bench-" + runId, "bench", null,
                null, null, null, dev.parley.chat.model.ThreadStatus.ACTIVE, now, now);
        store.createThread(thread);
        store.write(StoreBatch.builder().run(new dev.parley.chat.model.Run(runId, thread.id(), "bench",
                dev.parley.chat.model.RunStatus.RUNNING, null, UUID.randomUUID().toString(), "bench", null, null, null,
                java.util.Map.of(), now, now, null, null, null, null)).build());
    }

    private static long writeAll(JdbiChatStore store, List<RunEvent> events) {
        holdTheRun(store, events);
        long start = System.nanoTime();
        for (int from = 0; from < events.size(); from += BATCH) {
            store.write(StoreBatch.builder().events(events.subList(from, Math.min(events.size(), from + BATCH))).build());
        }
        return System.nanoTime() - start;
    }

    private static long insertAll(Connection connection, List<RunEvent> events, String sql) throws SQLException {
        ChatJson json = ChatJson.shared();
        List<String> payloads = new ArrayList<>(events.size());
        for (RunEvent e : events) {
            payloads.add(json.write(e.event()));
        }
        connection.setAutoCommit(false);
        long start = System.nanoTime();
        try (PreparedStatement insert = connection.prepareStatement(sql)) {
            for (int from = 0; from < events.size(); from += BATCH) {
                int to = Math.min(events.size(), from + BATCH);
                for (int i = from; i < to; i++) {
                    RunEvent e = events.get(i);
                    insert.setString(1, e.runId());
                    insert.setLong(2, e.seq());
                    insert.setLong(3, e.timestamp());
                    insert.setString(4, e.type());
                    insert.setString(5, payloads.get(i));
                    insert.addBatch();
                }
                insert.executeBatch();
                connection.commit();
            }
        }
        return System.nanoTime() - start;
    }

    private long sqliteStore(List<RunEvent> events) {
        try (JdbiChatStore store = env.databases.newSqliteStore("persist-store")) {
            return writeAll(store, events);
        }
    }

    private long sqliteRaw(List<RunEvent> events) throws SQLException {
        Path file = env.databases.newSqliteFile("persist-raw");
        try (JdbiChatStore tables = JdbiChatStore.sqlite(file).build()) { // creates the same tables
            holdTheRun(tables, events);
        }
        try (Connection connection = Databases.sqliteConnection(file)) {
            return insertAll(connection, events, INSERT);
        }
    }

    private long pgStore(List<RunEvent> events, boolean rewrite) {
        String url = env.databases.newPostgresSchema("persist_store") + (rewrite ? "&reWriteBatchedInserts=true" : "");
        HikariDataSource pool = env.databases.pool(url, 10);
        try (JdbiChatStore store = JdbiChatStore.builder(pool).build()) {
            return writeAll(store, events);
        } finally {
            env.databases.closePool(pool);
        }
    }

    /**
     * One statement per batch: the rows as five arrays, {@code INSERT … SELECT * FROM unnest(…) ON CONFLICT DO
     * NOTHING} (the store's semantics, one round trip per batch, no driver setting needed).
     */
    private long pgUnnest(List<RunEvent> events) throws SQLException {
        String url = env.databases.newPostgresSchema("persist_unnest");
        HikariDataSource pool = env.databases.pool(url, 2);
        try {
            try (JdbiChatStore tables = JdbiChatStore.builder(pool).build()) { // creates the same tables
                holdTheRun(tables, events);
            }
            ChatJson json = ChatJson.shared();
            List<String> payloads = new ArrayList<>(events.size());
            for (RunEvent e : events) {
                payloads.add(json.write(e.event()));
            }
            try (Connection connection = pool.getConnection()) {
                connection.setAutoCommit(false);
                long start = System.nanoTime();
                try (PreparedStatement insert = connection.prepareStatement(UNNEST_INSERT)) {
                    for (int from = 0; from < events.size(); from += BATCH) {
                        int to = Math.min(events.size(), from + BATCH);
                        int size = to - from;
                        String[] runIds = new String[size];
                        Long[] seqs = new Long[size];
                        Long[] times = new Long[size];
                        String[] types = new String[size];
                        String[] bodies = new String[size];
                        for (int i = 0; i < size; i++) {
                            RunEvent e = events.get(from + i);
                            runIds[i] = e.runId();
                            seqs[i] = e.seq();
                            times[i] = e.timestamp();
                            types[i] = e.type();
                            bodies[i] = payloads.get(from + i);
                        }
                        insert.setArray(1, connection.createArrayOf("text", runIds));
                        insert.setArray(2, connection.createArrayOf("int8", seqs));
                        insert.setArray(3, connection.createArrayOf("int8", times));
                        insert.setArray(4, connection.createArrayOf("text", types));
                        insert.setArray(5, connection.createArrayOf("text", bodies));
                        insert.executeUpdate();
                        connection.commit();
                    }
                }
                return System.nanoTime() - start;
            }
        } finally {
            env.databases.closePool(pool);
        }
    }

    private long pgRaw(List<RunEvent> events, boolean rewrite) throws SQLException {
        return pgRaw(events, rewrite, INSERT);
    }

    private long pgRaw(List<RunEvent> events, boolean rewrite, String sql) throws SQLException {
        String url = env.databases.newPostgresSchema("persist_raw") + (rewrite ? "&reWriteBatchedInserts=true" : "");
        HikariDataSource pool = env.databases.pool(url, 2);
        try {
            try (JdbiChatStore tables = JdbiChatStore.builder(pool).build()) { // creates the same tables
                holdTheRun(tables, events);
            }
            try (Connection connection = pool.getConnection()) {
                return insertAll(connection, events, sql);
            }
        } finally {
            env.databases.closePool(pool);
        }
    }
}
