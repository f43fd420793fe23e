package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.store.StoreBatch;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The event log's compact rows: a write's consecutive deltas of one message or tool call are one row, and
 * every read sees exactly the events that were written — from every cursor, with every limit, across spans,
 * single-event rows and gaps in the seqs — and a write of seqs already stored, alone or in other spans,
 * keeps the first.
 */
abstract class EventLogBehaviourTest {
    static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");
    static final int[] LIMITS = {1, 7, 600};
    TestDatabase database;
    JdbiChatStore store;

    abstract TestDatabase createDatabase();

    @BeforeEach
    void open() {
        database = createDatabase();
        store = database.store().build();
        store.createThread(new ChatThread("t", "alice", null, null, null, null, ThreadStatus.ACTIVE, T0, T0));
        store.write(StoreBatch.builder().run(run("r")).run(run("other")).build());
    }

    @AfterEach
    void close() {
        store.close();
        database.close();
    }

    private static Run run(String id) {
        return new Run(id, "t", "alice", RunStatus.SUCCEEDED, null, id + "-a", "hello", null, null, null, Map.of(), T0,
                T0, T0, null, null, null);
    }

    private static RunEvent text(String runId, long seq, long at, String messageId, String delta) {
        return new RunEvent(runId, seq, at, new AgentStreamEvent.TextDelta(messageId, delta));
    }

    /** Deltas of every kind, texts that need escaping, time going back and forth, other events between. */
    private static List<RunEvent> mixedLog(String runId) {
        List<RunEvent> log = new ArrayList<>();
        long at = T0.toEpochMilli();
        log.add(new RunEvent(runId, 1, at, new AgentStreamEvent.RunStarted("t", runId, runId + "-a")));
        String[] texts = {"plain ", "", "quote \" and \\ back", "nul \u0000 tab \t", "emoji 😀 ✓", "new\nline"};
        for (int i = 0; i < 1_300; i++) {
            long seq = log.size() + 1;
            at += i % 7 == 3 ? -2 : i % 5;
            AgentStreamEvent event;
            if (i < 40) {
                event = new AgentStreamEvent.ThinkingDelta(runId + ":thinking:1", "think " + i);
            } else if (i == 40 || i == 700) {
                event = new AgentStreamEvent.StatusUpdate(runId + ":s" + i, "info", "a status between");
            } else if (i > 900 && i < 930) {
                event = new AgentStreamEvent.ToolCallArgs("call-1", "{\"a\":" + i + "}");
            } else if (i >= 930 && i < 940) {
                event = new AgentStreamEvent.TextDelta(runId + "-other-message", "o" + i);
            } else {
                event = new AgentStreamEvent.TextDelta(runId + "-a", texts[i % texts.length] + i);
            }
            log.add(new RunEvent(runId, seq, at, event));
        }
        log.add(new RunEvent(runId, log.size() + 1, at + 1, new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null)));
        return log;
    }

    private void writeInBatches(List<RunEvent> events, int... sizes) {
        int from = 0;
        for (int i = 0; from < events.size(); i++) {
            int size = sizes[i % sizes.length];
            store.write(StoreBatch.builder().events(events.subList(from, Math.min(events.size(), from + size))).build());
            from += size;
        }
    }

    /**
     * Every cursor from before the first seq to after the last, with limits within and beyond a span, reads
     * exactly the log; so does the whole log at once.
     */
    private void assertEveryCursorReads(String runId, List<RunEvent> log) {
        List<Long> cursors = new ArrayList<>();
        cursors.add(0L);
        for (RunEvent event : log) {
            cursors.add(event.seq() - 1);
            cursors.add(event.seq());
        }
        cursors.add(log.get(log.size() - 1).seq() + 100);
        for (long cursor : cursors.stream().distinct().collect(Collectors.toList())) {
            List<RunEvent> after = log.stream().filter(e -> e.seq() > cursor).collect(Collectors.toList());
            for (int limit : LIMITS) {
                List<RunEvent> read = store.readEvents(runId, cursor, limit);
                List<RunEvent> expected = after.subList(0, Math.min(limit, after.size()));
                if (!read.equals(expected)) {
                    assertThat(read).as("after %d, up to %d", cursor, limit).containsExactlyElementsOf(expected);
                }
            }
        }
        assertThat(store.readEvents(runId, 0, Integer.MAX_VALUE)).containsExactlyElementsOf(log);
        assertThat(store.lastSeq(runId)).isEqualTo(log.get(log.size() - 1).seq());
    }

    private long rows(String runId) {
        return Jdbi.create(database.dataSource()).withHandle(h -> h.createQuery(
                "SELECT COUNT(*) FROM parley_run_events WHERE run_id = :runId").bind("runId", runId).mapTo(Long.class).one());
    }

    private long payloadChars(String runId) {
        return Jdbi.create(database.dataSource()).withHandle(h -> h.createQuery(
                "SELECT SUM(LENGTH(payload)) FROM parley_run_events WHERE run_id = :runId").bind("runId", runId)
                .mapTo(Long.class).one());
    }

    @Test
    void aMixedLogReadsExactlyFromEveryCursorAndItsDeltasShareRows() {
        List<RunEvent> log = mixedLog("r");
        writeInBatches(log, 1_000, 3, 1, 250);
        List<RunEvent> other = mixedLog("other");
        store.write(StoreBatch.builder().events(other).build());

        assertEveryCursorReads("r", log);
        assertThat(store.readEvents("other", 0, Integer.MAX_VALUE)).containsExactlyElementsOf(other);
        assertThat(rows("r")).as("deltas share rows").isLessThan(40);
        long envelopes = log.stream().mapToLong(e -> ChatJson.shared().write(e.event()).length()).sum();
        assertThat(payloadChars("r")).as("fewer bytes than an envelope per event").isLessThan(envelopes / 2);
    }

    @Test
    void interleavedRunsInOneBatchEachGetTheirSpans() {
        List<RunEvent> batch = new ArrayList<>();
        for (int seq = 1; seq <= 300; seq++) {
            batch.add(text("r", seq, T0.toEpochMilli() + seq, "r-a", "r" + seq));
            batch.add(text("other", seq, T0.toEpochMilli() - seq, "other-a", "o" + seq));
        }
        store.write(StoreBatch.builder().events(batch).build());

        assertEveryCursorReads("r", batch.stream().filter(e -> e.runId().equals("r")).collect(Collectors.toList()));
        assertEveryCursorReads("other", batch.stream().filter(e -> e.runId().equals("other")).collect(Collectors.toList()));
        assertThat(rows("r")).isEqualTo(1);
    }

    @Test
    void gapsInTheSeqsAreReadAcrossAndLimitsCountEvents() {
        List<RunEvent> log = new ArrayList<>();
        for (long seq = 1; seq <= 10; seq++) {
            log.add(text("r", seq, seq, "m", "a" + seq));
        }
        for (long seq = 5_000; seq <= 5_700; seq++) {
            log.add(text("r", seq, seq, "m", "b" + seq));
        }
        log.add(new RunEvent("r", 9_000, 9_000, new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null)));
        for (long seq = 9_001; seq <= 9_003; seq++) {
            log.add(text("r", seq, seq, "m", "c" + seq));
        }
        store.write(StoreBatch.builder().events(log).build());

        assertEveryCursorReads("r", log);
        assertThat(store.readEvents("r", 3, 5)).extracting(RunEvent::seq).containsExactly(4L, 5L, 6L, 7L, 8L);
        assertThat(store.readEvents("r", 8, 5)).extracting(RunEvent::seq).containsExactly(9L, 10L, 5_000L, 5_001L, 5_002L);
        assertThat(store.readEvents("r", 5_699, 3)).extracting(RunEvent::seq).containsExactly(5_700L, 9_000L, 9_001L);
    }

    /**
     * What a retry writes again — the same batch after a commit whose answer was lost, its events one by
     * one (the batch writer's isolation), a later batch starting inside a stored span, a repeat within a
     * batch — keeps every stored event as it is and stores the new ones, and no two rows ever hold a seq.
     */
    @Test
    void eventsWrittenAgainKeepTheFirstWhateverRowsTheyWereStoredIn() {
        List<RunEvent> first = new ArrayList<>();
        for (long seq = 1; seq <= 600; seq++) {
            first.add(text("r", seq, T0.toEpochMilli() + seq, "r-a", "first " + seq));
        }
        store.write(StoreBatch.builder().events(first).build());
        store.write(StoreBatch.builder().events(first).build());
        for (long seq : new long[] {1, 2, 300, 511, 512, 513, 599, 600}) {
            store.write(StoreBatch.builder().event(text("r", seq, 0, "r-a", "again " + seq)).build());
        }
        List<RunEvent> overlapping = new ArrayList<>();
        for (long seq = 550; seq <= 700; seq++) {
            overlapping.add(text("r", seq, T0.toEpochMilli() + seq, "r-a", "second " + seq));
        }
        overlapping.add(text("r", 650, 0, "r-a", "a repeat in the batch"));
        store.write(StoreBatch.builder().events(overlapping).build());
        store.write(StoreBatch.builder().event(text("r", 702, 0, "r-a", "alone"))
                .events(List.of(text("r", 701, 1, "r-a", "x"), text("r", 702, 2, "r-a", "y"), text("r", 703, 3, "r-a", "z")))
                .build());

        List<RunEvent> expected = new ArrayList<>(first);
        expected.addAll(overlapping.subList(51, 151));
        expected.add(text("r", 701, 1, "r-a", "x"));
        expected.add(text("r", 702, 0, "r-a", "alone"));
        expected.add(text("r", 703, 3, "r-a", "z"));
        assertEveryCursorReads("r", expected);
        long overlaps = Jdbi.create(database.dataSource()).withHandle(h -> h.createQuery(
                "SELECT COUNT(*) FROM parley_run_events a JOIN parley_run_events b ON a.run_id = b.run_id "
                        + "AND a.seq < b.seq AND a.seq >= COALESCE(b.first_seq, b.seq)").mapTo(Long.class).one());
        assertThat(overlaps).as("rows holding the same seq").isZero();
    }

    @Test
    void singleEventRowsStoredFirstAreNotCoveredBySpansWrittenLater() {
        for (long seq = 1; seq <= 20; seq += 2) {
            store.write(StoreBatch.builder().event(text("r", seq, seq, "r-a", "odd " + seq)).build());
        }
        List<RunEvent> all = new ArrayList<>();
        for (long seq = 1; seq <= 30; seq++) {
            all.add(text("r", seq, seq, "r-a", "all " + seq));
        }
        store.write(StoreBatch.builder().events(all).build());

        List<RunEvent> expected = new ArrayList<>();
        for (RunEvent event : all) {
            expected.add(event.seq() <= 20 && event.seq() % 2 == 1 ? text("r", event.seq(), event.seq(), "r-a",
                    "odd " + event.seq()) : event);
        }
        assertEveryCursorReads("r", expected);
    }

    @Test
    void deletesAndCompactionRemoveWholeSpans() {
        List<RunEvent> log = mixedLog("r");
        store.write(StoreBatch.builder().events(log).build());
        store.write(StoreBatch.builder().events(mixedLog("other")).build());

        List<RunEvent> kept = List.of(log.get(0), new RunEvent("r", 2, log.get(0).timestamp(),
                new AgentStreamEvent.StatusUpdate("r:retention", "info", "compacted")), log.get(log.size() - 1));
        store.compactRunEvents("r", kept, T0);
        assertEveryCursorReads("r", kept);
        assertThat(rows("r")).isEqualTo(3);

        assertThat(store.deleteThread("t")).isTrue();
        assertThat(store.readEvents("other", 0, 10)).isEmpty();
        assertThat(store.lastSeq("other")).isZero();
        assertThat(rows("other")).isZero();
    }
}
