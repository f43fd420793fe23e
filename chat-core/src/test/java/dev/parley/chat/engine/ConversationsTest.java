package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.FeedbackRating;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageKind;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.reduce.RunReducer;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.EventCollector;
import dev.parley.chat.testing.InterceptedStore;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Branches (edits), the conversation so far for runtimes, idempotent sends, search, export, retention, erasure. */
class ConversationsTest extends EngineTestSupport {
    private final AtomicInteger sessions = new AtomicInteger();

    /** Reports a session (a new one unless the request continues one) and echoes the message. */
    private ScriptedRuntime.Script echoInASession() {
        return (request, p) -> {
            String session = request.runtimeSessionId() != null ? request.runtimeSessionId()
                    : "s-" + sessions.incrementAndGet();
            p.emit(new AgentStreamEvent.RuntimeSession(session, request.runtimeSessionId() != null));
            p.text("re: " + request.userMessage());
            p.finish();
        };
    }

    private RunTicket send(ChatEngine engine, String threadId, String text) {
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of(text));
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        return ticket;
    }

    private static List<String> topLevelIds(ThreadView view) {
        return view.messages().stream().filter(m -> m.kind().isTopLevel()).map(Message::id).toList();
    }

    // ------------------------------------------------------------------ branches

    @Test
    void anEditStartsABranchBesideTheEditedMessageAndEitherBranchCanBeShown() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(echoInASession());
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = send(engine, threadId, "plan a trip");
        RunTicket second = send(engine, threadId, "to Lisbon");

        RunTicket edited = engine.editMessage(ALICE, second.userMessageId(), StartRun.of("to Porto"));
        awaitRun(engine, edited.runId(), RunStatus.SUCCEEDED);
        UserMessage edit = (UserMessage) store.findMessage(edited.userMessageId()).orElseThrow();
        assertThat(edit.parentMessageId()).as("the same parent as the edited message").isEqualTo(first.assistantMessageId());

        ThreadView view = engine.getThread(ALICE, threadId);
        assertThat(topLevelIds(view)).containsExactly(first.userMessageId(), first.assistantMessageId(),
                edited.userMessageId(), edited.assistantMessageId());
        assertThat(view.branches())
                .containsEntry(edited.userMessageId(),
                        new BranchPosition(1, 2, List.of(second.userMessageId(), edited.userMessageId())))
                .containsEntry(first.userMessageId(), new BranchPosition(0, 1, List.of(first.userMessageId())));

        ThreadView old = engine.switchBranch(ALICE, second.userMessageId());
        assertThat(topLevelIds(old)).as("the old branch and its answer stay").containsExactly(first.userMessageId(),
                first.assistantMessageId(), second.userMessageId(), second.assistantMessageId());
        assertThat(old.branches()).containsEntry(second.userMessageId(),
                new BranchPosition(0, 2, List.of(second.userMessageId(), edited.userMessageId())));

        RunTicket onOld = send(engine, threadId, "what to eat there?");
        assertThat(store.findMessage(onOld.userMessageId()).orElseThrow().parentMessageId())
                .as("a new message follows the active branch").isEqualTo(second.assistantMessageId());
        assertThat(topLevelIds(engine.switchBranch(ALICE, edited.assistantMessageId())))
                .endsWith(edited.userMessageId(), edited.assistantMessageId());
    }

    /**
     * Rolling back to an earlier answer ends the active branch there; the next message starts a new branch
     * beside the rolled-back one, the runtime gets the conversation up to that answer (no session, none of what
     * came after), and nothing is lost: the old branch comes back with a switch. Undo takes the last exchange
     * back the same way.
     */
    @Test
    void rollingBackOrUndoingMovesTheBranchEndAndTheRuntimeSeesNothingAfterIt() throws Exception {
        ScriptedRuntime runtime = ScriptedRuntime.playing(echoInASession());
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = send(engine, threadId, "one");
        RunTicket second = send(engine, threadId, "two");
        RunTicket third = send(engine, threadId, "three");

        assertThat(topLevelIds(engine.rollBack(ALICE, first.assistantMessageId())))
                .containsExactly(first.userMessageId(), first.assistantMessageId());
        RunTicket again = send(engine, threadId, "two, again");
        RunRequest afterRollBack = runtime.requests().get(3);
        assertThat(afterRollBack.runtimeSessionId()).as("the session saw what was rolled back").isNull();
        assertThat(afterRollBack.history().messages()).extracting(Message::id)
                .containsExactly(first.userMessageId(), first.assistantMessageId());
        ThreadView view = engine.getThread(ALICE, threadId);
        assertThat(view.branches()).containsEntry(again.userMessageId(),
                new BranchPosition(1, 2, List.of(second.userMessageId(), again.userMessageId())));

        assertThat(topLevelIds(engine.switchBranch(ALICE, second.userMessageId()))).as("nothing was lost")
                .containsExactly(first.userMessageId(), first.assistantMessageId(), second.userMessageId(),
                        second.assistantMessageId(), third.userMessageId(), third.assistantMessageId());
        assertThat(topLevelIds(engine.undo(ALICE, threadId))).containsExactly(first.userMessageId(),
                first.assistantMessageId(), second.userMessageId(), second.assistantMessageId());
        send(engine, threadId, "three, again");
        RunRequest afterUndo = runtime.requests().get(4);
        assertThat(afterUndo.runtimeSessionId()).isNull();
        assertThat(afterUndo.history().messages()).extracting(Message::id).containsExactly(first.userMessageId(),
                first.assistantMessageId(), second.userMessageId(), second.assistantMessageId());

        java.io.ByteArrayOutputStream markdown = new java.io.ByteArrayOutputStream();
        engine.exportThread(ALICE, threadId, ExportFormat.MARKDOWN, markdown);
        assertThat(markdown.toString(StandardCharsets.UTF_8)).as("the branch point shows in the Markdown").contains(
                "**You:**\n\none\n", "**You:** _(version 1 of 2 here: the conversation branched; the JSON export"
                        + " holds every branch)_\n\ntwo\n", "**You:** _(version 2 of 2 here");
        engine.undo(ALICE, threadId);
        assertThat(topLevelIds(engine.undo(ALICE, threadId)))
                .containsExactly(first.userMessageId(), first.assistantMessageId());
        assertCode(ErrorCode.CONFLICT, () -> engine.undo(ALICE, threadId));
        assertThat(topLevelIds(engine.getThread(ALICE, threadId))).as("a refused undo changes nothing")
                .containsExactly(first.userMessageId(), first.assistantMessageId());

        assertCode(ErrorCode.INVALID_INPUT, () -> engine.rollBack(ALICE, second.userMessageId()));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.rollBack(MALLORY, second.assistantMessageId()));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.undo(MALLORY, threadId));
        String empty = engine.createThread(ALICE, NewThread.empty()).id();
        assertCode(ErrorCode.CONFLICT, () -> engine.undo(ALICE, empty));
    }

    /**
     * A stopped answer is continued by a new run on the same branch: the runtime has the partial answer in the
     * conversation and is asked to go on. Only the branch's last answer, and not while a run is going on.
     */
    @Test
    void aStoppedAnswerIsContinuedWithThePartialAnswerInTheConversation() {
        ScriptedRuntime runtime = ScriptedRuntime.of(r -> r.userMessage().equals("long")
                ? Scripts.streamsUntilCancelled() : Scripts.instant("and the rest."));
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = send(engine, threadId, "hello");
        RunTicket stopped = engine.startRun(ALICE, threadId, StartRun.of("long"));
        await(() -> engine.getThread(ALICE, threadId).messages().stream()
                .filter(m -> m.id().equals(stopped.assistantMessageId()))
                .map(m -> ((dev.parley.chat.model.AssistantMessage) m).text()).findFirst().orElse(""),
                "Partial answer"::equals, "the partial answer");
        assertCode(ErrorCode.CONFLICT, () -> engine.continueAnswer(ALICE, first.assistantMessageId()));
        engine.cancel(ALICE, stopped.runId());
        awaitRun(engine, stopped.runId(), RunStatus.CANCELLED);

        assertCode(ErrorCode.CONFLICT, () -> engine.continueAnswer(ALICE, first.assistantMessageId()));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.continueAnswer(ALICE, stopped.userMessageId()));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.continueAnswer(MALLORY, stopped.assistantMessageId()));
        RunTicket going = engine.continueAnswer(ALICE, stopped.assistantMessageId());
        awaitRun(engine, going.runId(), RunStatus.SUCCEEDED);
        RunRequest request = runtime.requests().get(2);
        assertThat(request.userMessage()).isEqualTo(ChatEngine.CONTINUE_PROMPT);
        assertThat(store.findMessage(going.userMessageId()).orElseThrow().parentMessageId())
                .as("on the same branch").isEqualTo(stopped.assistantMessageId());
        assertThat(request.history().messages()).as("the conversation, with the partial answer last")
                .last().satisfies(m -> {
                    assertThat(m.id()).isEqualTo(stopped.assistantMessageId());
                    assertThat(((dev.parley.chat.model.AssistantMessage) m).text()).isEqualTo("Partial answer");
                });
    }

    @Test
    void editingAndSwitchingFollowTheRulesOfABusyThread() {
        ScriptedRuntime runtime = ScriptedRuntime.of(r -> r.userMessage().equals("long") ? Scripts.streamsUntilCancelled()
                : Scripts.instant("ok"));
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = send(engine, threadId, "hi");
        RunTicket busy = engine.startRun(ALICE, threadId, StartRun.of("long"));
        await(() -> runtime.isPlaying(busy.runId()), playing -> playing, "the long run");

        assertCode(ErrorCode.CONFLICT, () -> engine.editMessage(ALICE, first.userMessageId(), StartRun.of("hello")));
        assertCode(ErrorCode.CONFLICT, () -> engine.switchBranch(ALICE, first.userMessageId()));
        assertCode(ErrorCode.CONFLICT, () -> engine.rollBack(ALICE, first.assistantMessageId()));
        assertCode(ErrorCode.CONFLICT, () -> engine.undo(ALICE, threadId));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.editMessage(ALICE, first.assistantMessageId(), StartRun.of("x")));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.editMessage(MALLORY, first.userMessageId(), StartRun.of("x")));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.editMessage(ALICE, first.userMessageId(), StartRun.of(" ")));
        engine.cancel(ALICE, busy.runId());
    }

    // ------------------------------------------------------------------ the runtime's session and the history

    @Test
    void aRunContinuesTheSessionOnlyOnItsLineAndIsGivenTheConversationOtherwise() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(echoInASession());
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = send(engine, threadId, "one");
        RunTicket second = send(engine, threadId, "two");
        List<RunRequest> requests = runtime.requests();
        assertThat(requests.get(0).runtimeSessionId()).isNull();
        assertThat(requests.get(1).runtimeSessionId()).as("the next message continues the session").isEqualTo("s-1");

        RunTicket edit = engine.editMessage(ALICE, second.userMessageId(), StartRun.of("two, edited"));
        awaitRun(engine, edit.runId(), RunStatus.SUCCEEDED);
        RunRequest edited = runtime.requests().get(2);
        assertThat(edited.runtimeSessionId()).as("the session saw the other branch").isNull();
        assertThat(edited.history().messages()).extracting(Message::id)
                .containsExactly(first.userMessageId(), first.assistantMessageId());
        assertThat(store.findThread(threadId).orElseThrow().runtimeSessionId()).isEqualTo("s-2");

        RunTicket after = send(engine, threadId, "three");
        assertThat(runtime.requests().get(3).runtimeSessionId()).as("the new session goes on").isEqualTo("s-2");
        engine.switchBranch(ALICE, second.userMessageId());
        RunTicket onOld = send(engine, threadId, "three on the old branch");
        RunRequest switched = runtime.requests().get(4);
        assertThat(switched.runtimeSessionId()).isNull();
        assertThat(switched.history().messages()).extracting(Message::id).containsExactly(first.userMessageId(),
                first.assistantMessageId(), second.userMessageId(), second.assistantMessageId());
        assertThat(after.runId()).isNotEqualTo(onOld.runId());
    }

    /**
     * A regeneration gives the runtime exactly the conversation before the question, never the session: the
     * session already holds the question and the answer being replaced, and a runtime continuing it would
     * see the question twice and the old answer (as a real Hermes Bridge did). The new session goes on.
     */
    @Test
    void regeneratingGivesTheRuntimeTheConversationBeforeTheQuestionNotTheSession() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(echoInASession());
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = send(engine, threadId, "one");
        RunTicket second = send(engine, threadId, "two");
        assertThat(runtime.requests().get(1).runtimeSessionId()).isEqualTo("s-1");

        RunTicket again = engine.regenerate(ALICE, second.assistantMessageId());
        awaitRun(engine, again.runId(), RunStatus.SUCCEEDED);
        assertThat(runtime.retries()).containsExactly(again.runId());
        RunRequest regenerated = runtime.requests().get(2);
        assertThat(regenerated.runtimeSessionId()).as("the session holds the old answer").isNull();
        assertThat(regenerated.userMessage()).isEqualTo("two");
        assertThat(regenerated.history().messages()).extracting(Message::id)
                .containsExactly(first.userMessageId(), first.assistantMessageId());

        send(engine, threadId, "three");
        assertThat(runtime.requests().get(3).runtimeSessionId()).as("the regeneration's session goes on")
                .isEqualTo("s-2");
    }

    @Test
    void theHistoryHoldsToolStepsAndKeepsTheNewestWithinItsLimits() {
        ScriptedRuntime runtime = ScriptedRuntime.of(request -> request.userMessage().equals("tools")
                ? Scripts.toolsAndTodos() : Scripts.instant("answer to " + request.userMessage()));
        ChatEngine engine = engine(runtime, b -> b.limits(EngineLimits.defaults().withHistory(4, 10_000)));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        send(engine, threadId, "first");
        send(engine, threadId, "tools");
        RunTicket third = send(engine, threadId, "third");
        RunTicket edit = engine.editMessage(ALICE, third.userMessageId(), StartRun.of("third again"));
        awaitRun(engine, edit.runId(), RunStatus.SUCCEEDED);
        List<Message> history = runtime.requests().get(3).history().messages();
        assertThat(history.stream().filter(m -> m.kind().isTopLevel()).count()).as("the newest 4 of 4+").isEqualTo(4);
        assertThat(history.get(0).kind()).isEqualTo(MessageKind.USER);
        assertThat(history).anyMatch(ActionExecutionMessage.class::isInstance).anyMatch(ResultMessage.class::isInstance);

        ChatEngine tight = engine(runtime, b -> b.limits(EngineLimits.defaults().withHistory(200, 40)));
        String other = tight.createThread(ALICE, NewThread.empty()).id();
        send(tight, other, "a message of some length");
        RunTicket last = tight.startRun(ALICE, other, StartRun.of("x"));
        awaitRun(tight, last.runId(), RunStatus.SUCCEEDED);
        List<Message> bounded = runtime.requests().get(runtime.requests().size() - 1).history().messages();
        assertThat(bounded).as("only what fits in 40 characters, newest kept").extracting(Message::kind)
                .containsExactly(MessageKind.ASSISTANT);
    }

    @Test
    void aRuntimeThatDoesNotAskForTheHistoryCostsNoRead() {
        AtomicInteger branchReads = new AtomicInteger();
        store = InterceptedStore.of(new InMemoryChatStore(), (method, args, proceed) -> {
            if (method.equals("listBranch") && Thread.currentThread().getName().startsWith("script-")) {
                branchReads.incrementAndGet();
            }
            return proceed.call();
        });
        ScriptedRuntime runtime = ScriptedRuntime.playing((request, p) -> {
            if (request.userMessage().equals("remember")) {
                p.text("you said " + request.history().messages().size());
            }
            p.finish();
        });
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        send(engine, threadId, "one");
        send(engine, threadId, "two");
        assertThat(branchReads).hasValue(0);
        send(engine, threadId, "remember");
        assertThat(branchReads).hasValue(1);
    }

    // ------------------------------------------------------------------ idempotent sends

    @Test
    void aRetriedSendWithTheSameClientIdStartsNothingNew() throws Exception {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.instant("ok"));
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        StartRun send = StartRun.of("hello").withClientMessageId("click-1");
        RunTicket first = engine.startRun(ALICE, threadId, send);
        assertThat(first.replayed()).isFalse();
        awaitRun(engine, first.runId(), RunStatus.SUCCEEDED);

        RunTicket retried = engine.startRun(ALICE, threadId, send);
        assertThat(retried.replayed()).isTrue();
        assertThat(retried.runId()).isEqualTo(first.runId());
        assertThat(retried.status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(((UserMessage) store.findMessage(first.userMessageId()).orElseThrow()).clientMessageId())
                .isEqualTo("click-1");
        assertCode(ErrorCode.CONFLICT, () -> engine.startRun(ALICE, threadId, StartRun.of("other").withClientMessageId("click-1")));
        assertThat(runtime.requests()).hasSize(1);
        assertThat(store.findThreadRuns(threadId, EnumSet.allOf(RunStatus.class))).hasSize(1);

        String racy = engine.createThread(ALICE, NewThread.empty()).id();
        StartRun twice = StartRun.of("at once").withClientMessageId("click-2");
        List<Object> outcomes = dev.parley.chat.testing.Await.race(4, i -> {
            try {
                return engine.startRun(ALICE, racy, twice);
            } catch (dev.parley.chat.ChatException e) {
                return e.code();
            }
        });
        assertThat(outcomes).allMatch(RunTicket.class::isInstance);
        assertThat(outcomes).map(o -> ((RunTicket) o).runId()).containsOnly(((RunTicket) outcomes.get(0)).runId());
        assertThat(outcomes).filteredOn(o -> !((RunTicket) o).replayed()).hasSize(1);
    }

    // ------------------------------------------------------------------ search, export

    @Test
    void searchFindsTheCallersThreadsAndRefusesQueriesWithoutWords() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("noted")));
        String lisbon = engine.createThread(ALICE, new NewThread("Lisbon", null, null)).id();
        send(engine, lisbon, "pastel de nata recipes");
        String elsewhere = engine.createThread(MALLORY, new NewThread("Lisbon too", null, null)).id();
        assertThat(engine.searchThreads(ALICE, "nata", null, 10).hits()).extracting(h -> h.thread().id())
                .containsExactly(lisbon);
        assertThat(engine.searchThreads(ALICE, "LISBON", null, 10).hits()).extracting(h -> h.thread().id())
                .containsExactly(lisbon);
        assertThat(engine.searchThreads(ALICE, "nata", null, 10).nextCursor()).isNull();
        assertThat(engine.searchThreads(MALLORY, "nata", null, 10).hits()).isEmpty();
        assertThat(elsewhere).isNotNull();
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.searchThreads(ALICE, "  \"\" *** ", null, 10));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.searchThreads(ALICE, "x".repeat(501), null, 10));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.searchThreads(ALICE, "nata", null, 0));
    }

    @Test
    void searchPagesByCursorLikeEveryOtherList() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("noted")));
        for (int i = 0; i < 5; i++) {
            engine.createThread(ALICE, new NewThread("okapi notes " + i, null, null));
        }
        engine.createThread(ALICE, new NewThread("giraffe notes", null, null));
        List<String> everyHit = engine.searchThreads(ALICE, "okapi", null, 50).hits().stream()
                .map(h -> h.thread().id()).toList();
        assertThat(everyHit).hasSize(5);

        List<String> paged = new ArrayList<>();
        List<Integer> sizes = new ArrayList<>();
        String cursor = null;
        do {
            SearchPage page = engine.searchThreads(ALICE, "okapi", cursor, 2);
            page.hits().forEach(h -> paged.add(h.thread().id()));
            sizes.add(page.hits().size());
            cursor = page.nextCursor();
        } while (cursor != null);
        assertThat(sizes).containsExactly(2, 2, 1);
        assertThat(paged).as("the pages together are the whole ranking, in order").isEqualTo(everyHit);

        String second = engine.searchThreads(ALICE, "okapi", null, 2).nextCursor();
        assertThat(engine.searchThreads(ALICE, "  OKAPI ", second, 2).hits()).as("the same query, typed again")
                .extracting(h -> h.thread().id()).isEqualTo(everyHit.subList(2, 4));
        assertThat(engine.searchThreads(MALLORY, "okapi", second, 2).hits()).as("another owner's cursor shows nothing of Alice's")
                .isEmpty();
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.searchThreads(ALICE, "okapi", "2", 2));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.searchThreads(ALICE, "okapi", "not a cursor!", 2));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.searchThreads(ALICE, "giraffe", second, 2));
        String threadCursor = engine.listThreads(ALICE, null, 2).nextCursor();
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.searchThreads(ALICE, "okapi", threadCursor, 2));
        String negative = java.util.Base64.getUrlEncoder().withoutPadding()
                .encodeToString(new String(java.util.Base64.getUrlDecoder().decode(second)).replace(":2:", ":-2:")
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.searchThreads(ALICE, "okapi", negative, 2));
    }

    @Test
    void anExportHoldsEveryBranchAsJsonAndTheActiveOneAsMarkdown() throws Exception {
        ScriptedRuntime runtime = ScriptedRuntime.of(request -> request.userMessage().equals("tools")
                ? Scripts.toolsAndTodos() : Scripts.instant("answer to " + request.userMessage()));
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, new NewThread("Trip", null, null)).id();
        RunTicket first = send(engine, threadId, "tools");
        RunTicket second = send(engine, threadId, "old question");
        RunTicket edit = engine.editMessage(ALICE, second.userMessageId(), StartRun.of("new question"));
        awaitRun(engine, edit.runId(), RunStatus.SUCCEEDED);
        engine.feedback(ALICE, first.assistantMessageId(), FeedbackRating.UP, "nice");

        ByteArrayOutputStream json = new ByteArrayOutputStream();
        engine.exportThread(ALICE, threadId, ExportFormat.JSON, json);
        JsonNode doc = ChatJson.shared().readTree(json.toString(StandardCharsets.UTF_8));
        assertThat(doc.get("format").asText()).isEqualTo("parley-thread");
        assertThat(doc.get("version").asInt()).isEqualTo(1);
        assertThat(doc.get("thread").get("title").asText()).isEqualTo("Trip");
        List<String> ids = new ArrayList<>();
        doc.get("messages").forEach(entry -> ids.add(entry.get("message").get("id").asText()));
        assertThat(ids).as("every branch").contains(second.userMessageId(), second.assistantMessageId(),
                edit.userMessageId(), edit.assistantMessageId());
        JsonNode answer = doc.get("messages").get(1);
        assertThat(answer.get("steps").size()).as("tool calls, results, todos, status").isGreaterThan(2);
        assertThat(answer.get("feedback").get(0).get("comment").asText()).isEqualTo("nice");
        List<String> active = new ArrayList<>();
        doc.get("activeBranch").forEach(id -> active.add(id.asText()));
        assertThat(active).containsExactly(first.userMessageId(), first.assistantMessageId(), edit.userMessageId(),
                edit.assistantMessageId());

        ByteArrayOutputStream markdown = new ByteArrayOutputStream();
        engine.exportThread(ALICE, threadId, ExportFormat.MARKDOWN, markdown);
        String text = markdown.toString(StandardCharsets.UTF_8);
        assertThat(text).startsWith("# Trip\n").contains("**You:** _(version 2 of 2 here: the conversation branched; the JSON"
                + " export holds every branch)_\n\nnew question", "answer to new question",
                "Tool `web_search`").doesNotContain("old question");
        assertThat(text.indexOf("tools")).isLessThan(text.indexOf("new question"));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.exportThread(MALLORY, threadId, ExportFormat.JSON,
                new ByteArrayOutputStream()));
    }

    // ------------------------------------------------------------------ retention, erasure

    @Test
    void anOldRunsLogIsCompactedAndItsReplaySaysSoAndStillShowsItsMessages() throws Exception {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.manyDeltas(300)));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = send(engine, threadId, "long");
        Run ended = await(() -> store.findRun(ticket.runId()).orElseThrow(), r -> r.status().isTerminal(), "stored");
        List<Message> stored = storedMessagesOf(ended);
        Thread.sleep(5);

        assertThat(engine.compactEventLogs(Duration.ofDays(1))).as("too recent").isZero();
        assertThat(engine.compactEventLogs(Duration.ofMillis(1))).isEqualTo(1);
        assertThat(engine.compactEventLogs(Duration.ofMillis(1))).as("once").isZero();
        List<RunEvent> log = store.readEvents(ticket.runId(), 0, 1000);
        assertThat(log).hasSize(4);
        assertThat(log.get(2).event()).isInstanceOfSatisfying(AgentStreamEvent.StatusUpdate.class,
                status -> assertThat(status.text()).contains("compacted"));

        EventCollector replay = EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, ticket.runId(), 0))
                .awaitDone();
        RunReducer reducer = new RunReducer();
        replay.events().forEach(reducer::apply);
        assertThat(reducer.status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(reducer.messages()).filteredOn(m -> m.kind() != MessageKind.STATUS).containsExactlyElementsOf(stored);
    }

    @Test
    void erasingAnOwnerRemovesEverythingOfTheirsAndNothingOfAnyoneElse() {
        ScriptedRuntime runtime = ScriptedRuntime.of(request -> request.userMessage().equals("long")
                ? Scripts.streamsUntilCancelled() : Scripts.instant("ok"));
        ChatEngine engine = engine(runtime);
        List<String> alices = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            alices.add(threadId);
            RunTicket done = send(engine, threadId, "hello " + i);
            engine.feedback(ALICE, done.assistantMessageId(), FeedbackRating.UP, null);
        }
        RunTicket streaming = engine.startRun(ALICE, alices.get(0), StartRun.of("long"));
        await(() -> runtime.isPlaying(streaming.runId()), playing -> playing, "the long run");
        String mallorys = engine.createThread(MALLORY, NewThread.empty()).id();
        engine.startRun(MALLORY, mallorys, StartRun.of("mine"));

        assertThat(engine.eraseOwner(ALICE)).isEqualTo(3);
        assertThat(engine.listThreads(ALICE)).isEmpty();
        for (String threadId : alices) {
            assertThat(store.findThread(threadId)).isEmpty();
            assertThat(store.listTopLevelMessages(threadId, null, 10)).isEmpty();
            assertThat(store.findThreadRuns(threadId, EnumSet.allOf(RunStatus.class))).isEmpty();
        }
        assertThat(store.readEvents(streaming.runId(), 0, 10)).isEmpty();
        assertThat(engine.listThreads(MALLORY)).extracting(t -> t.id()).containsExactly(mallorys);
        assertThat(engine.eraseOwner(ALICE)).as("again: nothing left").isZero();
    }

    /**
     * Two messages sent to one thread at the same moment (ENQUEUE) follow one another on the branch: the
     * second answers the first's answer. Here both senders read the thread before either run is stored; the
     * parent is decided when the run is stored, so the first message does not drop off the branch (and out of
     * the history the runtime gets).
     */
    /**
     * A branch move races a message sent meanwhile: the move checked the thread was idle, the message's run
     * started, then the move wrote its branch and left the new message (and its live run) off the active branch.
     * Every move (a switch, a roll back, an undo) expects the branch it read, and answers CONFLICT when a
     * message moved it.
     */
    @ParameterizedTest
    @ValueSource(strings = {"switch", "roll back", "undo"})
    void aBranchMoveRacingASendNeverLeavesTheNewMessageOffTheActiveBranch(String move) {
        java.util.concurrent.atomic.AtomicReference<Runnable> meanwhile = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicReference<String> movedTo = new java.util.concurrent.atomic.AtomicReference<>("");
        ChatStore real = store;
        store = InterceptedStore.of(real, (method, args, proceed) -> {
            if (method.equals("write") && ((StoreBatch) args[0]).threadTouches().stream()
                    .anyMatch(touch -> movedTo.get().equals(touch.activeLeafId()))) {
                Runnable send = meanwhile.getAndSet(null);
                if (send != null) {
                    send.run();
                }
            }
            return proceed.call();
        });
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("ok")));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = send(engine, threadId, "plan a trip");
        RunTicket second = send(engine, threadId, "to Lisbon");
        RunTicket edited = engine.editMessage(ALICE, second.userMessageId(), StartRun.of("to Porto"));
        awaitRun(engine, edited.runId(), RunStatus.SUCCEEDED);

        List<RunTicket> sent = new java.util.concurrent.CopyOnWriteArrayList<>();
        movedTo.set(move.equals("switch") ? second.assistantMessageId() : first.assistantMessageId());
        meanwhile.set(() -> sent.add(engine.startRun(ALICE, threadId, StartRun.of("and then?"))));
        assertCode(ErrorCode.CONFLICT, () -> {
            switch (move) {
                case "switch" -> engine.switchBranch(ALICE, second.userMessageId());
                case "roll back" -> engine.rollBack(ALICE, first.assistantMessageId());
                default -> engine.undo(ALICE, threadId);
            }
        });

        RunTicket then = sent.get(0);
        awaitRun(engine, then.runId(), RunStatus.SUCCEEDED);
        assertThat(topLevelIds(engine.getThread(ALICE, threadId))).as("the new message stays on the active branch")
                .endsWith(edited.userMessageId(), edited.assistantMessageId(), then.userMessageId(),
                        then.assistantMessageId());
    }

    @Test
    void twoMessagesSentAtOnceFollowOneAnotherOnTheBranch() throws Exception {
        java.util.concurrent.CyclicBarrier bothRead = new java.util.concurrent.CyclicBarrier(2);
        AtomicInteger reads = new AtomicInteger();
        store = InterceptedStore.of(store, (method, args, proceed) -> {
            Object result = proceed.call();
            if (method.equals("findThread") && reads.get() >= 0 && reads.incrementAndGet() <= 2) {
                bothRead.await(5, java.util.concurrent.TimeUnit.SECONDS);
            }
            return result;
        });
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.instant("ok"));
        ChatEngine engine = engine(runtime, b -> b.doubleTexting(DoubleTexting.ENQUEUE));
        reads.set(-1);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        send(engine, threadId, "hello");
        reads.set(0);

        List<RunTicket> tickets = dev.parley.chat.testing.Await.race(2,
                i -> engine.startRun(ALICE, threadId, StartRun.of("at once " + i)));
        for (RunTicket ticket : tickets) {
            awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        }
        List<Message> branch = engine.getThread(ALICE, threadId).messages().stream()
                .filter(m -> m.kind().isTopLevel()).toList();
        assertThat(branch).as("hello, its answer, both messages and their answers").hasSize(6);
        assertThat(branch).filteredOn(m -> m.kind() == MessageKind.USER).extracting(m -> ((UserMessage) m).text())
                .containsExactlyInAnyOrder("hello", "at once 0", "at once 1");
        for (int i = 1; i < branch.size(); i++) {
            assertThat(branch.get(i).parentMessageId()).isEqualTo(branch.get(i - 1).id());
        }
        assertThat(runtime.requests().get(2).history().messages()).as("the last run's runtime saw both earlier turns")
                .hasSize(4);
    }
}
