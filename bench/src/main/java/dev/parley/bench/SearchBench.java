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
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;

/**
 * Section 7, search: {@code ChatStore.searchThreads} over 10 000 threads holding 1 000 000 user and assistant
 * messages ({@link SearchCorpus}), on SQLite (FTS5) and PostgreSQL (GIN and B-tree), held by one owner
 * (7a, 7b) and spread over {@value #OWNERS} owners (7c, 7d: thread {@code t} is owner {@code t % 1000}'s, so
 * each owner's ten threads lie across the whole save order), and what the index costs a write.
 *
 * <p>For the one-owner corpus each database gets two stores, loaded with the same batches through
 * {@code ChatStore.write} (20 threads' 2 000 messages per batch, one transaction each), in turn, alternating
 * which goes first: one as migrated, one whose search index was removed after the migration (SQLite: the
 * FTS5 tables, their triggers and the covering index of the matches' threads; PostgreSQL: the two GIN
 * indexes and the owner's B-tree). The difference of their write times per message is what keeping the index
 * costs, next to what the store's write of a message costs without it (what the relay pays to store an
 * answer). Both still write the search columns (SQLite the searchable text, PostgreSQL the vector, which the
 * store builds in Java: timed apart, and the owner). The spread corpus is loaded into one indexed store.
 *
 * <p>Then six queries — a common word, a rare word, two words, a phrase, a prefix as typed, a word no message
 * holds — run in turn, first page of 20, after a warm-up; on the spread corpus each round asks another
 * owner. Each query class's p95 is held to {@value #LIMIT_MS} ms, printed with its ratio.
 */
final class SearchBench {
    private static final int BATCH_THREADS = 20;
    private static final int WARMUP = 5;
    private static final int PAGE = 20;
    private static final double LIMIT_MS = 50;
    static final int OWNERS = 1000;

    private final Env env;

    SearchBench(Env env) {
        this.env = env;
    }

    /** A query of the section, with the threads and messages that hold a match (counted while loading). */
    private static final class Probe {
        final String name;
        final String text;
        final SearchQuery query;
        final BitSet threads = new BitSet();
        long messages;

        Probe(String name, String text) {
            this.name = name;
            this.text = text;
            this.query = SearchQuery.of(text);
        }

        /** How many of the threads of owner {@code o} of the spread corpus match. */
        int threadsOf(int owner) {
            int n = 0;
            for (int t = threads.nextSetBit(0); t >= 0; t = threads.nextSetBit(t + 1)) {
                n += t % OWNERS == owner ? 1 : 0;
            }
            return n;
        }
    }

    /** A database's store of a section, with (for the write cost) a second store without the search index. */
    private interface Target extends AutoCloseable {
        String name();

        JdbiChatStore indexed();

        @Nullable JdbiChatStore unindexed();

        /** Drops the store without the index and its data (if any); analyses the other. */
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
                new Probe("prefix as typed", common.substring(0, 3)), new Probe("no hit", "zzyzx"));
        vectorCost(corpus);
        try (Target sqlite = sqlite(true)) {
            measure("7a", "one owner", sqlite, corpus, probes, t -> Env.OWNER, true);
        }
        try (Target sqlite = sqlite(false)) {
            measure("7c", OWNERS + " owners", sqlite, corpus, probes, SearchBench::owner, false);
        }
        try (Target postgres = postgres(true)) {
            measure("7b", "one owner", postgres, corpus, probes, t -> Env.OWNER, false);
        }
        try (Target postgres = postgres(false)) {
            measure("7d", OWNERS + " owners", postgres, corpus, probes, SearchBench::owner, false);
        }
    }

    private static String owner(int index) {
        return "owner-" + index % OWNERS;
    }

    private void measure(String id, String shape, Target target, SearchCorpus corpus, List<Probe> probes,
            IntFunction<String> ownerOf, boolean count) throws Exception {
        double[] load = load(target, corpus, count ? probes : List.of(), ownerOf);
        long messages = corpus.messages();
        double with = load[0] * 1e6 / messages;
        double without = load[1] * 1e6 / messages;
        env.report.row(id + "0", target.name() + ", " + shape + ": load " + corpus.threads + " threads × "
                + corpus.perThread + " messages through ChatStore.write (" + BATCH_THREADS * corpus.perThread
                + " messages per batch)", String.format(Locale.ROOT, "%.0f s with the index (%s msg/s)%s; %.0f s "
                + "creating the threads (one transaction each)", load[0], Fmt.num(messages / load[0]),
                target.unindexed() == null ? "" : String.format(Locale.ROOT, ", %.0f s without", load[1]), load[2]),
                "", "", Report.Verdict.INFO);
        String sizes = target.sizes();
        target.dropUnindexed();
        JdbiChatStore store = target.indexed();
        boolean spread = !ownerOf.apply(0).equals(ownerOf.apply(1));
        double[][] times = new double[probes.size()][env.options.searchReps];
        for (int round = -WARMUP; round < env.options.searchReps; round++) {
            int owner = Math.floorMod(round * 7919 + 11, OWNERS);
            for (int p = 0; p < probes.size(); p++) {
                Probe probe = probes.get(p);
                String asked = spread ? ownerOf.apply(owner) : Env.OWNER;
                int expected = Math.min(PAGE, spread ? probe.threadsOf(owner) : probe.threads.cardinality());
                long t0 = System.nanoTime();
                List<ThreadSearchHit> hits = store.searchThreads(asked, probe.query, 0, PAGE);
                double ms = (System.nanoTime() - t0) / 1e6;
                if (hits.size() != expected || hits.stream().anyMatch(h -> !h.thread().ownerId().equals(asked))) {
                    throw new IllegalStateException(probe.name + " for " + asked + ": " + hits.size() + " hits, expected "
                            + expected);
                }
                if (round >= 0) {
                    times[p][round] = ms;
                }
            }
        }
        for (int p = 0; p < probes.size(); p++) {
            Probe probe = probes.get(p);
            double[] ms = times[p];
            Arrays.sort(ms);
            double p50 = ms[ms.length / 2];
            double p95 = ms[(int) Math.ceil(ms.length * 0.95) - 1];
            String held = spread
                    ? String.format(Locale.ROOT, "in %,d messages of %,d threads of all owners; the owner asked holds "
                            + "about %d of them", probe.messages, probe.threads.cardinality(),
                            Math.round(probe.threads.cardinality() / (double) OWNERS))
                    : String.format(Locale.ROOT, "in %,d messages of %,d threads", probe.messages, probe.threads.cardinality());
            env.report.row(id + (p + 1), String.format(Locale.ROOT, "%s, %s: search, %s `%s` (%s), first page of %d",
                    target.name(), shape, probe.name, probe.text, held, PAGE),
                    "p50 " + Fmt.ms(p50) + " / p95 " + Fmt.ms(p95) + " (n=" + ms.length + ")",
                    "p95 ≤ " + Fmt.ms(LIMIT_MS), Fmt.ratio(p95 / LIMIT_MS),
                    p95 <= LIMIT_MS ? Report.Verdict.MET : Report.Verdict.MISSED);
        }
        if (load[1] > 0) {
            env.report.row(id + (probes.size() + 1), target.name() + ": write cost of the search index per stored "
                    + "message, next to the store's write of the message without it (what the relay pays per message)",
                    Fmt.num(with - without) + " µs (" + Fmt.num(with) + " µs with it, " + Fmt.num(without) + " µs without)",
                    "", "×" + Fmt.ratio(with / without), Report.Verdict.INFO);
        }
        env.report.note(id + ": " + sizes);
    }

    /**
     * Loads the stores, batch by batch, alternating which goes first; counts each probe's matches on the way.
     *
     * @return seconds writing messages with the index, without it (0 without a second store), and creating
     *     the threads
     */
    private double[] load(Target target, SearchCorpus corpus, List<Probe> probes, IntFunction<String> ownerOf) {
        long with = 0;
        long without = 0;
        long creating = 0;
        long started = System.nanoTime();
        JdbiChatStore indexed = target.indexed();
        JdbiChatStore unindexed = target.unindexed();
        for (int from = 0, batch = 0; from < corpus.threads; from += BATCH_THREADS, batch++) {
            StoreBatch.Builder builder = StoreBatch.builder();
            for (int t = from; t < Math.min(corpus.threads, from + BATCH_THREADS); t++) {
                long t0 = System.nanoTime();
                indexed.createThread(corpus.thread(t, ownerOf.apply(t)));
                if (unindexed != null) {
                    unindexed.createThread(corpus.thread(t, ownerOf.apply(t)));
                }
                creating += System.nanoTime() - t0;
                for (Message message : corpus.messages(t)) {
                    builder.message(message);
                    count(probes, t, text(message));
                }
            }
            StoreBatch built = builder.build();
            boolean indexedFirst = batch % 2 == 0 || unindexed == null;
            long a = System.nanoTime();
            (indexedFirst ? indexed : unindexed).write(built);
            long b = System.nanoTime();
            if (unindexed != null) {
                (indexedFirst ? unindexed : indexed).write(built);
            }
            long c = System.nanoTime();
            with += indexedFirst ? b - a : c - b;
            without += unindexed == null ? 0 : indexedFirst ? c - b : b - a;
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
        if (probes.isEmpty()) {
            return;
        }
        List<String> words = Arrays.asList(text.toLowerCase(Locale.ROOT).split("[^\\p{L}\\p{N}]+"));
        String joined = " " + String.join(" ", words) + " ";
        for (Probe probe : probes) {
            boolean match = probe.query.words().stream().allMatch(w -> words.stream().anyMatch(x -> x.startsWith(w)))
                    && probe.query.phrases().stream().allMatch(p -> joined.contains(" " + p + " "));
            if (match) {
                probe.messages++;
                probe.threads.set(thread);
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
                        + "only, paid by both stores, so not in the index's write cost): %.2f µs per message (%,d "
                        + "messages, third round; %d)", perMessage, texts.size(), sink % 10));
            }
        }
    }

    // ------------------------------------------------------------------ the databases

    private Target sqlite(boolean withUnindexed) throws SQLException {
        Path withFile = env.databases.newSqliteFile("search");
        Path withoutFile = withUnindexed ? env.databases.newSqliteFile("search-unindexed") : null;
        JdbiChatStore indexed = JdbiChatStore.sqlite(withFile).build();
        JdbiChatStore unindexed = withoutFile == null ? null : JdbiChatStore.sqlite(withoutFile).build();
        if (withoutFile != null) {
            try (Connection c = Databases.sqliteConnection(withoutFile); Statement s = c.createStatement()) {
                for (String trigger : List.of("messages_search_insert", "messages_search_update", "messages_search_delete",
                        "threads_search_insert", "threads_search_update", "threads_search_delete")) {
                    s.execute("DROP TRIGGER parley_" + trigger);
                }
                s.execute("DROP TABLE parley_message_search");
                s.execute("DROP TABLE parley_title_search");
                s.execute("DROP INDEX parley_messages_search_thread");
            }
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
            public @Nullable JdbiChatStore unindexed() {
                return without;
            }

            @Override
            public String sizes() throws Exception {
                return String.format(Locale.ROOT, "SQLite file with the index %s%s; searchable text %s",
                        Fmt.mb(fileSize(withFile)), withoutFile == null ? "" : ", without " + Fmt.mb(fileSize(withoutFile)),
                        Fmt.mb(query(withFile, "SELECT SUM(LENGTH(search_text)) FROM parley_messages")));
            }

            @Override
            public void dropUnindexed() throws Exception {
                if (without != null) {
                    without.close();
                    without = null;
                    Files.deleteIfExists(withoutFile);
                    Files.deleteIfExists(Path.of(withoutFile + "-wal"));
                }
            }

            @Override
            public void close() throws Exception {
                indexed.close();
                dropUnindexed();
                Files.deleteIfExists(withFile);
                Files.deleteIfExists(Path.of(withFile + "-wal"));
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

    private Target postgres(boolean withUnindexed) throws SQLException {
        HikariDataSource withPool = env.databases.pool(env.databases.newPostgresSchema("search"), 10);
        HikariDataSource withoutPool = withUnindexed
                ? env.databases.pool(env.databases.newPostgresSchema("search_unindexed"), 10) : null;
        JdbiChatStore indexed = JdbiChatStore.builder(withPool).build();
        JdbiChatStore unindexed = withoutPool == null ? null : JdbiChatStore.builder(withoutPool).build();
        if (withoutPool != null) {
            execute(withoutPool, "DROP INDEX parley_messages_search");
            execute(withoutPool, "DROP INDEX parley_threads_search");
            execute(withoutPool, "DROP INDEX parley_messages_search_newest");
        }
        return new Target() {
            private JdbiChatStore without = unindexed;
            private boolean dropped;

            @Override
            public String name() {
                return "PostgreSQL";
            }

            @Override
            public JdbiChatStore indexed() {
                return indexed;
            }

            @Override
            public @Nullable JdbiChatStore unindexed() {
                return without;
            }

            @Override
            public String sizes() throws Exception {
                return String.format(Locale.ROOT, "PostgreSQL parley_messages with its indexes %s (of which the GIN index "
                        + "%s, the owner's B-tree %s, the tsvectors %s)%s",
                        Fmt.mb(value(withPool, "SELECT pg_total_relation_size('parley_messages')")),
                        Fmt.mb(value(withPool, "SELECT pg_relation_size('parley_messages_search')")),
                        Fmt.mb(value(withPool, "SELECT pg_relation_size('parley_messages_search_newest')")),
                        Fmt.mb(value(withPool, "SELECT SUM(pg_column_size(search_vector)) FROM parley_messages")),
                        withoutPool == null ? "" : ", without the search indexes " + Fmt.mb(value(withoutPool,
                                "SELECT pg_total_relation_size('parley_messages')")));
            }

            @Override
            public void dropUnindexed() throws Exception {
                if (without != null) {
                    without.close();
                    without = null;
                    dropSchema(withoutPool);
                }
                execute(withPool, "ANALYZE");
            }

            @Override
            public void close() throws Exception {
                indexed.close();
                if (without != null) {
                    without.close();
                }
                if (!dropped) {
                    dropped = true;
                    dropSchema(withPool);
                }
            }

            private void dropSchema(HikariDataSource pool) throws SQLException {
                String schema = value(pool, "SELECT current_schema()");
                execute(pool, "DROP SCHEMA " + schema + " CASCADE");
                env.databases.closePool(pool);
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
