package dev.parley.bench;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.ThreadView;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * Section 6, history: opening a thread (its newest page, {@code ChatEngine.getThread}, the default page of
 * 50 messages with their steps) of 100, 1 000 and 10 000 user and assistant messages, and replaying the
 * last 1 000 events of a run of 1 000 and of 100 000 events ({@code ChatEngine.subscribe} after a cursor,
 * until the terminal event), on SQLite and PostgreSQL. Each figure is the median of repeated calls after a
 * warm-up, with the 95th percentile.
 */
final class HistoryBench {
    private static final int WARMUP = 20;
    private static final int REPEAT = 50;
    private static final RuntimeAdapter NO_RUNTIME = request -> {
        throw new UnsupportedOperationException("the history bench starts no run");
    };

    private final Env env;

    HistoryBench(Env env) {
        this.env = env;
    }

    void run() throws Exception {
        int messages = env.options.historyMessages;
        int events = env.options.historyEvents;
        System.out.println("== 6. History: threads of up to " + messages + " messages, a run of " + events + " events");
        Map<String, double[]> sqlite = measure("SQLite", () -> env.databases.newSqliteStore("history"), messages, events);
        Map<String, double[]> postgres = measure("PostgreSQL", () -> env.databases.newPostgresStore("history"), messages, events);
        report("6a", "SQLite", sqlite, messages, events);
        report("6b", "PostgreSQL", postgres, messages, events);
    }

    private void report(String id, String db, Map<String, double[]> r, int messages, int events) {
        List<String> sizes = new ArrayList<>(r.keySet());
        StringBuilder pages = new StringBuilder();
        for (String key : sizes) {
            if (key.startsWith("page ")) {
                if (pages.length() > 0) {
                    pages.append(" / ");
                }
                pages.append(Fmt.ms(r.get(key)[0]));
            }
        }
        double small = r.get("page 100")[0];
        double big = r.get("page " + messages)[0];
        env.report.row(id + "1", db + ": open a thread (newest page of 50 + steps) of 100 / 1 000 / " + messages + " messages",
                pages + " (median)", "independent of length", "×" + Fmt.ratio(big / small) + " (" + messages + " vs 100)",
                big / small <= 2.0 ? Report.Verdict.MET : Report.Verdict.MISSED);
        double[] shortRun = r.get("replay 1000 of 1000");
        double[] longRun = r.get("replay 1000 of " + events);
        env.report.row(id + "2", db + ": replay the last 1 000 events of a run of 1 000 / " + events + " events (subscribe → terminal)",
                Fmt.ms(shortRun[0]) + " / " + Fmt.ms(longRun[0]) + " (median; p95 " + Fmt.ms(longRun[1]) + ")",
                "independent of length", "×" + Fmt.ratio(longRun[0] / shortRun[0]),
                longRun[0] / shortRun[0] <= 2.0 ? Report.Verdict.MET : Report.Verdict.MISSED);
    }

    private Map<String, double[]> measure(String db, Supplier<JdbiChatStore> stores, int messages, int events) throws Exception {
        Map<String, double[]> results = new LinkedHashMap<>();
        try (JdbiChatStore store = stores.get()) {
            List<Integer> sizes = new ArrayList<>();
            for (int size : new int[] {100, 1000, messages}) {
                if (!sizes.contains(size)) {
                    sizes.add(size);
                }
            }
            Map<Integer, String> threads = new LinkedHashMap<>();
            long start = System.nanoTime();
            for (int size : sizes) {
                threads.put(size, buildThread(store, size));
            }
            String shortRun = buildRun(store, threads.get(sizes.get(0)), 1000);
            String longRun = buildRun(store, threads.get(sizes.get(0)), events);
            System.out.printf("   %s: data written in %.1f s%n", db, (System.nanoTime() - start) / 1e9);
            try (ChatEngine engine = ChatEngine.builder().runtime(NO_RUNTIME).store(store).build()) {
                for (int size : sizes) {
                    String thread = threads.get(size);
                    double[] t = time(() -> {
                        ThreadView view = engine.getThread(Env.OWNER, thread);
                        if (view.messages().size() < Math.min(50, size)) {
                            throw new IllegalStateException("a page of " + view.messages().size() + " messages");
                        }
                    });
                    results.put("page " + size, t);
                    System.out.printf("   %s: newest page of a %d-message thread: median %s, p95 %s%n", db, size, Fmt.ms(t[0]),
                            Fmt.ms(t[1]));
                }
                Map<String, Integer> replays = new LinkedHashMap<>();
                replays.put(shortRun, 1000);
                replays.put(longRun, events);
                for (Map.Entry<String, Integer> run : replays.entrySet()) {
                    long after = run.getValue() - 1000;
                    double[] t = time(() -> {
                        EngineSubscriber s = new EngineSubscriber(engine, run.getKey(), null);
                        engine.subscribe(Env.OWNER, run.getKey(), after).subscribe(s);
                        s.await(60);
                        if (s.textDeltas() != 999) {
                            throw new IllegalStateException("replayed " + s.textDeltas() + " deltas");
                        }
                    });
                    results.put("replay 1000 of " + run.getValue(), t);
                    System.out.printf("   %s: replay the last 1 000 of %d events: median %s, p95 %s%n", db, run.getValue(),
                            Fmt.ms(t[0]), Fmt.ms(t[1]));
                }
            }
        }
        return results;
    }

    private interface Op {
        void run() throws Exception;
    }

    /** Median and 95th percentile in milliseconds, after a warm-up. */
    private static double[] time(Op op) throws Exception {
        for (int i = 0; i < WARMUP; i++) {
            op.run();
        }
        double[] ms = new double[REPEAT];
        for (int i = 0; i < REPEAT; i++) {
            long start = System.nanoTime();
            op.run();
            ms[i] = (System.nanoTime() - start) / 1e6;
        }
        Arrays.sort(ms);
        return new double[] {ms[REPEAT / 2], ms[(int) Math.ceil(REPEAT * 0.95) - 1]};
    }

    /** A thread of {@code size} top-level messages: user, answer (with one thinking step), user, answer … */
    private static String buildThread(JdbiChatStore store, int size) {
        String threadId = UUID.randomUUID().toString();
        Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
        store.createThread(new ChatThread(threadId, Env.OWNER, "history " + size, null, null, null, ThreadStatus.ACTIVE, t0, t0));
        StoreBatch.Builder batch = StoreBatch.builder();
        String parent = null;
        int inBatch = 0;
        String answer = "An answer of a realistic length: ".repeat(8);
        for (int turn = 0; turn < size / 2; turn++) {
            Instant at = t0.plusSeconds(turn);
            String runId = UUID.randomUUID().toString();
            String userId = UUID.randomUUID().toString();
            String assistantId = UUID.randomUUID().toString();
            batch.message(new UserMessage(userId, threadId, runId, parent, MessageStatus.COMPLETED, at, "question " + turn));
            batch.message(new AssistantMessage(assistantId, threadId, runId, userId, MessageStatus.COMPLETED, at, answer + turn,
                    null, null));
            batch.message(new ThinkingMessage(UUID.randomUUID().toString(), threadId, runId, assistantId, MessageStatus.COMPLETED,
                    at, "thinking about " + turn));
            parent = assistantId;
            inBatch += 3;
            if (inBatch >= 3000) {
                store.write(batch.build());
                batch = StoreBatch.builder();
                inBatch = 0;
            }
        }
        if (inBatch > 0) {
            store.write(batch.build());
        }
        return threadId;
    }

    /** A finished run of {@code events} events: text deltas, then run_finished. */
    private static String buildRun(JdbiChatStore store, String threadId, int events) {
        String runId = UUID.randomUUID().toString();
        String assistantId = UUID.randomUUID().toString();
        Instant at = Instant.parse("2026-01-02T00:00:00Z");
        store.write(StoreBatch.builder().run(new Run(runId, threadId, Env.OWNER, RunStatus.SUCCEEDED, null, assistantId, "long",
                null, null, null, Map.of(), at, at, at, null, null, null)).build());
        StoreBatch.Builder batch = StoreBatch.builder();
        for (int seq = 1; seq <= events; seq++) {
            AgentStreamEvent e = seq == events ? new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null)
                    : new AgentStreamEvent.TextDelta(assistantId, "t" + seq + " ");
            batch.event(new RunEvent(runId, seq, at.toEpochMilli(), e));
            if (seq % 5000 == 0) {
                store.write(batch.build());
                batch = StoreBatch.builder();
            }
        }
        store.write(batch.build());
        return runId;
    }
}
