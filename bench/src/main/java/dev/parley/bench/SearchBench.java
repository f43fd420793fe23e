package dev.parley.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.store.SearchQuery;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadSearchHit;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import dev.parley.chat.store.jdbi.internal.SearchText;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Section 7, search: {@code ChatStore.searchThreads} over one owner's 10 000 threads holding 1 000 000 user
 * and assistant messages ({@link SearchCorpus}), on SQLite (FTS5) and PostgreSQL (GIN), and what the index
 * costs a write.
 *
 * <p>Each database gets two stores, loaded with the same batches through {@code ChatStore.write} (20 threads'
 * 2 000 messages per batch, one transaction each), in turn, alternating which goes first: one as migrated, one
 * whose search index was removed after the migration (SQLite: the FTS5 tables, their triggers and the
 * covering index of the ranking; PostgreSQL: the two GIN indexes). The difference of their write times per
 * message is what keeping the index costs. Both still write the search column (SQLite the searchable text,
 * PostgreSQL the vector, which the store builds in Java: timed apart). Then the store without the index is dropped, the other analysed, and five
 * queries — a common word, a rare word, two words, a phrase, a word no message holds — are run in turn, first
 * page of 20, after a warm-up: p50 and p95 of each.
 */
final class SearchBench {
    private static final int BATCH_THREADS = 20;
    private static final int WARMUP = 5;
    private static final int PAGE = 20;

    private final Env env;

    SearchBench(Env env) {
        this.env = env;
    }

    /** A query of the section, with how many messages and threads hold a match (counted while loading). */
    private static final class Probe {
        final String name;
        final String text;
        final SearchQuery query;
        long messages;
        final Set<Integer> threads = new HashSet<>();

        Probe(String name, String text) {
            this.name = name;
            this.text = text;
            this.query = SearchQuery.of(text);
        }
    }

    /** A database with the two stores of the section. */
    private interface Target extends AutoCloseable {
        String name();

        JdbiChatStore indexed();

        JdbiChatStore unindexed();

        /** Drops the store without the index and its data; analyses the other. */
        void dropUnindexed() throws Exception;

        /** Sizes of the data and the index, for the notes. */
        String sizes() throws Exception;
    }

    void run() throws Exception {
        int threads = env.options.searchThreads;
        int perThread = env.options.searchMessagesPerThread;
        SearchCorpus corpus = new SearchCorpus(threads, perThread);
        System.out.println("== 7. Search: " + threads + " threads × " + perThread + " messages per database");
        long started = System.nanoTime();
        corpus.countWords();
        String common = corpus.wordInShare(0.10, Set.of());
        String rare = corpus.wordInShare(100.0 / corpus.messages(), Set.of());
        String first = corpus.wordInShare(0.02, Set.of(common, rare));
        String second = corpus.wordInShare(0.02, Set.of(common, rare, first));
        System.out.printf("   corpus counted in %.1f s%n", (System.nanoTime() - started) / 1e9);
        List<Probe> probes = List.of(new Probe("common word", common), new Probe("rare word", rare),
                new Probe("two words", first + " " + second), new Probe("phrase", "\"" + SearchCorpus.PHRASE + "\""),
                new Probe("no hit", "zzyzx"));
        vectorCost(corpus);
        try (Target sqlite = sqlite()) {
            measure("7a", sqlite, corpus, probes);
        }
        for (Probe probe : probes) {
            probe.messages = 0;
            probe.threads.clear();
        }
        try (Target postgres = postgres()) {
            measure("7b", postgres, corpus, probes);
        }
    }

    private void measure(String id, Target target, SearchCorpus corpus, List<Probe> probes) throws Exception {
        double[] load = load(target, corpus, probes);
        long messages = corpus.messages();
        double with = load[0] * 1e6 / messages;
        double without = load[1] * 1e6 / messages;
        env.report.row(id + "0", target.name() + ": load " + corpus.threads + " threads × " + corpus.perThread
                + " messages through ChatStore.write (" + BATCH_THREADS * corpus.perThread + " messages per batch)",
                String.format(Locale.ROOT, "%.0f s with the index (%s msg/s), %.0f s without; %.0f s creating the "
                        + "threads (one transaction each, both stores)", load[0], Fmt.num(messages / load[0]), load[1], load[2]),
                "", "", Report.Verdict.INFO);
        String sizes = target.sizes();
        target.dropUnindexed();
        JdbiChatStore store = target.indexed();
        Map<Probe, double[]> times = new LinkedHashMap<>();
        for (Probe probe : probes) {
            times.put(probe, new double[env.options.searchReps]);
        }
        for (int round = -WARMUP; round < env.options.searchReps; round++) {
            for (Probe probe : probes) {
                long t0 = System.nanoTime();
                List<ThreadSearchHit> hits = store.searchThreads(Env.OWNER, probe.query, 0, PAGE);
                double ms = (System.nanoTime() - t0) / 1e6;
                if (hits.size() != Math.min(PAGE, probe.threads.size())) {
                    throw new IllegalStateException(probe.name + ": " + hits.size() + " hits, expected "
                            + Math.min(PAGE, probe.threads.size()));
                }
                if (round >= 0) {
                    times.get(probe)[round] = ms;
                }
            }
        }
        int row = 1;
        for (Map.Entry<Probe, double[]> entry : times.entrySet()) {
            Probe probe = entry.getKey();
            double[] ms = entry.getValue();
            Arrays.sort(ms);
            double p50 = ms[ms.length / 2];
            double p95 = ms[(int) Math.ceil(ms.length * 0.95) - 1];
            env.report.row(id + row++, String.format(Locale.ROOT, "%s: search, %s `%s` (in %,d messages of %,d threads), "
                    + "first page of %d", target.name(), probe.name, probe.text, probe.messages, probe.threads.size(), PAGE),
                    "p50 " + Fmt.ms(p50) + " / p95 " + Fmt.ms(p95) + " (n=" + ms.length + ")", "", "", Report.Verdict.INFO);
        }
        env.report.row(id + "6", target.name() + ": write cost of the search index per stored message",
                Fmt.num(with - without) + " µs (" + Fmt.num(with) + " µs with it, " + Fmt.num(without) + " µs without)",
                "", "×" + Fmt.ratio(with / without), Report.Verdict.INFO);
        env.report.note(id + ": " + sizes);
    }

    /**
     * Loads both stores, batch by batch, alternating which goes first; counts each probe's matches on the way.
     *
     * @return seconds writing messages with the index, without it, and creating the threads
     */
    private double[] load(Target target, SearchCorpus corpus, List<Probe> probes) {
        long with = 0;
        long without = 0;
        long creating = 0;
        long started = System.nanoTime();
        for (int from = 0, batch = 0; from < corpus.threads; from += BATCH_THREADS, batch++) {
            StoreBatch.Builder builder = StoreBatch.builder();
            for (int t = from; t < Math.min(corpus.threads, from + BATCH_THREADS); t++) {
                long t0 = System.nanoTime();
                target.indexed().createThread(corpus.thread(t, Env.OWNER));
                target.unindexed().createThread(corpus.thread(t, Env.OWNER));
                creating += System.nanoTime() - t0;
                for (Message message : corpus.messages(t)) {
                    builder.message(message);
                    count(probes, t, text(message));
                }
            }
            StoreBatch built = builder.build();
            JdbiChatStore firstStore = batch % 2 == 0 ? target.indexed() : target.unindexed();
            JdbiChatStore secondStore = batch % 2 == 0 ? target.unindexed() : target.indexed();
            long a = System.nanoTime();
            firstStore.write(built);
            long b = System.nanoTime();
            secondStore.write(built);
            long c = System.nanoTime();
            with += batch % 2 == 0 ? b - a : c - b;
            without += batch % 2 == 0 ? c - b : b - a;
            if ((batch + 1) % 100 == 0) {
                System.out.printf("   %s: %,d threads loaded in %.0f s%n", target.name(), from + BATCH_THREADS,
                        (System.nanoTime() - started) / 1e9);
            }
        }
        return new double[] {with / 1e9, without / 1e9, creating / 1e9};
    }

    /** A message's searchable text (the corpus holds only user and assistant messages). */
    static String text(Message message) {
        return message instanceof UserMessage user ? user.text() : ((AssistantMessage) message).text();
    }

    /** Counts the probes a text matches, as the store matches: every word as a word prefix, phrases as written. */
    private static void count(List<Probe> probes, int thread, String text) {
        List<String> words = Arrays.asList(text.toLowerCase(Locale.ROOT).split("[^\\p{L}\\p{N}]+"));
        String joined = " " + String.join(" ", words) + " ";
        for (Probe probe : probes) {
            boolean match = probe.query.words().stream().allMatch(w -> words.stream().anyMatch(x -> x.startsWith(w)))
                    && probe.query.phrases().stream().allMatch(p -> joined.contains(" " + p + " "));
            if (match) {
                probe.messages++;
                probe.threads.add(thread);
            }
        }
    }

    /** PostgreSQL's vectors are built by the store in Java, in both stores: their cost, measured apart. */
    private void vectorCost(SearchCorpus corpus) {
        List<String> texts = new ArrayList<>();
        for (int t = 0; t < Math.min(corpus.threads, 2_000); t++) {
            corpus.messages(t).forEach(m -> texts.add(text(m)));
        }
        long sink = 0;
        for (int round = 0; round < 3; round++) {
            long t0 = System.nanoTime();
            for (String text : texts) {
                sink += SearchText.vector(SearchText.of(text)).length();
            }
            double perMessage = (System.nanoTime() - t0) / 1e3 / texts.size();
            if (round == 2) {
                env.report.note(String.format(Locale.ROOT, "7b: building a message's tsvector literal in Java (PostgreSQL "
                        + "only, paid by both stores, so not in 7b6): %.2f µs per message (%,d messages, third round; %d)",
                        perMessage, texts.size(), sink % 10));
            }
        }
    }

    // ------------------------------------------------------------------ the databases

    private Target sqlite() throws SQLException {
        Path withFile = env.databases.newSqliteFile("search");
        Path withoutFile = env.databases.newSqliteFile("search-unindexed");
        JdbiChatStore indexed = JdbiChatStore.sqlite(withFile).build();
        JdbiChatStore unindexed = JdbiChatStore.sqlite(withoutFile).build();
        try (Connection c = Databases.sqliteConnection(withoutFile); Statement s = c.createStatement()) {
            for (String trigger : List.of("messages_search_insert", "messages_search_update", "messages_search_delete",
                    "threads_search_insert", "threads_search_update", "threads_search_delete")) {
                s.execute("DROP TRIGGER parley_" + trigger);
            }
            s.execute("DROP TABLE parley_message_search");
            s.execute("DROP TABLE parley_title_search");
            s.execute("DROP INDEX parley_messages_search_thread");
        }
        return new Target() {
            private JdbiChatStore without = unindexed;

            @Override
            public String name() {
                return "SQLite";
            }

            @Override
            public JdbiChatStore indexed() {
                return indexed;
            }

            @Override
            public JdbiChatStore unindexed() {
                return without;
            }

            @Override
            public String sizes() throws Exception {
                return String.format(Locale.ROOT, "SQLite file with the index %s, without %s; searchable text %s",
                        Fmt.mb(fileSize(withFile)), Fmt.mb(fileSize(withoutFile)),
                        Fmt.mb(query(withFile, "SELECT SUM(LENGTH(search_text)) FROM parley_messages")));
            }

            @Override
            public void dropUnindexed() throws Exception {
                without.close();
                without = null;
                Files.deleteIfExists(withoutFile);
                Files.deleteIfExists(Path.of(withoutFile + "-wal"));
            }

            @Override
            public void close() {
                indexed.close();
                if (without != null) {
                    without.close();
                }
            }
        };
    }

    private static double fileSize(Path file) throws Exception {
        query(file, "PRAGMA wal_checkpoint(TRUNCATE)");
        return Files.size(file);
    }

    private static double query(Path file, String sql) throws SQLException {
        try (Connection c = Databases.sqliteConnection(file); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getDouble(1);
        }
    }

    private Target postgres() throws SQLException {
        HikariDataSource withPool = env.databases.pool(env.databases.newPostgresSchema("search"), 10);
        HikariDataSource withoutPool = env.databases.pool(env.databases.newPostgresSchema("search_unindexed"), 10);
        JdbiChatStore indexed = JdbiChatStore.builder(withPool).build();
        JdbiChatStore unindexed = JdbiChatStore.builder(withoutPool).build();
        execute(withoutPool, "DROP INDEX parley_messages_search");
        execute(withoutPool, "DROP INDEX parley_threads_search");
        return new Target() {
            private JdbiChatStore without = unindexed;

            @Override
            public String name() {
                return "PostgreSQL";
            }

            @Override
            public JdbiChatStore indexed() {
                return indexed;
            }

            @Override
            public JdbiChatStore unindexed() {
                return without;
            }

            @Override
            public String sizes() throws Exception {
                return String.format(Locale.ROOT, "PostgreSQL parley_messages with its indexes %s (of which the GIN index "
                        + "%s, the tsvectors %s), without the GIN indexes %s",
                        Fmt.mb(value(withPool, "SELECT pg_total_relation_size('parley_messages')")),
                        Fmt.mb(value(withPool, "SELECT pg_relation_size('parley_messages_search')")),
                        Fmt.mb(value(withPool, "SELECT SUM(pg_column_size(search_vector)) FROM parley_messages")),
                        Fmt.mb(value(withoutPool, "SELECT pg_total_relation_size('parley_messages')")));
            }

            @Override
            public void dropUnindexed() throws Exception {
                without.close();
                without = null;
                String schema = value(withoutPool, "SELECT current_schema()");
                execute(withoutPool, "DROP SCHEMA " + schema + " CASCADE");
                env.databases.closePool(withoutPool);
                execute(withPool, "ANALYZE");
            }

            @Override
            public void close() {
                indexed.close();
                if (without != null) {
                    without.close();
                }
            }
        };
    }

    private static void execute(HikariDataSource pool, String sql) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T value(HikariDataSource pool, String sql) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            Object value = rs.getObject(1);
            return (T) (value instanceof Number n ? (Object) n.doubleValue() : value);
        }
    }
}
