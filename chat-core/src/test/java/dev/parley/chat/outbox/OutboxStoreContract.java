package dev.parley.chat.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadGoneException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link ChatStore} that keeps an outbox ({@link OutboxStore}) must have: entries stored in
 * the batch's transaction or not at all, claimed by one instance at a time under a lease that expires, retried,
 * failed, counted, and removed with their thread. A store module extends this class once per database and
 * returns a fresh, empty store from {@link #createStore()}.
 */
public abstract class OutboxStoreContract {
    protected static final Instant T0 = Instant.parse("2026-12-03T10:00:00.000Z");

    protected ChatStore chatStore;
    protected OutboxStore store;

    /** A new store with no data in it, implementing {@link OutboxStore}. */
    protected abstract ChatStore createStore();

    @BeforeEach
    void openStore() {
        chatStore = createStore();
        assertThat(chatStore).as("the store keeps an outbox").isInstanceOf(OutboxStore.class);
        store = (OutboxStore) chatStore;
    }

    @AfterEach
    void closeStore() {
        chatStore.close();
    }

    private void thread(String id) {
        chatStore.createThread(new ChatThread(id, "alice", null, null, null, null, ThreadStatus.ACTIVE, T0, T0));
    }

    private static Run run(String id, String threadId, RunStatus status) {
        return new Run(id, threadId, "alice", status, id + "-u", id + "-a", "hello", null, null, null, Map.of(), T0, T0,
                status.isTerminal() ? T0.plusSeconds(5) : null, null, null, null);
    }

    /** Stores a run that ended SUCCEEDED with its end's entry for destination {@code to}; the entry. */
    private OutboxEntry endedRun(String runId, String threadId, String to) {
        Run ended = run(runId, threadId, RunStatus.SUCCEEDED);
        OutboxEntry entry = OutboxEntry.runEnded(ended, to);
        chatStore.write(StoreBatch.builder().run(ended).outbox(entry).build());
        return entry;
    }

    @Test
    void anEntryIsStoredWithItsBatchAndClaimedAsItWasWritten() {
        thread("t1");
        Run waiting = run("r1", "t1", RunStatus.WAITING_FOR_INPUT);
        PendingInput input = new PendingInput("r1", "i1", "m1", ApprovalRequest.of("refund", "{}", "refund 5 EUR"),
                null, null, InputState.PENDING, null, T0.plusSeconds(1), null);
        OutboxEntry asked = OutboxEntry.inputRequested(waiting, input, "ops");
        chatStore.write(StoreBatch.builder().run(waiting).input(input).outbox(asked).build());

        assertThat(store.countOutbox()).isEqualTo(new OutboxStore.Counts(1, 0));
        List<OutboxEntry> claimed = store.claimOutbox("host-a", T0.plusSeconds(2), T0.plusSeconds(60), 10);
        assertThat(claimed).containsExactly(asked);
        assertThat(claimed.get(0).inputKind()).isEqualTo(InputKind.APPROVAL);
        assertThat(claimed.get(0).type()).isEqualTo(OutboxEventType.INPUT_REQUESTED);
    }

    @Test
    void anEntryIsClaimedByOneInstanceUntilItsLeaseEnds() {
        thread("t1");
        OutboxEntry entry = endedRun("r1", "t1", "ops");
        assertThat(store.claimOutbox("host-a", T0.plusSeconds(5), T0.plusSeconds(65), 10)).containsExactly(entry);
        assertThat(store.claimOutbox("host-b", T0.plusSeconds(30), T0.plusSeconds(90), 10))
                .as("leased by host-a").isEmpty();
        assertThat(store.claimOutbox("host-a", T0.plusSeconds(30), T0.plusSeconds(90), 10))
                .as("a claim held is not claimed again").isEmpty();

        assertThat(store.claimOutbox("host-b", T0.plusSeconds(66), T0.plusSeconds(120), 10))
                .as("host-a's lease ended").containsExactly(entry);
        assertThat(store.completeOutbox(entry.messageId(), "ops", "host-a")).as("host-a lost its claim").isFalse();
        assertThat(store.retryOutbox(entry.messageId(), "ops", "host-a", 1, T0)).isFalse();
        assertThat(store.failOutbox(entry.messageId(), "ops", "host-a", 1, T0)).isFalse();
        assertThat(store.completeOutbox(entry.messageId(), "ops", "host-b")).isTrue();
        assertThat(store.completeOutbox(entry.messageId(), "ops", "host-b")).as("gone").isFalse();
        assertThat(store.countOutbox()).isEqualTo(new OutboxStore.Counts(0, 0));
        assertThat(store.claimOutbox("host-c", T0.plusSeconds(500), T0.plusSeconds(600), 10)).isEmpty();
    }

    @Test
    void claimsTakeTheOldestDueFirstUpToTheLimit() {
        thread("t1");
        OutboxEntry first = endedRun("r1", "t1", "ops");
        Run later = new Run("r2", "t1", "alice", RunStatus.FAILED, null, "r2-a", "x", null, null, null, Map.of(), T0,
                T0, T0.plusSeconds(9), null, null, null);
        OutboxEntry second = OutboxEntry.runEnded(later, "ops");
        OutboxEntry toAudit = OutboxEntry.runEnded(later, "audit");
        chatStore.write(StoreBatch.builder().run(later).outbox(second).outbox(toAudit).build());
        assertThat(second.messageId()).as("one event, one id for every destination").isEqualTo(toAudit.messageId());

        assertThat(store.claimOutbox("host-a", T0.plusSeconds(7), T0.plusSeconds(60), 10))
                .as("only what is due").containsExactly(first);
        List<OutboxEntry> rest = store.claimOutbox("host-b", T0.plusSeconds(10), T0.plusSeconds(60), 1);
        assertThat(rest).hasSize(1).first().isIn(second, toAudit);
        assertThat(store.claimOutbox("host-b", T0.plusSeconds(10), T0.plusSeconds(60), 0)).isEmpty();
        assertThat(store.countOutbox().pending()).isEqualTo(3);
    }

    @Test
    void aRetriedEntryWaitsForItsNextAttemptAndAFailedOneIsCountedUntilPurged() {
        thread("t1");
        OutboxEntry entry = endedRun("r1", "t1", "ops");
        store.claimOutbox("host-a", T0.plusSeconds(5), T0.plusSeconds(65), 10);
        assertThat(store.retryOutbox(entry.messageId(), "ops", "host-a", 1, T0.plusSeconds(20))).isTrue();
        assertThat(store.claimOutbox("host-b", T0.plusSeconds(19), T0.plusSeconds(80), 10)).as("not due yet").isEmpty();
        List<OutboxEntry> again = store.claimOutbox("host-b", T0.plusSeconds(20), T0.plusSeconds(80), 10);
        assertThat(again).containsExactly(entry.retried(1, T0.plusSeconds(20)));

        assertThat(store.failOutbox(entry.messageId(), "ops", "host-b", 2, T0.plusSeconds(21))).isTrue();
        assertThat(store.countOutbox()).isEqualTo(new OutboxStore.Counts(0, 1));
        assertThat(store.claimOutbox("host-c", T0.plusSeconds(999), T0.plusSeconds(1999), 10)).isEmpty();
        assertThat(store.completeOutbox(entry.messageId(), "ops", "host-b")).as("failed for good").isFalse();
        assertThat(store.purgeFailedOutbox(T0.plusSeconds(21))).isZero();
        assertThat(store.purgeFailedOutbox(T0.plusSeconds(22))).isEqualTo(1);
        assertThat(store.countOutbox()).isEqualTo(new OutboxStore.Counts(0, 0));
    }

    @Test
    void anEntryWrittenAgainIsLeftAsItIs() {
        thread("t1");
        OutboxEntry entry = endedRun("r1", "t1", "ops");
        store.claimOutbox("host-a", T0.plusSeconds(5), T0.plusSeconds(65), 10);
        store.retryOutbox(entry.messageId(), "ops", "host-a", 3, T0.plusSeconds(30));
        chatStore.write(StoreBatch.builder().run(run("r1", "t1", RunStatus.SUCCEEDED)).outbox(entry).build());
        assertThat(store.countOutbox().pending()).isEqualTo(1);
        assertThat(store.claimOutbox("host-a", T0.plusSeconds(30), T0.plusSeconds(90), 10))
                .containsExactly(entry.retried(3, T0.plusSeconds(30)));
    }

    @Test
    void aBatchTheStoreRefusesLeavesNoEntry() {
        thread("t1");
        chatStore.write(StoreBatch.builder().run(run("r0", "t1", RunStatus.RUNNING)).build());
        Run second = run("r1", "t1", RunStatus.RUNNING);
        Run ended = run("r2", "t1", RunStatus.SUCCEEDED);
        assertThatThrownBy(() -> chatStore.write(StoreBatch.builder().run(ended).run(second)
                .outbox(OutboxEntry.runEnded(ended, "ops")).build()))
                .as("a second active run of the thread")
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT));
        assertThat(store.countOutbox()).isEqualTo(new OutboxStore.Counts(0, 0));
        assertThat(chatStore.findRun("r2")).as("nor the run's end").isEmpty();

        Run gone = run("r3", "no-such-thread", RunStatus.CANCELLED);
        assertThatThrownBy(() -> chatStore.write(StoreBatch.builder().run(gone)
                .outbox(OutboxEntry.runEnded(gone, "ops")).build()))
                .isInstanceOf(ThreadGoneException.class);
        assertThat(store.countOutbox()).isEqualTo(new OutboxStore.Counts(0, 0));
        assertThat(store.claimOutbox("host-a", T0.plusSeconds(999), T0.plusSeconds(1999), 10)).isEmpty();
    }

    /** Instances claiming at once each get different entries, and together all of them. */
    @Test
    void instancesClaimingAtOnceNeverGetTheSameEntry() throws Exception {
        thread("t1");
        int count = 60;
        StoreBatch.Builder batch = StoreBatch.builder();
        for (int i = 0; i < count; i++) {
            Run ended = run("r" + i, "t1", RunStatus.SUCCEEDED);
            batch.run(ended).outbox(OutboxEntry.runEnded(ended, "ops"));
        }
        chatStore.write(batch.build());
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        try {
            List<java.util.concurrent.Future<List<OutboxEntry>>> claims = new java.util.ArrayList<>();
            for (int host = 0; host < 4; host++) {
                String instance = "host-" + host;
                claims.add(pool.submit(() -> {
                    List<OutboxEntry> mine = new java.util.ArrayList<>();
                    List<OutboxEntry> got;
                    do {
                        got = store.claimOutbox(instance, T0.plusSeconds(10), T0.plusSeconds(70), 3);
                        mine.addAll(got);
                    } while (!got.isEmpty());
                    return mine;
                }));
            }
            List<String> all = new java.util.ArrayList<>();
            for (java.util.concurrent.Future<List<OutboxEntry>> claim : claims) {
                claim.get(60, java.util.concurrent.TimeUnit.SECONDS).forEach(entry -> all.add(entry.messageId()));
            }
            assertThat(all).as("every entry claimed once").hasSize(count).doesNotHaveDuplicates();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void deletingAThreadRemovesItsEntriesPendingClaimedOrFailed() {
        thread("t1");
        thread("t2");
        OutboxEntry claimed = endedRun("r1", "t1", "ops");
        Run failed = run("r2", "t1", RunStatus.FAILED);
        OutboxEntry failing = OutboxEntry.runEnded(failed, "ops");
        chatStore.write(StoreBatch.builder().run(failed).outbox(failing).outbox(OutboxEntry.runEnded(failed, "audit"))
                .build());
        OutboxEntry kept = endedRun("r3", "t2", "ops");
        assertThat(store.claimOutbox("host-a", T0.plusSeconds(5), T0.plusSeconds(65), 10)).hasSize(4);
        store.failOutbox(failing.messageId(), "ops", "host-a", 1, T0.plusSeconds(6));
        store.failOutbox(claimed.messageId(), "ops", "host-a", 1, T0.plusSeconds(6));
        store.retryOutbox(kept.messageId(), "ops", "host-a", 1, T0.plusSeconds(10));
        kept = kept.retried(1, T0.plusSeconds(10));

        assertThat(chatStore.deleteThread("t1")).isTrue();
        assertThat(store.countOutbox().failed()).isZero();
        List<OutboxEntry> left = store.claimOutbox("host-b", T0.plusSeconds(999), T0.plusSeconds(1999), 10);
        assertThat(left).containsExactly(kept);
        assertThat(store.countOutbox()).isEqualTo(new OutboxStore.Counts(1, 0));
    }
}
