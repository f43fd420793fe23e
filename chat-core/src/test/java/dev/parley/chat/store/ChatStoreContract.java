package dev.parley.chat.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.ClientToolAnswer;
import dev.parley.chat.input.ClientToolRequest;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.ApprovalMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.ClarifyMessage;
import dev.parley.chat.model.ErrorInfo;
import dev.parley.chat.model.ErrorMessage;
import dev.parley.chat.model.Feedback;
import dev.parley.chat.model.FeedbackRating;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.StatusMessage;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.TodoItem;
import dev.parley.chat.model.TodoMessage;
import dev.parley.chat.model.TodoStatus;
import dev.parley.chat.model.Suggestions;
import dev.parley.chat.model.TokenUsage;
import dev.parley.chat.model.UserMessage;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link ChatStore} must have. A store module extends this class once per database
 * and returns a fresh, empty store from {@link #createStore()}.
 */
public abstract class ChatStoreContract {
    protected static final Instant T0 = Instant.parse("2026-11-29T10:00:00.000Z");

    protected ChatStore store;

    /** A new store with no data in it. */
    protected abstract ChatStore createStore();

    @BeforeEach
    void openStore() {
        store = createStore();
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    protected static Instant at(long seconds) {
        return T0.plusSeconds(seconds);
    }

    protected ChatThread thread(String id, String owner, Instant lastMessageAt) {
        return new ChatThread(id, owner, null, null, null, null, ThreadStatus.ACTIVE, T0, lastMessageAt);
    }

    protected Run run(String id, String threadId, RunStatus status) {
        return new Run(id, threadId, "alice", status, id + "-u", id + "-a", "hello", "model-1", "skill-1", 5,
                Map.of("page", "notes", "n", 3), T0, null, null, null, null, null);
    }

    protected UserMessage user(String id, String threadId, String runId, Instant createdAt) {
        return new UserMessage(id, threadId, runId, null, MessageStatus.COMPLETED, createdAt, "hi " + id);
    }

    protected AssistantMessage answer(String id, String threadId, String runId, String parent) {
        return new AssistantMessage(id, threadId, runId, parent, MessageStatus.COMPLETED, T0, "answer " + id, null, null);
    }

    protected RunEvent event(String runId, long seq) {
        return new RunEvent(runId, seq, T0.toEpochMilli() + seq, new AgentStreamEvent.TextDelta(runId + "-a", "t" + seq));
    }

    // ------------------------------------------------------------------ threads

    @Test
    void threadsAreCreatedFoundAndNotDuplicated() {
        ChatThread thread = new ChatThread("t1", "alice", "Title ✓", "sess", "m", "s", ThreadStatus.ARCHIVED, T0, at(5));
        store.createThread(thread);
        assertThat(store.findThread("t1")).contains(thread);
        assertThat(store.findThread("nope")).isEmpty();
        assertThatThrownBy(() -> store.createThread(thread))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT));
    }

    @Test
    void threadsAreListedPerOwnerNewestActivityFirstAndPagedByCursor() {
        for (int i = 0; i < 7; i++) {
            store.createThread(thread("a" + i, "alice", at(i)));
        }
        store.createThread(thread("a7", "alice", at(6)));
        store.createThread(thread("b0", "bob", at(100)));
        assertThat(store.listThreads("alice", null, 3)).extracting(ChatThread::id).containsExactly("a7", "a6", "a5");
        assertThat(store.listThreads("alice", cursorOf("a5"), 3)).extracting(ChatThread::id)
                .containsExactly("a4", "a3", "a2");
        assertThat(store.listThreads("alice", new ThreadCursor(at(6), "a7"), 3)).as("ties go by id")
                .extracting(ChatThread::id).containsExactly("a6", "a5", "a4");
        assertThat(store.listThreads("alice", cursorOf("a0"), 3)).isEmpty();
        assertThat(store.listThreads("bob", null, 10)).extracting(ChatThread::id).containsExactly("b0");
        assertThat(store.listThreads("carol", null, 10)).isEmpty();

        store.write(StoreBatch.builder().touch(new ThreadTouch("a0", null, at(50), null)).build());
        assertThat(store.listThreads("alice", null, 1)).extracting(ChatThread::id).containsExactly("a0");
    }

    @Test
    void aThreadThatMovesWhilePagingIsNeitherRepeatedNorMakesAnotherBeSkipped() {
        for (int i = 0; i < 6; i++) {
            store.createThread(thread("a" + i, "alice", at(i)));
        }
        List<ChatThread> first = store.listThreads("alice", null, 2);
        assertThat(first).extracting(ChatThread::id).containsExactly("a5", "a4");
        store.write(StoreBatch.builder().touch(new ThreadTouch("a1", null, at(60), null)).build());
        store.write(StoreBatch.builder().touch(new ThreadTouch("a5", null, at(61), null)).build());
        ChatThread last = first.get(first.size() - 1);
        List<ChatThread> rest = store.listThreads("alice", new ThreadCursor(last.lastMessageAt(), last.id()), 10);
        assertThat(rest).extracting(ChatThread::id).containsExactly("a3", "a2", "a0");
    }

    private ThreadCursor cursorOf(String threadId) {
        ChatThread thread = store.findThread(threadId).orElseThrow();
        return new ThreadCursor(thread.lastMessageAt(), thread.id());
    }

    @Test
    void anUpdateChangesOnlyWhatAPersonEdits() {
        store.createThread(new ChatThread("t1", "alice", null, "sess-1", null, null, ThreadStatus.ACTIVE, T0, at(1)));
        ChatThread edited = new ChatThread("t1", "mallory", "Renamed", "sess-EVIL", "m2", "s2", ThreadStatus.ARCHIVED,
                at(99), at(99));
        assertThat(store.updateThread(edited)).isTrue();
        ChatThread stored = store.findThread("t1").orElseThrow();
        assertThat(stored.title()).isEqualTo("Renamed");
        assertThat(stored.modelId()).isEqualTo("m2");
        assertThat(stored.skill()).isEqualTo("s2");
        assertThat(stored.status()).isEqualTo(ThreadStatus.ARCHIVED);
        assertThat(stored.ownerId()).isEqualTo("alice");
        assertThat(stored.runtimeSessionId()).isEqualTo("sess-1");
        assertThat(stored.lastMessageAt()).isEqualTo(at(1));
        assertThat(stored.createdAt()).isEqualTo(T0);
        assertThat(store.updateThread(thread("nope", "alice", T0))).isFalse();
    }

    @Test
    void touchesSetSessionNewerActivityAndAMissingTitle() {
        store.createThread(thread("t1", "alice", at(10)));
        store.write(StoreBatch.builder().touch(new ThreadTouch("t1", "sess-2", at(5), "First words")).build());
        ChatThread touched = store.findThread("t1").orElseThrow();
        assertThat(touched.runtimeSessionId()).isEqualTo("sess-2");
        assertThat(touched.lastMessageAt()).as("an older time is ignored").isEqualTo(at(10));
        assertThat(touched.title()).isEqualTo("First words");

        store.write(StoreBatch.builder().touch(new ThreadTouch("t1", null, at(20), "Other words")).build());
        touched = store.findThread("t1").orElseThrow();
        assertThat(touched.lastMessageAt()).isEqualTo(at(20));
        assertThat(touched.title()).as("a title is only set when missing").isEqualTo("First words");
        assertThat(touched.runtimeSessionId()).isEqualTo("sess-2");

        store.write(StoreBatch.builder().touch(new ThreadTouch("ghost", "s", at(1), "x")).build());
        assertThat(store.findThread("ghost")).isEmpty();
    }

    @Test
    void aRunKeepsTheContextItWasStartedInUntilReplacedAndAnUnstoredRunKeepsNone() {
        store.createThread(thread("t1", "alice", T0));
        writeConversation("t1", "r1");
        assertThat(store.findStartContext("r1")).isEmpty();

        Map<String, String> headers = Map.of("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                "tracestate", "vendor=a:b");
        store.saveStartContext("r1", headers);
        assertThat(store.findStartContext("r1")).isEqualTo(headers);
        store.write(StoreBatch.builder().run(run("r1", "t1", RunStatus.SUCCEEDED)).build());
        assertThat(store.findStartContext("r1")).as("the run's later writes keep it").isEqualTo(headers);
        store.saveStartContext("r1", Map.of("traceparent", "00-1af7651916cd43dd8448eb211c80319c-c7ad6b7169203331-01"));
        assertThat(store.findStartContext("r1")).containsOnlyKeys("traceparent");

        store.saveStartContext("never-stored", headers);
        assertThat(store.findStartContext("never-stored")).isEmpty();
    }

    @Test
    void deletingAThreadRemovesEverythingInIt() {
        store.createThread(thread("t1", "alice", T0));
        store.createThread(thread("t2", "alice", T0));
        writeConversation("t1", "r1");
        writeConversation("t2", "r2");
        store.saveFeedback(new Feedback("t1", "r1", "r1-a", "alice", FeedbackRating.UP, null, T0));
        store.saveFeedback(new Feedback("t1", "r1", "never-stored", "bob", FeedbackRating.DOWN, "?", T0));
        store.claimHostAction("r1", "x1", "lookup", "{}", T0);
        store.reserveSeq("r1", 100);
        store.write(StoreBatch.builder().resumePoint(new StoreBatch.ResumePoint("r1", "17", 2)).build());
        store.saveStartContext("r1", Map.of("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
        store.rememberApproval("t1", "refund", T0);
        store.write(StoreBatch.builder().run(run("r1b", "t1", RunStatus.RUNNING)).lease(new RunLease("r1b", "host-a", at(30)))
                .message(new ThinkingMessage("orphan-step", "t1", "run-never-stored", "r1-a", MessageStatus.COMPLETED,
                        T0, "a step whose run was never stored"))
                .build());

        assertThat(store.deleteThread("t1")).isTrue();
        assertThat(store.deleteThread("t1")).isFalse();
        assertThat(store.findThread("t1")).isEmpty();
        assertThat(store.findRun("r1")).isEmpty();
        assertThat(store.findMessage("r1-u")).isEmpty();
        assertThat(store.findMessage("r1-a")).isEmpty();
        assertThat(store.listStepMessagesAfter("r1", null, 1_000)).isEmpty();
        assertThat(store.readEvents("r1", 0, 100)).isEmpty();
        assertThat(store.lastSeq("r1")).isZero();
        assertThat(store.findInput("r1", "c1")).isEmpty();
        assertThat(store.findFeedback("r1-a", "alice")).isEmpty();
        assertThat(store.listFeedback(List.of("r1-a", "never-stored"))).isEmpty();
        assertThat(store.reservedSeq("r1")).isZero();
        assertThat(store.findResumePoint("r1")).isEmpty();
        assertThat(store.findStartContext("r1")).isEmpty();
        assertThat(store.findRun("r1b")).isEmpty();
        assertThat(store.findLease("r1b")).isEmpty();
        assertThat(store.findMessage("orphan-step")).isEmpty();
        assertThat(store.listStepMessagesAfter("run-never-stored", null, 1_000)).isEmpty();
        assertThat(store.listNewestStepMessages(List.of("r1", "run-never-stored"), 10)).isEmpty();
        assertThat(store.countStepMessages(List.of("r1", "run-never-stored"))).isEmpty();
        assertThat(store.isApprovedForThread("t1", "refund")).isFalse();
        assertThat(store.findThreadRuns("t1", EnumSet.allOf(RunStatus.class))).isEmpty();
        store.createThread(thread("t1", "alice", T0));
        assertThat(store.listTopLevelMessages("t1", null, 10)).as("a thread made again with the id starts empty")
                .isEmpty();
        assertThat(store.isApprovedForThread("t1", "refund")).isFalse();
        store.write(StoreBatch.builder().run(run("r1", "t1", RunStatus.RUNNING)).build());
        assertThat(store.claimHostAction("r1", "x1", "lookup", "{}", T0).claimedNow())
                .as("the old execution is gone").isTrue();

        assertThat(store.findRun("r2")).isPresent();
        assertThat(store.readEvents("r2", 0, 100)).hasSize(3);
        assertThat(store.findMessage("r2-a")).isPresent();
        assertThat(store.findInput("r2", "c1")).isPresent();
    }

    /**
     * A run still writing while its thread is deleted cannot bring any of it back: every kind of row of the
     * deleted thread (or of a run that does not exist) makes the whole batch fail with ThreadGoneException
     * naming those runs, and nothing of the batch — not even its rows of living threads — is stored.
     */
    @Test
    void aBatchWithRowsOfADeletedThreadIsRefusedWholeAndStoresNothing() {
        store.createThread(thread("gone", "alice", T0));
        store.createThread(thread("alive", "alice", T0));
        writeConversation("gone", "r-gone");
        store.write(StoreBatch.builder().run(run("r-alive", "alive", RunStatus.RUNNING)).build());
        assertThat(store.deleteThread("gone")).isTrue();

        UserMessage aliveMessage = user("m-alive", "alive", "r-alive", at(1));
        RunEvent aliveEvent = event("r-alive", 1);
        Map<String, StoreBatch.Builder> refused = new java.util.LinkedHashMap<>();
        refused.put("its run", StoreBatch.builder().run(run("r-gone", "gone", RunStatus.FAILED)));
        refused.put("a new run of it", StoreBatch.builder().run(run("r-new", "gone", RunStatus.RUNNING)));
        refused.put("its message", StoreBatch.builder().message(answer("r-gone-a", "gone", "r-gone", "r-gone-u")));
        refused.put("its run's event", StoreBatch.builder().event(event("r-gone", 4)));
        refused.put("its run's input", StoreBatch.builder().input(clarify("r-gone", "c2")));
        refused.put("its run's seq reservation", StoreBatch.builder().reserveSeq("r-gone", 500));
        refused.put("its run's resume point", StoreBatch.builder().resumePoint(new StoreBatch.ResumePoint("r-gone", "9", 0)));
        refused.put("its run's lease", StoreBatch.builder().lease(new RunLease("r-gone", "host-a", at(30))));
        Map<String, java.util.Set<String>> expectedRuns = new java.util.HashMap<>();
        refused.keySet().forEach(what -> expectedRuns.put(what, java.util.Set.of("r-gone")));
        expectedRuns.put("a new run of it", java.util.Set.of("r-new"));
        refused.put("an event of a run never stored", StoreBatch.builder().event(event("ghost", 1)));
        expectedRuns.put("an event of a run never stored", java.util.Set.of("ghost"));

        for (Map.Entry<String, StoreBatch.Builder> entry : refused.entrySet()) {
            StoreBatch batch = entry.getValue().touch(new ThreadTouch("alive", "s-9", at(90), "Set by a refused batch"))
                    .message(aliveMessage).event(aliveEvent).reserveSeq("r-alive", 7_000).build();
            assertThatThrownBy(() -> store.write(batch)).as(entry.getKey())
                    .isInstanceOfSatisfying(ThreadGoneException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND);
                        assertThat(e.runIds()).isEqualTo(expectedRuns.get(entry.getKey()));
                        assertThat(e.getMessage()).contains(expectedRuns.get(entry.getKey()).iterator().next());
                    });
        }
        StoreBatch everything = StoreBatch.builder().run(run("r-gone", "gone", RunStatus.FAILED))
                .message(user("x-u", "gone", "r-other", T0)).event(event("ghost", 2)).event(aliveEvent).build();
        assertThatThrownBy(() -> store.write(everything)).isInstanceOfSatisfying(ThreadGoneException.class,
                e -> assertThat(e.runIds()).containsExactlyInAnyOrder("r-gone", "r-other", "ghost"));

        assertThat(store.findThread("gone")).isEmpty();
        assertThat(store.findRun("r-gone")).isEmpty();
        assertThat(store.findRun("r-new")).isEmpty();
        assertThat(store.findMessage("r-gone-a")).isEmpty();
        assertThat(store.findMessage("x-u")).isEmpty();
        assertThat(store.readEvents("r-gone", 0, 10)).isEmpty();
        assertThat(store.readEvents("ghost", 0, 10)).isEmpty();
        assertThat(store.findInput("r-gone", "c2")).isEmpty();
        assertThat(store.reservedSeq("r-gone")).isZero();
        assertThat(store.findResumePoint("r-gone")).isEmpty();
        assertThat(store.findLease("r-gone")).isEmpty();
        assertThat(store.findRuns(EnumSet.allOf(RunStatus.class))).extracting(Run::id).containsExactly("r-alive");
        assertThat(store.findMessage("m-alive")).as("nothing of a refused batch is stored").isEmpty();
        assertThat(store.readEvents("r-alive", 0, 10)).isEmpty();
        assertThat(store.reservedSeq("r-alive")).isZero();
        assertThat(store.findThread("alive").orElseThrow().title()).isNull();

        store.write(StoreBatch.builder().touch(new ThreadTouch("gone", "s", at(5), "back?")).message(aliveMessage)
                .run(run("r-next", "alive", RunStatus.QUEUED)).event(event("r-next", 1)).input(clarify("r-next", "c1"))
                .reserveSeq("r-next", 100).resumePoint(new StoreBatch.ResumePoint("r-next", "1", 0))
                .lease(new RunLease("r-next", "host-a", at(30))).build());
        assertThat(store.findThread("gone")).as("a touch of a deleted thread is ignored").isEmpty();
        assertThat(store.findMessage("m-alive")).isPresent();
        assertThat(store.readEvents("r-next", 0, 10)).as("a run's rows may come with the run").hasSize(1);
        assertThat(store.findInput("r-next", "c1")).isPresent();
        assertThat(store.reservedSeq("r-next")).isEqualTo(100);
        assertThat(store.findResumePoint("r-next")).contains(new StoreBatch.ResumePoint("r-next", "1", 0));
        assertThat(store.findLease("r-next")).isPresent();
    }

    /** The writes of one row of a deleted thread: NOT_FOUND (or their "not found" answer), and nothing stored. */
    @Test
    void singleWritesOfADeletedThreadAreNotFoundAndStoreNothing() {
        store.createThread(thread("gone", "alice", T0));
        writeConversation("gone", "r-gone");
        store.claimHostAction("r-gone", "x1", "lookup", "{}", T0);
        assertThat(store.deleteThread("gone")).isTrue();

        assertThatThrownBy(() -> store.reserveSeq("r-gone", 9_000)).isInstanceOfSatisfying(ThreadGoneException.class,
                e -> assertThat(e.runIds()).containsExactly("r-gone"));
        assertThatThrownBy(() -> store.claimHostAction("r-gone", "x2", "lookup", "{}", at(1)))
                .isInstanceOfSatisfying(ThreadGoneException.class, e -> assertThat(e.runIds()).containsExactly("r-gone"));
        assertThatThrownBy(() -> store.completeHostAction("r-gone", "x1", "{\"late\":true}", false, at(2)))
                .isInstanceOfSatisfying(ThreadGoneException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
        assertThatThrownBy(() -> store.saveFeedback(new Feedback("gone", "r-gone", "r-gone-a", "alice", FeedbackRating.UP,
                "late", at(3))))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
        assertThatThrownBy(() -> store.rememberApproval("gone", "refund", at(4)))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
        assertThat(store.answerInput("r-gone", "c1", new ClarifyAnswer(List.of("a")), at(5)))
                .isEqualTo(AnswerOutcome.NOT_FOUND);
        assertThat(store.closeInput("r-gone", "c1", InputState.CANCELLED, at(6))).isFalse();
        store.reopenInput("r-gone", "c1");
        store.cancelPendingInputs("r-gone", at(7));
        assertThat(store.leaseRuns("host-a", List.of("r-gone"), at(60))).isEmpty();
        assertThat(store.takeOverRun("r-gone", "host-a", at(1), at(60))).isFalse();
        assertThat(store.updateThread(thread("gone", "alice", T0))).isFalse();
        store.compactRunEvents("r-gone", List.of(event("r-gone", 1)), at(8));

        assertThat(store.reservedSeq("r-gone")).isZero();
        assertThat(store.findFeedback("r-gone-a", "alice")).isEmpty();
        assertThat(store.isApprovedForThread("gone", "refund")).isFalse();
        assertThat(store.findInput("r-gone", "c1")).isEmpty();
        assertThat(store.findLease("r-gone")).isEmpty();
        assertThat(store.readEvents("r-gone", 0, 10)).isEmpty();
        assertThat(store.findThread("gone")).isEmpty();
        assertThat(store.findRun("r-gone")).isEmpty();
    }

    private void writeConversation(String threadId, String runId) {
        store.write(StoreBatch.builder()
                .run(run(runId, threadId, RunStatus.SUCCEEDED))
                .message(user(runId + "-u", threadId, runId, T0))
                .message(answer(runId + "-a", threadId, runId, runId + "-u"))
                .message(new ThinkingMessage(runId + "-t", threadId, runId, runId + "-a", MessageStatus.COMPLETED, T0, "hm"))
                .events(List.of(event(runId, 1), event(runId, 2), event(runId, 3)))
                .input(clarify(runId, "c1"))
                .build());
    }

    // ------------------------------------------------------------------ messages

    @Test
    void everyMessageKindRoundTrips() {
        store.createThread(thread("t", "alice", T0));
        List<Message> all = List.of(
                user("u", "t", "r", T0),
                new AssistantMessage("a", "t", "r", "u", MessageStatus.FAILED, at(1), "partial ✓ " + "x".repeat(200_000),
                        new ErrorInfo("RATE_LIMITED", "boom", 20L), new TokenUsage(1, 2, 3)),
                new ThinkingMessage("th", "t", "r", "a", MessageStatus.COMPLETED, at(2), "hmm"),
                new ActionExecutionMessage("ac", "t", "r", "a", MessageStatus.COMPLETED, at(3), "x1", "search", "{\"q\":1}"),
                new ResultMessage("re", "t", "r", "a", MessageStatus.COMPLETED, at(4), "x1", "search", "ok", true),
                new StatusMessage("st", "t", "r", "a", MessageStatus.COMPLETED, at(5), "warn", "slow"),
                new TodoMessage("to", "t", "r", "a", MessageStatus.IN_PROGRESS, at(6),
                        List.of(new TodoItem("1", "a", TodoStatus.IN_PROGRESS, null), new TodoItem("2", "b", TodoStatus.PENDING, "1"))),
                new ClarifyMessage("cl", "t", "r", "a", MessageStatus.COMPLETED, at(7), "c1", "which?", List.of("x", "y"),
                        true, List.of("x", "y")),
                new ApprovalMessage("ap", "t", "r", "a", MessageStatus.COMPLETED, at(7), "a1",
                        new ApprovalRequest("refund", "{\"order\":42}", "Refunds order 42",
                                List.of(ApprovalDecision.ALLOW_FOR_THREAD), true),
                        InputState.ANSWERED, ApprovalDecision.ALLOW_ONCE, "{\"order\":43}"),
                new ErrorMessage("er", "t", "r", "a", MessageStatus.COMPLETED, at(8), "E", "bad"));
        store.write(StoreBatch.builder().run(run("r", "t", RunStatus.FAILED)).messages(all).build());
        for (Message message : all) {
            assertThat(store.findMessage(message.id())).contains(message);
        }
        assertThat(store.listTopLevelMessages("t", null, 10)).containsExactlyElementsOf(all.subList(0, 2));
        assertThat(store.listStepMessagesAfter("r", null, 1_000)).containsExactlyElementsOf(all.subList(2, all.size()));
    }

    @Test
    void anAnswersSuggestionsAreStoredWithItAndGoWithItsThread() {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder().run(run("r1", "t", RunStatus.SUCCEEDED))
                .message(user("r1-u", "t", "r1", T0)).message(answer("r1-a", "t", "r1", "r1-u")).build());
        AssistantMessage suggested = answer("r1-a", "t", "r1", "r1-u")
                .withSuggestions(new Suggestions(List.of("What about Porto?", "Tell me more ✓"), new TokenUsage(30, 12, 42)));
        store.write(StoreBatch.builder().message(suggested).build());

        assertThat(store.findMessage("r1-a")).contains(suggested);
        assertThat(store.listTopLevelMessages("t", null, 10)).containsExactly(user("r1-u", "t", "r1", T0), suggested);
        assertThat(store.listBranch("t", "r1-a", null, 10)).endsWith(suggested);
        assertThat(store.findMessages(List.of("r1-a"))).containsExactly(suggested);

        assertThat(store.deleteThread("t")).isTrue();
        assertThat(store.findMessage("r1-a")).isEmpty();
        assertThatThrownBy(() -> store.write(StoreBatch.builder().message(suggested).build()))
                .as("suggestions arriving after the thread was deleted store nothing")
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
        assertThat(store.findMessage("r1-a")).isEmpty();
    }

    @Test
    void aMessageSavedAgainIsReplacedButKeepsItsPlace() {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder()
                .message(user("u1", "t", "r1", T0))
                .message(new AssistantMessage("a1", "t", "r1", "u1", MessageStatus.IN_PROGRESS, T0, "", null, null))
                .message(new ThinkingMessage("s1", "t", "r1", "a1", MessageStatus.IN_PROGRESS, T0, "a"))
                .message(new ThinkingMessage("s2", "t", "r1", "a1", MessageStatus.IN_PROGRESS, T0, "b"))
                .build());
        store.write(StoreBatch.builder()
                .message(user("u2", "t", "r2", at(9)))
                .message(answer("a1", "t", "r1", "u1"))
                .message(new ThinkingMessage("s1", "t", "r1", "a1", MessageStatus.COMPLETED, T0, "a, done"))
                .build());
        assertThat(store.listTopLevelMessages("t", null, 10)).extracting(Message::id).containsExactly("u1", "a1", "u2");
        assertThat(((AssistantMessage) store.findMessage("a1").orElseThrow()).text()).isEqualTo("answer a1");
        assertThat(store.listStepMessagesAfter("r1", null, 1_000)).extracting(Message::id).containsExactly("s1", "s2");
        assertThat(store.listStepMessagesAfter("r1", null, 1_000).get(0).status()).isEqualTo(MessageStatus.COMPLETED);
    }

    @Test
    void topLevelMessagesArePagedBackwardsFromACursor() {
        store.createThread(thread("t", "alice", T0));
        StoreBatch.Builder batch = StoreBatch.builder();
        for (int i = 0; i < 10; i++) {
            batch.message(user("u" + i, "t", "r" + i, at(i)));
            batch.message(new ThinkingMessage("step" + i, "t", "r" + i, "u" + i, MessageStatus.COMPLETED, at(i), "x"));
        }
        store.write(batch.build());
        assertThat(store.listTopLevelMessages("t", null, 3)).extracting(Message::id).containsExactly("u7", "u8", "u9");
        assertThat(store.listTopLevelMessages("t", "u7", 3)).extracting(Message::id).containsExactly("u4", "u5", "u6");
        assertThat(store.listTopLevelMessages("t", "u2", 3)).extracting(Message::id).containsExactly("u0", "u1");
        assertThat(store.listTopLevelMessages("t", "u0", 3)).isEmpty();
        assertThat(store.listTopLevelMessages("other", null, 3)).isEmpty();
        assertThat(store.listNewestStepMessages(List.of("r5", "r3"), 10)).extracting(Message::id).containsExactly("step3", "step5");
        assertThat(store.listNewestStepMessages(List.of(), 10)).isEmpty();
    }

    /**
     * Two runs' steps saved interleaved, with r1's question and answer among them, r1's first step saved again
     * last: s1-0 s1-1 s2-0 s1-2 s2-1 s1-3 s2-2 s1-4 in first-save order.
     */
    private void interleavedSteps() {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder()
                .message(user("u1", "t", "r1", T0))
                .message(new AssistantMessage("a1", "t", "r1", "u1", MessageStatus.IN_PROGRESS, T0, "", null, null))
                .message(step("s1-0", "r1")).message(step("s1-1", "r1")).message(step("s2-0", "r2"))
                .message(step("s1-2", "r1")).message(step("s2-1", "r2"))
                .build());
        store.write(StoreBatch.builder()
                .message(step("s1-3", "r1")).message(answer("a1", "t", "r1", "u1")).message(step("s2-2", "r2"))
                .message(step("s1-4", "r1"))
                .message(new ThinkingMessage("s1-0", "t", "r1", "a1", MessageStatus.COMPLETED, at(9), "saved again"))
                .build());
    }

    private static ThinkingMessage step(String id, String runId) {
        return new ThinkingMessage(id, "t", runId, runId.equals("r1") ? "a1" : "a2", MessageStatus.IN_PROGRESS, T0,
                "thinking " + id);
    }

    @Test
    void eachRunsNewestStepsAreReadUpToTheLimitInFirstSaveOrder() {
        interleavedSteps();
        assertThat(store.listNewestStepMessages(List.of("r1", "r2"), 2)).extracting(Message::id)
                .containsExactly("s2-1", "s1-3", "s2-2", "s1-4");
        assertThat(store.listNewestStepMessages(List.of("r2", "r1", "r2", "no-run"), 1)).extracting(Message::id)
                .as("each run once, unknown runs left out").containsExactly("s2-2", "s1-4");
        assertThat(store.listNewestStepMessages(List.of("r1"), 100)).extracting(Message::id)
                .as("a step saved again keeps its place; questions and answers are no steps")
                .containsExactly("s1-0", "s1-1", "s1-2", "s1-3", "s1-4");
        assertThat(((ThinkingMessage) store.listNewestStepMessages(List.of("r1"), 5).get(0)).text()).isEqualTo("saved again");
        assertThat(store.listNewestStepMessages(List.of("r1", "r2"), 0)).isEmpty();
        assertThat(store.listNewestStepMessages(List.of(), 10)).isEmpty();
    }

    @Test
    void aRunsStepsArePagedForwardFromACursor() {
        interleavedSteps();
        List<String> read = new ArrayList<>();
        String after = null;
        List<Message> page;
        do {
            page = store.listStepMessagesAfter("r1", after, 2);
            assertThat(page.size()).isLessThanOrEqualTo(2);
            page.forEach(m -> read.add(m.id()));
            after = page.isEmpty() ? after : page.get(page.size() - 1).id();
        } while (page.size() == 2);
        assertThat(read).containsExactly("s1-0", "s1-1", "s1-2", "s1-3", "s1-4");
        assertThat(store.listStepMessagesAfter("r2", "s2-0", 10)).extracting(Message::id).containsExactly("s2-1", "s2-2");
        assertThat(store.listStepMessagesAfter("r1", "s2-0", 10)).as("a cursor of another run").isEmpty();
        assertThat(store.listStepMessagesAfter("r1", "a1", 10)).as("a cursor that is no step").isEmpty();
        assertThat(store.listStepMessagesAfter("r1", "no-such-step", 10)).isEmpty();
        assertThat(store.listStepMessagesAfter("r1", null, 0)).isEmpty();
        assertThat(store.listStepMessagesAfter("no-run", null, 10)).isEmpty();
    }

    @Test
    void theStepsOfRunsAreCounted() {
        interleavedSteps();
        assertThat(store.countStepMessages(List.of("r1", "r2", "no-run", "r1")))
                .containsExactlyInAnyOrderEntriesOf(Map.of("r1", 5, "r2", 3));
        assertThat(store.countStepMessages(List.of())).isEmpty();
    }

    /** More runs than one read of some stores takes: all of them, each bounded, still in first-save order. */
    @Test
    void theNewestStepsOfManyRunsAreReadWhole() {
        store.createThread(thread("t", "alice", T0));
        StoreBatch.Builder batch = StoreBatch.builder();
        List<String> runs = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        for (int step = 0; step < 3; step++) {
            for (int r = 0; r < 650; r++) {
                batch.message(new ThinkingMessage("m" + r + "-" + step, "t", "run" + r, "a" + r, MessageStatus.COMPLETED,
                        T0, "x"));
                if (step > 0) {
                    expected.add("m" + r + "-" + step);
                }
            }
        }
        for (int r = 649; r >= 0; r--) {
            runs.add("run" + r);
        }
        store.write(batch.build());
        assertThat(store.listNewestStepMessages(runs, 2)).extracting(Message::id).containsExactlyElementsOf(expected);
        assertThat(store.countStepMessages(runs)).hasSize(650).containsEntry("run0", 3).containsEntry("run649", 3);
    }

    @Test
    void variantsAreTheAnswersSharingAParent() {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder()
                .message(user("u1", "t", "r1", T0))
                .message(answer("a1", "t", "r1", "u1"))
                .message(answer("a2", "t", "r2", "u1"))
                .message(user("u2", "t", "r3", T0))
                .message(answer("a3", "t", "r3", "u2"))
                .message(answer("a4", "t", "r4", "u1"))
                .build());
        Map<String, List<String>> variants = store.findVariantIds(List.of("u1", "u2", "u-none"));
        assertThat(variants).containsOnlyKeys("u1", "u2");
        assertThat(variants.get("u1")).containsExactly("a1", "a2", "a4");
        assertThat(variants.get("u2")).containsExactly("a3");
    }

    // ------------------------------------------------------------------ runs and events

    @Test
    void runsAreUpsertedAndFoundByStatus() {
        store.createThread(thread("t", "alice", T0));
        store.createThread(thread("t2", "alice", T0));
        Run running = run("r1", "t", RunStatus.RUNNING);
        store.write(StoreBatch.builder().run(running).run(run("r2", "t", RunStatus.QUEUED))
                .run(run("r3", "t2", RunStatus.RUNNING)).build());
        assertThat(store.findRun("r1")).contains(running);
        Run done = running.finished(RunStatus.FAILED, at(3), new ErrorInfo("RATE_LIMITED", "y", 20L),
                new TokenUsage(4, 5, 9), "guard");
        store.write(StoreBatch.builder().run(done).build());
        assertThat(store.findRun("r1")).contains(done);
        Run noHint = done.finished(RunStatus.FAILED, at(3), new ErrorInfo("X", "y"), null, null);
        store.write(StoreBatch.builder().run(noHint).build());
        assertThat(store.findRun("r1")).as("an error without a retry hint replaces one with it").contains(noHint);
        assertThat(store.findRuns(EnumSet.of(RunStatus.RUNNING, RunStatus.QUEUED))).extracting(Run::id)
                .containsExactlyInAnyOrder("r2", "r3");
        assertThat(store.findThreadRuns("t", EnumSet.of(RunStatus.QUEUED, RunStatus.RUNNING))).extracting(Run::id)
                .containsExactly("r2");
        assertThat(store.findThreadRuns("t", EnumSet.of(RunStatus.FAILED))).extracting(Run::id).containsExactly("r1");
        assertThat(store.findRun("nope")).isEmpty();
    }

    @Test
    void aThreadHasAtMostOneRunningOrWaitingRun() {
        store.createThread(thread("t", "alice", T0));
        store.createThread(thread("t2", "alice", T0));
        store.write(StoreBatch.builder().run(run("r1", "t", RunStatus.RUNNING)).build());

        assertThatThrownBy(() -> store.write(StoreBatch.builder().run(run("r2", "t", RunStatus.RUNNING))
                .message(user("m2", "t", "r2", at(1))).build()))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT));
        assertThat(store.findRun("r2")).as("nothing of the refused batch is stored").isEmpty();
        assertThat(store.findMessage("m2")).isEmpty();
        assertThatThrownBy(() -> store.write(StoreBatch.builder().run(run("r3", "t", RunStatus.WAITING_FOR_INPUT)).build()))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT));
        assertThatThrownBy(() -> store.write(StoreBatch.builder().run(run("r4", "t2", RunStatus.RUNNING))
                .run(run("r5", "t2", RunStatus.RUNNING)).build()))
                .as("two in one batch")
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT));
        assertThat(store.findRun("r4")).isEmpty();

        store.write(StoreBatch.builder().run(run("q", "t", RunStatus.QUEUED)).run(run("r1", "t", RunStatus.WAITING_FOR_INPUT))
                .run(run("r6", "t2", RunStatus.RUNNING)).build());
        assertThat(store.findRun("q")).as("queued runs wait beside the active one").isPresent();
        Run ended = run("r1", "t", RunStatus.RUNNING).finished(RunStatus.SUCCEEDED, at(2), null, null, null);
        store.write(StoreBatch.builder().run(run("q", "t", RunStatus.RUNNING)).run(ended).build());
        assertThat(store.findRun("q").orElseThrow().status()).as("the end and the next start in one batch, next first")
                .isEqualTo(RunStatus.RUNNING);
        assertThat(store.findRun("r1").orElseThrow().status()).isEqualTo(RunStatus.SUCCEEDED);
    }

    @Test
    void aFencedBatchIsRefusedWholeWhenAnotherInstanceHoldsOneOfItsRuns() {
        store.createThread(thread("t", "alice", T0));
        store.createThread(thread("t2", "alice", T0));
        store.write(StoreBatch.builder().run(run("mine", "t", RunStatus.RUNNING)).lease(new RunLease("mine", "host-a", at(30)))
                .run(run("taken", "t2", RunStatus.RUNNING)).lease(new RunLease("taken", "host-b", at(30))).build());
        RunEvent mine = new RunEvent("mine", 1, 1L, new AgentStreamEvent.TextDelta("mine-a", "x"));
        RunEvent taken = new RunEvent("taken", 1, 1L, new AgentStreamEvent.TextDelta("taken-a", "y"));

        assertThatThrownBy(() -> store.write(StoreBatch.builder().fence("host-a").event(mine).event(taken)
                .reserveSeq("mine", 10).build()))
                .isInstanceOfSatisfying(LeaseLostException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT);
                    assertThat(e.runIds()).containsExactly("taken");
                });
        assertThat(store.readEvents("mine", 0, 10)).as("nothing of the refused batch is stored").isEmpty();
        assertThat(store.reservedSeq("mine")).isZero();
        assertThatThrownBy(() -> store.write(StoreBatch.builder().fence("host-a")
                .run(run("taken", "t2", RunStatus.RUNNING).finished(RunStatus.FAILED, at(1), null, null, null)).build()))
                .isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(() -> store.write(StoreBatch.builder().fence("host-a")
                .resumePoint(new StoreBatch.ResumePoint("taken", "5", 0)).build()))
                .isInstanceOfSatisfying(LeaseLostException.class, e -> assertThat(e.runIds()).containsExactly("taken"));
        assertThat(store.findResumePoint("taken")).isEmpty();
        assertThat(store.findRun("taken").orElseThrow().status()).isEqualTo(RunStatus.RUNNING);

        store.write(StoreBatch.builder().fence("host-a").event(mine).reserveSeq("mine", 10)
                .run(run("new", "t2", RunStatus.QUEUED)).build());
        assertThat(store.readEvents("mine", 0, 10)).containsExactly(mine);
        assertThat(store.findRun("new")).as("a run the store does not hold yet passes the fence").isPresent();
        store.write(StoreBatch.builder().event(taken).build());
        assertThat(store.readEvents("taken", 0, 10)).as("an unfenced batch is not checked").containsExactly(taken);
    }

    @Test
    void eventsAreReadAfterACursorInSeqOrderAndStoredOnce() {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder().run(run("r", "t", RunStatus.RUNNING)).build());
        List<RunEvent> first = IntStream.rangeClosed(1, 5).mapToObj(i -> event("r", i)).collect(Collectors.toList());
        store.write(StoreBatch.builder().events(first).build());
        RunEvent clash = new RunEvent("r", 3, 0, new AgentStreamEvent.TextDelta("x", "DIFFERENT"));
        store.write(StoreBatch.builder().event(clash).event(event("r", 6)).build());

        assertThat(store.readEvents("r", 0, 100)).hasSize(6);
        assertThat(store.readEvents("r", 0, 100).get(2)).as("an existing seq is left as it is").isEqualTo(event("r", 3));
        assertThat(store.readEvents("r", 2, 2)).containsExactly(event("r", 3), event("r", 4));
        assertThat(store.readEvents("r", 6, 10)).isEmpty();
        assertThat(store.readEvents("other", 0, 10)).isEmpty();
        assertThat(store.lastSeq("r")).isEqualTo(6);
        assertThat(store.lastSeq("other")).isZero();

        store.write(StoreBatch.builder().event(event("r", 5000)).build());
        assertThat(store.readEvents("r", 6, 10)).containsExactly(event("r", 5000));
        assertThat(store.lastSeq("r")).isEqualTo(5000);
    }

    /**
     * A batch of a run's deltas reads back exactly from every cursor, a cursor inside the batch too, with its
     * events' own timestamps; writing its events again one by one, with other content, and a batch reaching
     * past it keeps every stored event and adds only the new seqs.
     */
    @Test
    void aBatchOfDeltasReadsFromEveryCursorAndItsEventsWrittenAgainKeepTheFirst() {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder().run(run("r", "t", RunStatus.RUNNING)).build());
        List<RunEvent> log = new ArrayList<>();
        for (int seq = 1; seq <= 30; seq++) {
            AgentStreamEvent delta = seq <= 10 ? new AgentStreamEvent.ThinkingDelta("r-think", "hm" + seq)
                    : seq <= 20 ? new AgentStreamEvent.TextDelta("r-a", "t" + seq)
                    : new AgentStreamEvent.ToolCallArgs("x", "{" + seq);
            log.add(new RunEvent("r", seq, T0.toEpochMilli() + seq * seq % 7, delta));
        }
        store.write(StoreBatch.builder().events(log).build());
        for (int seq = 5; seq <= 30; seq += 5) {
            store.write(StoreBatch.builder().event(new RunEvent("r", seq, 0, new AgentStreamEvent.TextDelta("r-a", "again")))
                    .build());
        }
        List<RunEvent> later = new ArrayList<>();
        for (int seq = 25; seq <= 35; seq++) {
            later.add(new RunEvent("r", seq, T0.toEpochMilli() + 100 + seq, new AgentStreamEvent.TextDelta("r-a", "l" + seq)));
        }
        store.write(StoreBatch.builder().events(later).build());
        log.addAll(later.subList(6, later.size()));

        for (int cursor = 0; cursor <= log.size(); cursor++) {
            for (int limit : new int[] {1, 4, 100}) {
                assertThat(store.readEvents("r", cursor, limit)).as("after %d, up to %d", cursor, limit)
                        .containsExactlyElementsOf(log.subList(cursor, Math.min(log.size(), cursor + limit)));
            }
        }
        assertThat(store.lastSeq("r")).isEqualTo(35);
    }

    @Test
    void everyEventKindSurvivesStorage() {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder().run(run("r", "t", RunStatus.RUNNING)).build());
        ChatJson json = ChatJson.shared();
        List<AgentStreamEvent> kinds = List.of(
                new AgentStreamEvent.RunStarted("t", "r", "a"),
                new AgentStreamEvent.MessagesSnapshot("t", "r", List.of(user("u", "t", "r", T0)), "guard"),
                new AgentStreamEvent.ToolCallStart("m", "x", "n", "{\"a\":[1,2]}"),
                new AgentStreamEvent.TodosUpdated("todo", List.of(new TodoItem("1", "c", TodoStatus.CANCELLED, null))),
                new AgentStreamEvent.ClarifyRequested("m2", "c", "q?", List.of("a"), true, "tok"),
                new AgentStreamEvent.InputRequested("m3", "a1", new ApprovalRequest("refund", "{}", "Refunds",
                        List.of(ApprovalDecision.ALWAYS_ALLOW), false), at(60), "tok-2"),
                new AgentStreamEvent.InputRequested("m4", "k1", new ClientToolRequest("x9", "pick", "{}",
                        "{\"type\":\"object\"}"), null, null),
                new AgentStreamEvent.InputResolved("a1", AgentStreamEvent.InputOutcome.ANSWERED,
                        new ApprovalAnswer(ApprovalDecision.DENY, null)),
                new AgentStreamEvent.InputResolved("k1", AgentStreamEvent.InputOutcome.ANSWERED,
                        new ClientToolAnswer("oops", true)),
                new AgentStreamEvent.InputResolved("c", AgentStreamEvent.InputOutcome.EXPIRED, null),
                new AgentStreamEvent.RunFailed("E", "msg \"quoted\" ✓"),
                json.readEvent("{\"type\":\"from_the_future\",\"x\":{\"y\":[true]}}"));
        List<RunEvent> events = new ArrayList<>();
        for (int i = 0; i < kinds.size(); i++) {
            events.add(new RunEvent("r", i + 1, T0.toEpochMilli() + i, kinds.get(i)));
        }
        store.write(StoreBatch.builder().events(events).build());
        List<RunEvent> read = store.readEvents("r", 0, 100);
        assertThat(read.subList(0, kinds.size() - 1)).containsExactlyElementsOf(events.subList(0, kinds.size() - 1));
        RunEvent unknown = read.get(kinds.size() - 1);
        assertThat(unknown.type()).isEqualTo("from_the_future");
        assertThat(json.readTree(json.write(unknown.event()))).isEqualTo(json.readTree("{\"type\":\"from_the_future\",\"x\":{\"y\":[true]}}"));
    }

    @Test
    void theSeqReservationOnlyGrows() {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder().run(run("r", "t", RunStatus.RUNNING)).build());
        assertThat(store.reservedSeq("r")).isZero();
        store.reserveSeq("r", 4096);
        store.reserveSeq("r", 100);
        assertThat(store.reservedSeq("r")).isEqualTo(4096);
        store.reserveSeq("r", 8192);
        assertThat(store.reservedSeq("r")).isEqualTo(8192);

        store.write(StoreBatch.builder().reserveSeq("r", 5000).build());
        assertThat(store.reservedSeq("r")).as("a batch never lowers the mark either").isEqualTo(8192);
        store.write(StoreBatch.builder().event(new RunEvent("r", 1, T0.toEpochMilli(), new AgentStreamEvent.TextDelta("m", "x")))
                .reserveSeq("r", 70_000).build());
        assertThat(store.reservedSeq("r")).as("raised with the batch's events").isEqualTo(70_000);
        assertThat(store.lastSeq("r")).isEqualTo(1);
    }

    @Test
    void aRunsResumePointIsReplacedByEachBatchThatCarriesOne() {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder().run(run("r", "t", RunStatus.RUNNING)).run(run("q", "t", RunStatus.QUEUED))
                .build());
        assertThat(store.findResumePoint("r")).as("none stored yet").isEmpty();

        store.write(StoreBatch.builder().event(event("r", 1)).resumePoint(new StoreBatch.ResumePoint("r", "3", 0))
                .build());
        assertThat(store.findResumePoint("r")).contains(new StoreBatch.ResumePoint("r", "3", 0));
        store.write(StoreBatch.builder().event(event("r", 2)).event(event("r", 3))
                .resumePoint(new StoreBatch.ResumePoint("r", "3;thinking=2", 2))
                .resumePoint(new StoreBatch.ResumePoint("q", "q-1", 0, false)).build());
        assertThat(store.findResumePoint("r")).as("the newest replaces the one before, whatever it says")
                .contains(new StoreBatch.ResumePoint("r", "3;thinking=2", 2));
        assertThat(store.findResumePoint("q")).as("each run has its own, followable or only naming the run")
                .contains(new StoreBatch.ResumePoint("q", "q-1", 0, false));
        store.write(StoreBatch.builder().event(event("r", 4)).build());
        assertThat(store.findResumePoint("r")).as("a batch without one leaves it")
                .contains(new StoreBatch.ResumePoint("r", "3;thinking=2", 2));
        store.write(StoreBatch.builder().resumePoint(new StoreBatch.ResumePoint("r", "2", 5)).build());
        assertThat(store.findResumePoint("r")).as("a token need not grow: it is the runtime's")
                .contains(new StoreBatch.ResumePoint("r", "2", 5));
    }

    // ------------------------------------------------------------------ branches, client ids, search

    private UserMessage said(String id, String threadId, @org.jspecify.annotations.Nullable String parent, String text) {
        return new UserMessage(id, threadId, "r-" + id, parent, MessageStatus.COMPLETED, T0, text);
    }

    private AssistantMessage replied(String id, String threadId, String parent, String text) {
        return new AssistantMessage(id, threadId, "r-" + parent, parent, MessageStatus.COMPLETED, T0, text, null, null);
    }

    /**
     * u1 → a1 → u2 → a2, an edit u2' of u2 (same parent a1) → a2', a regenerated a1b beside a1, and a first
     * message's edit u1' with no parent. Saved in this order.
     */
    private void writeTree(String threadId) {
        store.createThread(thread(threadId, "alice", T0));
        store.write(StoreBatch.builder()
                .message(said("u1", threadId, null, "plan a trip to Lisbon"))
                .message(replied("a1", threadId, "u1", "Lisbon in spring is lovely"))
                .message(said("u2", threadId, "a1", "and the food?"))
                .message(replied("a2", threadId, "u2", "try pastel de nata"))
                .message(new ThinkingMessage("t2", threadId, "r-u2", "a2", MessageStatus.COMPLETED, T0, "hm"))
                .message(said("u2e", threadId, "a1", "and the museums?"))
                .message(replied("a2e", threadId, "u2e", "the tile museum"))
                .message(replied("a1b", threadId, "u1", "Lisbon: seven hills"))
                .message(said("u1e", threadId, null, "plan a trip to Porto"))
                .build());
    }

    @Test
    void aBranchIsThePathFromTheStartToItsLeafPagedBackwards() {
        writeTree("t");
        assertThat(store.listBranch("t", "a2e", null, 10)).extracting(Message::id).containsExactly("u1", "a1", "u2e", "a2e");
        assertThat(store.listBranch("t", "a2", null, 10)).extracting(Message::id).containsExactly("u1", "a1", "u2", "a2");
        assertThat(store.listBranch("t", "a2e", null, 2)).extracting(Message::id).containsExactly("u2e", "a2e");
        assertThat(store.listBranch("t", "a2e", "u2e", 10)).extracting(Message::id).containsExactly("u1", "a1");
        assertThat(store.listBranch("t", "a2e", "a1", 1)).extracting(Message::id).containsExactly("u1");
        assertThat(store.listBranch("t", "a2e", "u1", 10)).as("nothing before the start").isEmpty();
        assertThat(store.listBranch("t", "a2e", "u2", 10)).as("a cursor off the path").isEmpty();
        assertThat(store.listBranch("t", "t2", null, 10)).as("a step is no leaf").isEmpty();
        assertThat(store.listBranch("other", "a2e", null, 10)).as("another thread's leaf").isEmpty();
        assertThat(store.listBranch("t", "nope", null, 10)).isEmpty();
    }

    @Test
    void forksListTheirSiblingsAndLeadToTheirNewestMessage() {
        writeTree("t");
        assertThat(store.findUserSiblingIds("t", List.of("u2", "u1", "a1", "nope")))
                .containsEntry("u2", List.of("u2", "u2e"))
                .containsEntry("u1", List.of("u1", "u1e"))
                .doesNotContainKeys("a1", "nope");
        assertThat(store.findVariantIds(List.of("u1"))).containsEntry("u1", List.of("a1", "a1b"));
        assertThat(store.findNewestDescendant("t", "u2")).contains("a2");
        assertThat(store.findNewestDescendant("t", "a1")).as("newest below a1").contains("a2e");
        assertThat(store.findNewestDescendant("t", "u1")).contains("a1b");
        assertThat(store.findNewestDescendant("t", "u1e")).as("a leaf is its own newest").contains("u1e");
        assertThat(store.findNewestDescendant("t", "t2")).isEmpty();
        assertThat(store.findNewestDescendant("other", "u1")).isEmpty();
        assertThat(store.findMessages(List.of("a2e", "u1", "nope", "t2"))).extracting(Message::id)
                .containsExactly("u1", "t2", "a2e");
        assertThat(store.listTopLevelMessagesAfter("t", null, 3)).extracting(Message::id).containsExactly("u1", "a1", "u2");
        assertThat(store.listTopLevelMessagesAfter("t", "a2", 3)).extracting(Message::id).containsExactly("u2e", "a2e", "a1b");
        assertThat(store.listTopLevelMessagesAfter("t", "u1e", 3)).isEmpty();
    }

    @Test
    void aTouchMovesTheActiveBranchAndTheSessionHeadOnlyWhenItSaysSo() {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder().touch(new ThreadTouch("t", "s-1", at(1), null, "leaf-1", "head-1")).build());
        ChatThread touched = store.findThread("t").orElseThrow();
        assertThat(touched.activeLeafId()).isEqualTo("leaf-1");
        assertThat(touched.sessionHeadId()).isEqualTo("head-1");
        store.write(StoreBatch.builder().touch(new ThreadTouch("t", null, at(2), null)).build());
        assertThat(store.findThread("t").orElseThrow().activeLeafId()).isEqualTo("leaf-1");
        store.write(StoreBatch.builder().touch(new ThreadTouch("t", null, null, null, "leaf-2", null)).build());
        assertThat(store.findThread("t").orElseThrow().activeLeafId()).isEqualTo("leaf-2");
        assertThat(store.findThread("t").orElseThrow().sessionHeadId()).isEqualTo("head-1");
    }

    @Test
    void aClientMessageIdIsUsedOncePerThread() {
        store.createThread(thread("t", "alice", T0));
        store.createThread(thread("t2", "alice", T0));
        UserMessage first = new UserMessage("m1", "t", "r1", null, MessageStatus.COMPLETED, T0, "hi", "click-1");
        store.write(StoreBatch.builder().message(first).build());
        assertThat(store.findUserMessageByClientId("t", "click-1")).contains(first);
        assertThat(store.findMessage("m1")).contains(first);
        assertThat(store.findUserMessageByClientId("t", "click-2")).isEmpty();
        assertThat(store.findUserMessageByClientId("t2", "click-1")).isEmpty();

        assertThatThrownBy(() -> store.write(StoreBatch.builder().message(new UserMessage("m2", "t", "r2", "m1",
                MessageStatus.COMPLETED, T0, "hi again", "click-1")).build()))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT));
        assertThat(store.findMessage("m2")).isEmpty();
        store.write(StoreBatch.builder().message(first).build());
        store.write(StoreBatch.builder().message(new UserMessage("m3", "t2", "r3", null, MessageStatus.COMPLETED, T0,
                "elsewhere", "click-1")).build());
        assertThat(store.findUserMessageByClientId("t2", "click-1")).map(Message::id).contains("m3");
    }

    @Test
    void searchFindsAnOwnersThreadsByTitleAndTextNewestMatchFirst() {
        store.createThread(new ChatThread("lisbon", "alice", "Lisbon trip", null, null, null, ThreadStatus.ACTIVE, T0,
                at(1)));
        store.createThread(new ChatThread("porto", "alice", "Weekend", null, null, null, ThreadStatus.ACTIVE, T0, at(2)));
        store.createThread(new ChatThread("bobs", "bob", "Lisbon for Bob", null, null, null, ThreadStatus.ACTIVE, T0,
                at(3)));
        store.write(StoreBatch.builder()
                .message(said("l1", "lisbon", null, "Which museums in Lisbon open on Mondays?"))
                .message(replied("l2", "lisbon", "l1", "The tile museum in Lisbon opens Tuesday to Sunday."))
                .message(said("p1", "porto", null, "A weekend in Porto, and maybe a day in Lisbon"))
                .message(said("b1", "bobs", null, "Lisbon Lisbon Lisbon"))
                .build());

        List<ThreadSearchHit> lisbon = store.searchThreads("alice", SearchQuery.of("lisbon"), 0, 10);
        assertThat(lisbon).extracting(hit -> hit.thread().id()).as("newest matching message first, another owner's never")
                .containsExactly("porto", "lisbon");
        assertThat(lisbon).extracting(ThreadSearchHit::messageId).as("the newest matching message").containsExactly("p1", "l2");
        assertThat(lisbon.get(0).snippet().toLowerCase(java.util.Locale.ROOT)).contains("lisbon");
        assertThat(store.searchThreads("alice", SearchQuery.of("tile museum"), 0, 10)).extracting(h -> h.thread().id())
                .containsExactly("lisbon");
        assertThat(store.searchThreads("alice", SearchQuery.of("\"day in lisbon\""), 0, 10))
                .extracting(h -> h.thread().id()).containsExactly("porto");
        assertThat(store.searchThreads("alice", SearchQuery.of("\"lisbon in day\""), 0, 10)).isEmpty();
        assertThat(store.searchThreads("alice", SearchQuery.of("weekend"), 0, 10)).extracting(h -> h.thread().id())
                .containsExactly("porto");
        assertThat(store.searchThreads("alice", SearchQuery.of("lisbon"), 1, 10)).extracting(h -> h.thread().id())
                .containsExactly("lisbon");
        assertThat(store.searchThreads("alice", SearchQuery.of("trip"), 0, 10)).as("a title-only match")
                .extracting(ThreadSearchHit::messageId).containsExactly((String) null);
        assertThat(store.searchThreads("alice", SearchQuery.of("museums"), 0, 10)).hasSize(1);
        assertThat(store.searchThreads("alice", SearchQuery.of("mus"), 0, 10)).as("words match as prefixes").hasSize(1);
        assertThat(store.searchThreads("carol", SearchQuery.of("lisbon"), 0, 10)).isEmpty();
        for (String odd : List.of("lisbon AND NOT porto", "-lisbon", "lisbon*", "\"lisbon", "l'isbon OR",
                "NEAR(lisbon porto)", "lisbon:", "{lisbon}", "%lisbon_", "ลิสบอน", "🙂 lisbon", "lisbon'); DROP TABLE x;--")) {
            assertThat(store.searchThreads("alice", SearchQuery.of(odd), 0, 10)).as(odd).isNotNull();
        }
    }

    /**
     * One owner's ranking is computed from that owner's texts alone: whatever another owner writes (here words
     * that a corpus-wide weighting, such as FTS5's bm25, would count as rare and then as common), the order of
     * the first owner's hits stays the same, so it tells nothing of what others wrote.
     */
    @Test
    void oneOwnersSearchOrderDoesNotDependOnAnotherOwnersTexts() {
        store.createThread(new ChatThread("more-alpha", "alice", null, null, null, null, ThreadStatus.ACTIVE, T0, at(1)));
        store.createThread(new ChatThread("more-beta", "alice", null, null, null, null, ThreadStatus.ACTIVE, T0, at(2)));
        store.createThread(new ChatThread("bobs", "bob", null, null, null, null, ThreadStatus.ACTIVE, T0, at(3)));
        store.write(StoreBatch.builder()
                .message(said("a1", "more-alpha", null, "alpha alpha alpha alpha beta"))
                .message(said("b1", "more-beta", null, "alpha beta beta beta beta"))
                .build());
        java.util.function.Supplier<List<String>> aliceOrder = () -> store.searchThreads("alice",
                SearchQuery.of("alpha beta"), 0, 10).stream().map(hit -> hit.thread().id()).toList();
        List<String> alone = aliceOrder.get();
        assertThat(alone).containsExactlyInAnyOrder("more-alpha", "more-beta");

        StoreBatch.Builder alphaEverywhere = StoreBatch.builder();
        for (int i = 0; i < 30; i++) {
            alphaEverywhere.message(said("bob-" + i, "bobs", null, "alpha and other words of bob's number " + i));
        }
        store.write(alphaEverywhere.build());
        assertThat(aliceOrder.get()).as("after bob wrote alpha everywhere").isEqualTo(alone);

        StoreBatch.Builder betaEverywhere = StoreBatch.builder();
        for (int i = 0; i < 30; i++) {
            betaEverywhere.message(said("bob-" + i, "bobs", null, "beta and other words of bob's number " + i));
        }
        store.write(betaEverywhere.build());
        assertThat(aliceOrder.get()).as("after bob wrote beta everywhere instead").isEqualTo(alone);
    }

    @Test
    void searchFollowsEditsOfMessagesAndTitles() {
        store.createThread(new ChatThread("t", "alice", "Draft", null, null, null, ThreadStatus.ACTIVE, T0, T0));
        store.write(StoreBatch.builder().message(replied("a", "t", "u", "")).build());
        assertThat(store.searchThreads("alice", SearchQuery.of("sardines"), 0, 10)).isEmpty();
        store.write(StoreBatch.builder().message(replied("a", "t", "u", "grilled sardines")).build());
        assertThat(store.searchThreads("alice", SearchQuery.of("sardines"), 0, 10)).hasSize(1);
        store.updateThread(store.findThread("t").orElseThrow().withTitle("Fish dinner"));
        assertThat(store.searchThreads("alice", SearchQuery.of("fish"), 0, 10)).hasSize(1);
        assertThat(store.searchThreads("alice", SearchQuery.of("draft"), 0, 10)).isEmpty();
        store.deleteThread("t");
        assertThat(store.searchThreads("alice", SearchQuery.of("sardines"), 0, 10)).isEmpty();
    }

    // ------------------------------------------------------------------ retention and export reads

    @Test
    void anEndedRunsEventLogIsCompactedOnceAndItsMessagesStay() {
        store.createThread(thread("t", "alice", T0));
        Run ended = run("r", "t", RunStatus.RUNNING).finished(RunStatus.SUCCEEDED, at(10), null, null, null);
        Run later = run("r2", "t", RunStatus.RUNNING).finished(RunStatus.FAILED, at(20), null, null, null);
        store.write(StoreBatch.builder().run(ended).run(later).run(run("r3", "t", RunStatus.RUNNING))
                .message(answer("r-a", "t", "r", "u"))
                .events(List.of(event("r", 1), event("r", 2), event("r", 3), event("r", 4), event("r", 5)))
                .build());
        assertThat(store.findRunsToCompact(at(15), 10)).extracting(Run::id).containsExactly("r");
        assertThat(store.findRunsToCompact(at(25), 1)).extracting(Run::id).containsExactly("r");

        List<RunEvent> kept = List.of(event("r", 1), event("r", 2), event("r", 5));
        store.compactRunEvents("r", kept, at(30));
        assertThat(store.readEvents("r", 0, 100)).containsExactlyElementsOf(kept);
        assertThat(store.lastSeq("r")).isEqualTo(5);
        assertThat(store.findMessage("r-a")).isPresent();
        assertThat(store.findRunsToCompact(at(25), 10)).extracting(Run::id).containsExactly("r2");
    }

    /**
     * A write that took effect before the compaction and is made again after it (its answer was lost) must
     * not put back the events the compaction removed: the log would say it was compacted and hold the run's
     * last events, and not its first ones.
     */
    @Test
    void aCompactedLogTakesNoMoreEvents() {
        store.createThread(thread("t", "alice", T0));
        Run ended = run("r", "t", RunStatus.RUNNING).finished(RunStatus.SUCCEEDED, at(10), null, null, null);
        StoreBatch end = StoreBatch.builder().run(ended)
                .events(List.of(event("r", 3), event("r", 4), event("r", 5))).build();
        store.write(StoreBatch.builder().run(run("r", "t", RunStatus.RUNNING))
                .events(List.of(event("r", 1), event("r", 2))).build());
        store.write(end);
        List<RunEvent> kept = List.of(event("r", 1), event("r", 2), event("r", 5));
        store.compactRunEvents("r", kept, at(30));

        store.write(end);
        store.write(StoreBatch.builder().events(List.of(event("r", 6))).build());
        assertThat(store.readEvents("r", 0, 100)).containsExactlyElementsOf(kept);
        assertThat(store.lastSeq("r")).isEqualTo(5);
        assertThat(store.findRun("r")).contains(ended);
    }

    @Test
    void feedbackIsListedForManyMessages() {
        store.createThread(thread("t", "alice", T0));
        store.saveFeedback(new Feedback("t", "r", "a", "alice", FeedbackRating.UP, null, T0));
        store.saveFeedback(new Feedback("t", "r", "b", "alice", FeedbackRating.DOWN, "no", T0));
        store.saveFeedback(new Feedback("t", "r", "c", "alice", FeedbackRating.UP, null, T0));
        assertThat(store.listFeedback(List.of("a", "b", "zz"))).extracting(Feedback::messageId)
                .containsExactlyInAnyOrder("a", "b");
    }

    // ------------------------------------------------------------------ pending inputs

    protected PendingInput clarify(String runId, String inputId) {
        return new PendingInput(runId, inputId, runId + ":" + inputId,
                new ClarifyRequest("Which one?", List.of("a", "b"), false), null, "resume-7", InputState.PENDING, null,
                T0, null);
    }

    protected PendingInput approval(String runId, String inputId) {
        return new PendingInput(runId, inputId, runId + ":" + inputId,
                new ApprovalRequest("refund", "{\"order\":42}", "Refunds order 42; cannot be undone",
                        List.of(ApprovalDecision.ALLOW_FOR_THREAD), true), at(300), null, InputState.PENDING, null, T0, null);
    }

    protected PendingInput clientTool(String runId, String inputId) {
        return new PendingInput(runId, inputId, runId + ":tool", new ClientToolRequest("exec-1", "pick_date",
                "{\"month\":3}", "{\"type\":\"object\"}"), at(600), null, InputState.PENDING, null, T0, null);
    }

    @Test
    void inputsOfEveryKindRoundTripAndAreAnsweredOnce() {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder().run(run("r", "t", RunStatus.WAITING_FOR_INPUT)).input(clarify("r", "c1"))
                .input(clarify("r", "c2")).input(approval("r", "a1")).input(clientTool("r", "k1")).build());
        store.write(StoreBatch.builder().input(new PendingInput("r", "c1", "other", new ClarifyRequest("changed?",
                List.of(), true), null, null, InputState.CANCELLED, null, T0, null)).build());
        assertThat(store.findInput("r", "c1")).as("an input is inserted once").contains(clarify("r", "c1"));
        assertThat(store.findInput("r", "a1")).contains(approval("r", "a1"));
        assertThat(store.findInput("r", "k1")).contains(clientTool("r", "k1"));
        assertThat(store.listPendingInputs("r")).extracting(PendingInput::inputId).containsExactly("c1", "c2", "a1", "k1");

        ClarifyAnswer b = new ClarifyAnswer(List.of("b"));
        assertThat(store.answerInput("r", "c1", b, at(1))).isEqualTo(AnswerOutcome.ACCEPTED);
        assertThat(store.answerInput("r", "c1", new ClarifyAnswer(List.of("b")), at(2))).isEqualTo(AnswerOutcome.REPLAYED);
        assertThat(store.answerInput("r", "c1", new ClarifyAnswer(List.of("a")), at(3))).isEqualTo(AnswerOutcome.CONFLICT);
        assertThat(store.answerInput("r", "zz", b, at(3))).isEqualTo(AnswerOutcome.NOT_FOUND);
        PendingInput answered = store.findInput("r", "c1").orElseThrow();
        assertThat(answered.state()).isEqualTo(InputState.ANSWERED);
        assertThat(answered.answer()).isEqualTo(b);
        assertThat(answered.resolvedAt()).isEqualTo(at(1));

        ApprovalAnswer allowed = new ApprovalAnswer(ApprovalDecision.ALLOW_FOR_THREAD, "{\"order\":43}");
        assertThat(store.answerInput("r", "a1", allowed, at(4))).isEqualTo(AnswerOutcome.ACCEPTED);
        assertThat(store.answerInput("r", "a1", ApprovalAnswer.of(ApprovalDecision.DENY), at(5)))
                .isEqualTo(AnswerOutcome.CONFLICT);
        assertThat(store.findInput("r", "a1").orElseThrow().answer()).isEqualTo(allowed);
        ClientToolAnswer picked = new ClientToolAnswer("{\"date\":\"2027-03-14\"}", false);
        assertThat(store.answerInput("r", "k1", picked, at(6))).isEqualTo(AnswerOutcome.ACCEPTED);
        assertThat(store.findInput("r", "k1").orElseThrow().answer()).isEqualTo(picked);
        assertThat(store.listPendingInputs("r")).extracting(PendingInput::inputId).containsExactly("c2");

        store.reopenInput("r", "c1");
        assertThat(store.findInput("r", "c1").orElseThrow().state()).isEqualTo(InputState.PENDING);
        assertThat(store.findInput("r", "c1").orElseThrow().answer()).isNull();
        assertThat(store.answerInput("r", "c1", new ClarifyAnswer(List.of("a")), at(7))).isEqualTo(AnswerOutcome.ACCEPTED);

        store.cancelPendingInputs("r", at(8));
        PendingInput cancelled = store.findInput("r", "c2").orElseThrow();
        assertThat(cancelled.state()).isEqualTo(InputState.CANCELLED);
        assertThat(cancelled.resolvedAt()).isEqualTo(at(8));
        assertThat(store.findInput("r", "c1").orElseThrow().state()).isEqualTo(InputState.ANSWERED);
        assertThat(store.answerInput("r", "c2", b, at(9))).isEqualTo(AnswerOutcome.CONFLICT);
        assertThat(store.listPendingInputs("r")).isEmpty();
    }

    /**
     * An ended run waits for no input: storing its end cancels its inputs still pending (in the same write),
     * and an answer taken back after its end is CANCELLED, not pending again — whatever order the engine's
     * callers race in.
     */
    @Test
    void anEndedRunHasNoPendingInput() {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder().run(run("r", "t", RunStatus.WAITING_FOR_INPUT)).input(approval("r", "a1"))
                .input(approval("r", "a2")).build());
        assertThat(store.answerInput("r", "a2", ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE), at(1)))
                .isEqualTo(AnswerOutcome.ACCEPTED);

        store.write(StoreBatch.builder().run(run("r", "t", RunStatus.WAITING_FOR_INPUT).finished(RunStatus.CANCELLED,
                at(2), null, null, null)).build());
        assertThat(store.listPendingInputs("r")).isEmpty();
        assertThat(store.findInput("r", "a1").orElseThrow().state()).isEqualTo(InputState.CANCELLED);

        store.reopenInput("r", "a2");
        assertThat(store.findInput("r", "a2").orElseThrow().state()).isEqualTo(InputState.CANCELLED);
        assertThat(store.listPendingInputs("r")).isEmpty();
        assertThat(store.answerInput("r", "a2", ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE), at(3)))
                .isEqualTo(AnswerOutcome.CONFLICT);
    }

    /** A batch that expects a thread's active leaf is stored only while the leaf is still that one. */
    @Test
    void aBatchExpectingTheActiveLeafIsRefusedWholeWhenTheBranchMoved() {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder().expectActiveLeaf("t", null).touch(new ThreadTouch("t", null, at(1), null, "leaf-1",
                null)).build());
        assertThat(store.findThread("t").orElseThrow().activeLeafId()).isEqualTo("leaf-1");

        assertThatThrownBy(() -> store.write(StoreBatch.builder().expectActiveLeaf("t", null)
                .run(run("r", "t", RunStatus.RUNNING)).touch(new ThreadTouch("t", null, at(2), null, "leaf-2", null))
                .build()))
                .isInstanceOf(BranchMovedException.class)
                .satisfies(e -> assertThat(((dev.parley.chat.ChatException) e).code())
                        .isEqualTo(dev.parley.chat.ErrorCode.CONFLICT));
        assertThat(store.findRun("r")).as("nothing of the refused batch").isEmpty();
        assertThat(store.findThread("t").orElseThrow().activeLeafId()).isEqualTo("leaf-1");

        store.write(StoreBatch.builder().expectActiveLeaf("t", "leaf-1").run(run("r", "t", RunStatus.RUNNING))
                .touch(new ThreadTouch("t", null, at(3), null, "leaf-2", null)).build());
        assertThat(store.findRun("r")).isPresent();
        assertThat(store.findThread("t").orElseThrow().activeLeafId()).isEqualTo("leaf-2");
    }

    @Test
    void anInputIsExpiredOrAnsweredButNeverBoth() {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder().run(run("r", "t", RunStatus.WAITING_FOR_INPUT)).input(approval("r", "a1"))
                .input(approval("r", "a2")).build());
        assertThat(store.closeInput("r", "a1", InputState.EXPIRED, at(301))).isTrue();
        assertThat(store.closeInput("r", "a1", InputState.EXPIRED, at(302))).as("once").isFalse();
        assertThat(store.findInput("r", "a1").orElseThrow().state()).isEqualTo(InputState.EXPIRED);
        assertThat(store.findInput("r", "a1").orElseThrow().resolvedAt()).isEqualTo(at(301));
        assertThat(store.answerInput("r", "a1", ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE), at(303)))
                .isEqualTo(AnswerOutcome.CONFLICT);

        assertThat(store.answerInput("r", "a2", ApprovalAnswer.of(ApprovalDecision.DENY), at(10)))
                .isEqualTo(AnswerOutcome.ACCEPTED);
        assertThat(store.closeInput("r", "a2", InputState.EXPIRED, at(301))).as("an answer came first").isFalse();
        assertThat(store.findInput("r", "a2").orElseThrow().state()).isEqualTo(InputState.ANSWERED);
        assertThat(store.closeInput("r", "ghost", InputState.CANCELLED, at(1))).isFalse();
    }

    @Test
    void racingAnswersGetExactlyOneAcceptance() throws Exception {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder().run(run("r", "t", RunStatus.WAITING_FOR_INPUT)).input(clarify("r", "c")).build());
        List<AnswerOutcome> outcomes = race(8, i -> store.answerInput("r", "c",
                new ClarifyAnswer(List.of("answer " + (i % 2))), at(1)));
        assertThat(outcomes).filteredOn(o -> o == AnswerOutcome.ACCEPTED).hasSize(1);
        assertThat(outcomes).doesNotContain(AnswerOutcome.NOT_FOUND);
    }

    @Test
    void anApprovalForAThreadIsRememberedUntilTheThreadGoes() {
        store.createThread(thread("t", "alice", T0));
        store.createThread(thread("t2", "alice", T0));
        assertThat(store.isApprovedForThread("t", "refund")).isFalse();
        store.rememberApproval("t", "refund", at(1));
        store.rememberApproval("t", "refund", at(2));
        assertThat(store.isApprovedForThread("t", "refund")).isTrue();
        assertThat(store.isApprovedForThread("t", "delete_account")).isFalse();
        assertThat(store.isApprovedForThread("t2", "refund")).as("per thread").isFalse();
        store.deleteThread("t");
        assertThat(store.isApprovedForThread("t", "refund")).isFalse();
    }

    // ------------------------------------------------------------------ feedback and host actions

    @Test
    void feedbackIsOnePerOwnerAndMessage() {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder().run(run("r", "t", RunStatus.SUCCEEDED)).message(answer("a", "t", "r", "u")).build());
        store.saveFeedback(new Feedback("t", "r", "a", "alice", FeedbackRating.UP, null, T0));
        store.saveFeedback(new Feedback("t", "r", "a", "alice", FeedbackRating.DOWN, "wrong year", at(1)));
        store.saveFeedback(new Feedback("t", "r", "a", "bob", FeedbackRating.UP, "nice", at(2)));
        assertThat(store.findFeedback("a", "alice"))
                .contains(new Feedback("t", "r", "a", "alice", FeedbackRating.DOWN, "wrong year", at(1)));
        assertThat(store.findFeedback("a", "bob").orElseThrow().rating()).isEqualTo(FeedbackRating.UP);
        assertThat(store.findFeedback("a", "carol")).isEmpty();
    }

    @Test
    void aHostActionIsClaimedOnceAndItsResultKept() throws Exception {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder().run(run("r", "t", RunStatus.RUNNING)).build());
        List<HostActionRecord> claims = race(8, i -> store.claimHostAction("r", "x1", "lookup", "{\"id\":7}", at(1)));
        assertThat(claims).filteredOn(HostActionRecord::claimedNow).hasSize(1);

        store.completeHostAction("r", "x1", "{\"found\":true}", false, at(2));
        HostActionRecord again = store.claimHostAction("r", "x1", "lookup", "{\"id\":7}", at(3));
        assertThat(again.claimedNow()).isFalse();
        assertThat(again.isCompleted()).isTrue();
        assertThat(again.result()).isEqualTo("{\"found\":true}");
        assertThat(again.error()).isFalse();
        assertThat(again.arguments()).isEqualTo("{\"id\":7}");
        assertThat(again.completedAt()).isEqualTo(at(2));

        store.completeHostAction("r", "x1", "overwritten?", true, at(4));
        assertThat(store.claimHostAction("r", "x1", "lookup", "{}", at(5)).result()).isEqualTo("{\"found\":true}");
        assertThat(store.claimHostAction("r", "x2", "lookup", "{}", at(5)).claimedNow()).isTrue();
    }

    // ------------------------------------------------------------------ leases

    @Test
    void leasesAreHeldRenewedAndTakenOverOnce() throws Exception {
        store.createThread(thread("t", "alice", T0));
        store.write(StoreBatch.builder().run(run("r1", "t", RunStatus.RUNNING))
                .lease(new RunLease("r1", "host-a", at(30))).run(run("r2", "t", RunStatus.QUEUED))
                .run(run("r3", "t", RunStatus.SUCCEEDED)).build());
        assertThat(store.findLease("r1")).contains(new RunLease("r1", "host-a", at(30)));
        assertThat(store.findLease("r2")).isEmpty();

        assertThat(store.leaseRuns("host-a", List.of("r1", "r2", "nope"), at(60))).containsExactlyInAnyOrder("r1", "r2");
        assertThat(store.findLease("r2")).contains(new RunLease("r2", "host-a", at(60)));
        assertThat(store.leaseRuns("host-b", List.of("r1"), at(90))).as("another host's lease is kept").isEmpty();
        assertThat(store.findLease("r1").orElseThrow().instanceId()).isEqualTo("host-a");

        assertThat(store.findRunsWithExpiredLease(at(59))).isEmpty();
        assertThat(store.takeOverRun("r1", "host-b", at(59), at(120))).as("the lease has not expired").isFalse();
        assertThat(store.findRunsWithExpiredLease(at(61))).extracting(Run::id).containsExactlyInAnyOrder("r1", "r2");

        List<Boolean> takes = race(8, i -> store.takeOverRun("r1", "host-" + i, at(61), at(120)));
        assertThat(takes).filteredOn(Boolean::booleanValue).hasSize(1);
        String winner = store.findLease("r1").orElseThrow().instanceId();
        assertThat(store.leaseRuns("host-a", List.of("r1"), at(200))).as("the old holder lost it").isEmpty();
        assertThat(store.leaseRuns(winner, List.of("r1"), at(200))).containsExactly("r1");
        assertThat(store.findRunsWithExpiredLease(at(150))).extracting(Run::id).containsExactly("r2");
        assertThat(store.takeOverRun("r3", "host-a", at(61), at(120))).as("a finished run is not taken over").isFalse();
        assertThat(store.findRunsWithExpiredLease(at(500))).extracting(Run::id).doesNotContain("r3");
        assertThat(store.takeOverRun("ghost", "host-a", at(61), at(120))).isFalse();

        store.deleteThread("t");
        assertThat(store.findLease("r1")).isEmpty();
    }

    /** Runs {@code task} from {@code threads} threads released at the same moment. */
    protected static <T> List<T> race(int threads, java.util.function.IntFunction<T> task) throws Exception {
        return dev.parley.chat.testing.Await.race(threads, task);
    }
}
