package dev.parley.chat.spring.internal.agui;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.RunState;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.ClientToolAnswer;
import dev.parley.chat.input.ClientToolRequest;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.spring.internal.ClientContexts;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What an AG-UI input asks of Parley, done: a new turn (or an edit), answers to interrupts ({@code resume}),
 * results of the page's tools (trailing {@code tool} messages), or a re-join of a run already started by the
 * same user message. The result names the Parley run whose events answer the request.
 *
 * <p>Thread-safe (stateless besides the engine).
 */
final class AgUiTurns {
    /** How long a new turn waits for a thread whose run this request just stopped to become free. */
    private static final long FREE_WAIT_MILLIS = 5_000;

    private final ChatEngine engine;
    private final ClientContexts contexts;
    private final boolean newMessageStopsRun;
    private final String downloadPath;

    /**
     * @param newMessageStopsRun whether a new user message stops the thread's run that is still working (AG-UI
     *     clients, whose only stop is dropping the stream); false for clients that stop runs explicitly
     *     (CopilotKit's {@code /stop}), where the new message follows the engine's double-texting rule. A run
     *     that waits only for the page's tools is stopped either way: the page chose not to run them.
     */
    AgUiTurns(ChatEngine engine, ClientContexts contexts, boolean newMessageStopsRun, String downloadPath) {
        this.downloadPath = downloadPath;
        this.engine = engine;
        this.contexts = contexts;
        this.newMessageStopsRun = newMessageStopsRun;
    }

    /** The Parley run to stream, and what the frames need to know about it. */
    record Plan(String runId, String assistantMessageId, ArrayNode snapshot, long planSeq, Set<String> stillPending,
            Set<String> answeredNow, boolean cancelExpected) {
    }

    /** A request Parley refuses after reading it: answered with a lone {@code RUN_ERROR}. */
    static final class Refused extends RuntimeException {
        private final String code;

        Refused(String code, String message) {
            super(message, null, false, false);
            this.code = code;
        }

        String code() {
            return code;
        }
    }

    /**
     * Carries out the input for the caller.
     *
     * @throws ChatException NOT_FOUND for another owner's thread; INVALID_INPUT for input of the wrong shape
     *     (nothing changed)
     * @throws Refused for input Parley cannot act on: history the thread does not have, open interrupts left
     *     unanswered, a busy thread, nothing to answer
     */
    Plan plan(String ownerId, AgUiInput input) {
        try {
            boolean firstUse = !threadExists(ownerId, input.threadId());
            if (firstUse) {
                checkFirstUse(ownerId, input);
                engine.openThread(ownerId, input.threadId());
            }
            AgUiHistory history = AgUiHistory.read(engine, ownerId, input.threadId(), downloadPath);
            Optional<RunState> latest = history.latestRunId().map(id -> engine.state(ownerId, id));
            if (!input.resume().isEmpty() || (!input.trailingToolResults().isEmpty() && waiting(latest))) {
                return answer(ownerId, input, history, latest.orElseThrow(() -> new Refused("NOT_FOUND",
                        "the thread has no run waiting for the answers in this input")));
            }
            AgUiInput.Message user = input.trailingUser();
            if (user == null) {
                throw new Refused("INVALID_INPUT", "the input ends with neither a user message nor tool results"
                        + " and answers no interrupt: there is nothing to run");
            }
            return turn(ownerId, input, history, latest, user, firstUse);
        } catch (ChatException e) {
            if (e.code() == ErrorCode.NOT_FOUND || e.code() == ErrorCode.INVALID_INPUT) {
                throw e;
            }
            throw new Refused(e.code().name(), e.getMessage());
        }
    }

    /** False for a thread nobody has yet, and for another owner's (opening it then says NOT_FOUND). */
    private boolean threadExists(String ownerId, String threadId) {
        try {
            engine.getThread(ownerId, threadId, null, 1);
            return true;
        } catch (ChatException e) {
            if (e.code() != ErrorCode.NOT_FOUND) {
                throw e;
            }
            return false;
        }
    }

    /**
     * Refuses, before the thread is created on first use, an input that would be refused on the new thread:
     * answers to nothing, no message to run, a history the new thread does not have, a message the engine
     * would not take. Bad input changes nothing, not even by creating an empty thread.
     */
    private void checkFirstUse(String ownerId, AgUiInput input) {
        if (!input.resume().isEmpty() || !input.trailingToolResults().isEmpty()) {
            throw new Refused("NOT_FOUND", "thread " + input.threadId() + " has no run waiting for the answers in"
                    + " this input");
        }
        AgUiInput.Message user = input.trailingUser();
        if (user == null) {
            throw new Refused("INVALID_INPUT", "the input ends with neither a user message nor tool results"
                    + " and answers no interrupt: there is nothing to run");
        }
        if (input.messages().stream().anyMatch(m -> m.isUser() && !m.id().equals(user.id()))) {
            throw new Refused("HISTORY_MISMATCH", "thread " + input.threadId() + " is new, and the input sends"
                    + " earlier messages; AG-UI cannot add past messages to a thread");
        }
        engine.checkStartRun(startRequest(ownerId, input, user));
    }

    private StartRun startRequest(String ownerId, AgUiInput input, AgUiInput.Message user) {
        return new StartRun(user.text(), null, null, null, runContext(ownerId, input)).withClientTools(input.tools())
                .withClientMessageId(user.id());
    }

    /** Uploads the new message's files; a refusal on a thread created for this input deletes the thread. */
    private List<String> upload(String ownerId, AgUiInput input, AgUiInput.Message user, boolean firstUse) {
        try {
            return AgUiParts.upload(engine, ownerId, input.threadId(), user.files());
        } catch (ChatException e) {
            if (firstUse) {
                try {
                    engine.deleteThread(ownerId, input.threadId());
                } catch (ChatException cleanup) {
                    e.addSuppressed(cleanup);
                }
            }
            throw e;
        }
    }

    /** Where a thread's attachments are downloaded: this prefix and the attachment id. */
    String downloadPath() {
        return downloadPath;
    }

    private static boolean waiting(Optional<RunState> latest) {
        return latest.map(s -> s.run().status() == RunStatus.WAITING_FOR_INPUT).orElse(false);
    }

    // ------------------------------------------------------------------ a user message

    /** @param firstUse the thread was created for this input: a refused attachment deletes it again */
    private Plan turn(String ownerId, AgUiInput input, AgUiHistory history, Optional<RunState> latest,
            AgUiInput.Message user, boolean firstUse) {
        Optional<UserMessage> known = history.user(user.id());
        if (known.isPresent()) {
            return stream(ownerId, input, known.get().runId(), Set.of(), false);
        }
        List<String> sent = input.messages().stream().filter(AgUiInput.Message::isUser).map(AgUiInput.Message::id)
                .filter(id -> !id.equals(user.id())).toList();
        String editedId = edited(input.threadId(), history, sent);
        if (waiting(latest) && latest.get().pendingInputs().stream().anyMatch(p -> p.kind() != InputKind.CLIENT_TOOL)) {
            throw new Refused("INTERRUPT_PENDING", "the thread's run waits for the answer to interrupt "
                    + latest.get().pendingInputs().get(0).inputId() + "; send it in \"resume\"");
        }
        StartRun request = startRequest(ownerId, input, user).withAttachments(upload(ownerId, input, user, firstUse));
        Start start = () -> editedId == null ? engine.startRun(ownerId, input.threadId(), request)
                : engine.editMessage(ownerId, editedId, request);
        RunTicket ticket = stopAbandoned(ownerId, latest) ? startWhenFree(start) : start.start();
        return stream(ownerId, input, ticket.runId(), Set.of(), false);
    }

    /**
     * Where a new user message goes, given the ids of the user messages the input sends before it: null to
     * append it to the active branch, else the id of the stored user message it replaces (an edit, see
     * docs/ag-ui.md). No earlier user message (a client that restarted, or CopilotKit after its runtime did)
     * appends. Else the last one sent must be on the branch, the ones before it the branch's user messages
     * just before it (as far as the page reaches); the new message then follows it: appended when it is the
     * branch's last, an edit of the one after it otherwise.
     *
     * @throws Refused HISTORY_MISMATCH for a history the branch does not hold
     */
    private static @Nullable String edited(String threadId, AgUiHistory history, List<String> sent) {
        if (sent.isEmpty()) {
            return null;
        }
        List<UserMessage> stored = history.userMessages();
        List<String> storedIds = stored.stream().map(AgUiHistory::agUiId).toList();
        int at = storedIds.indexOf(sent.get(sent.size() - 1));
        int compared = Math.min(sent.size(), at + 1);
        if (at < 0 || (history.whole() && sent.size() > at + 1)
                || !storedIds.subList(at + 1 - compared, at + 1).equals(sent.subList(sent.size() - compared, sent.size()))) {
            String missing = sent.stream().filter(id -> !storedIds.contains(id)).findFirst().orElse(sent.get(0));
            throw new Refused("HISTORY_MISMATCH", "thread " + threadId + " does not hold the history this input"
                    + " sends (message " + missing + " is not on its active branch" + (history.whole() ? ""
                            : " among its newest messages") + ", or in another order); AG-UI cannot add past"
                    + " messages to a thread: start a new thread for a different history");
        }
        return at + 1 < stored.size() ? stored.get(at + 1).id() : null;
    }

    /**
     * AG-UI clients run one run of a thread at a time and stop one by dropping its stream: a new message
     * while the thread's run is still working means the client let that run go. It is stopped (its partial
     * answer kept), so that the thread is free for the new message even before the server notices the drop;
     * so is a run that waits only for the page's tools, which the client chose not to run (the only one
     * stopped when {@code newMessageStopsRun} is off).
     *
     * @return whether a run was stopped (the thread frees itself shortly)
     */
    private boolean stopAbandoned(String ownerId, Optional<RunState> latest) {
        Optional<RunState> abandoned = latest.filter(s -> !s.run().status().isTerminal())
                .filter(s -> newMessageStopsRun || waiting(latest));
        abandoned.ifPresent(s -> engine.cancel(ownerId, s.run().id()));
        return abandoned.isPresent();
    }

    private interface Start {
        RunTicket start();
    }

    private static RunTicket startWhenFree(Start start) {
        long deadline = System.nanoTime() + FREE_WAIT_MILLIS * 1_000_000;
        while (true) {
            try {
                return start.start();
            } catch (ChatException e) {
                if (e.code() != ErrorCode.CONFLICT || System.nanoTime() - deadline > 0) {
                    throw e;
                }
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw ChatException.conflict("interrupted while waiting for the thread to become free");
            }
        }
    }

    /** The input's {@code context[]} and system and developer messages, as the client's context of the run. */
    private Map<String, Object> runContext(String ownerId, AgUiInput input) {
        return input.context().isEmpty() ? Map.of()
                : contexts.runContext(ownerId, Map.of("agui", Map.of("context", input.context())));
    }

    // ------------------------------------------------------------------ answers

    private Plan answer(String ownerId, AgUiInput input, AgUiHistory history, RunState run) {
        String runId = run.run().id();
        Map<String, PendingInput> pending = new HashMap<>();
        run.pendingInputs().forEach(p -> pending.put(p.inputId(), p));
        Map<String, InputAnswer> answers = new HashMap<>();
        Set<String> settled = new LinkedHashSet<>();
        boolean cancel = false;
        for (AgUiInput.Resume resume : input.resume()) {
            PendingInput asked = pending.get(resume.interruptId());
            if (asked == null) {
                continue;
            }
            if (asked.kind() == InputKind.CLARIFY && !resume.resolved()) {
                settled.add(asked.inputId());
                cancel = true;
            } else {
                answers.put(asked.inputId(), answer(asked, resume));
            }
        }
        for (AgUiInput.Message result : input.trailingToolResults()) {
            run.pendingInputs().stream()
                    .filter(p -> p.request() instanceof ClientToolRequest tool
                            && AgUiToolCallIds.names(result.toolCallId(), runId, tool.executionId()))
                    .findFirst()
                    .ifPresent(p -> answers.put(p.inputId(), new ClientToolAnswer(result.error() != null
                            ? result.error() : result.text(), result.error() != null)));
        }
        if (answers.isEmpty() && !cancel && !input.resume().isEmpty() && run.pendingInputs().isEmpty()) {
            // a retried resume: the run took these answers already; re-join it
            return stream(ownerId, input, runId, Set.of(), false);
        }
        if (answers.isEmpty() && !cancel) {
            throw new Refused("NOT_FOUND", "no interrupt or tool call this input answers is pending on thread "
                    + input.threadId());
        }
        settled.addAll(answers.keySet());
        Set<String> stillPending = new LinkedHashSet<>(pending.keySet());
        stillPending.removeAll(settled);
        for (Map.Entry<String, InputAnswer> entry : answers.entrySet()) {
            engine.answer(ownerId, runId, entry.getKey(), entry.getValue());
        }
        if (cancel) {
            engine.cancel(ownerId, runId);
        }
        return new Plan(runId, run.run().assistantMessageId(), history.snapshot(runId, input.messages()),
                run.lastSeq(), stillPending, settled, cancel);
    }

    /**
     * The answer a resume entry gives: for a clarify, the payload's text (a string, an array of strings, or
     * {@code {answer}}); for an approval, its decision (a decision name, true/false, or {@code {decision,
     * editedArguments?}}), deny when cancelled; for a client tool, the payload as its result.
     *
     * @throws ChatException INVALID_INPUT for a payload of the wrong shape
     */
    private static InputAnswer answer(PendingInput asked, AgUiInput.Resume resume) {
        JsonNode payload = resume.payload();
        switch (asked.kind()) {
            case CLARIFY -> {
                JsonNode answer = payload != null && payload.isObject() ? payload.get("answer") : payload;
                List<String> texts = new ArrayList<>();
                if (answer != null && answer.isTextual()) {
                    texts.add(answer.asText());
                } else if (answer != null && answer.isArray()) {
                    answer.forEach(a -> texts.add(a.asText()));
                } else {
                    throw ChatException.invalidInput("the answer to interrupt " + asked.inputId()
                            + " is a string, an array of strings or {answer}");
                }
                return new ClarifyAnswer(texts);
            }
            case APPROVAL -> {
                if (!resume.resolved()) {
                    return ApprovalAnswer.of(ApprovalDecision.DENY);
                }
                if (payload != null && payload.isBoolean()) {
                    return ApprovalAnswer.of(payload.asBoolean() ? ApprovalDecision.ALLOW_ONCE : ApprovalDecision.DENY);
                }
                JsonNode decision = payload != null && payload.isObject() ? payload.get("decision") : payload;
                JsonNode edited = payload != null && payload.isObject() ? payload.get("editedArguments") : null;
                for (ApprovalDecision d : ApprovalDecision.values()) {
                    if (decision != null && decision.isTextual() && d.wireName().equals(decision.asText())) {
                        return new ApprovalAnswer(d, edited == null || edited.isNull() ? null
                                : edited.isTextual() ? edited.asText() : edited.toString());
                    }
                }
                throw ChatException.invalidInput("the answer to interrupt " + asked.inputId()
                        + " is {decision} with a decision of its responseSchema, or true/false");
            }
            default -> {
                String result = payload == null ? "" : payload.isTextual() ? payload.asText() : payload.toString();
                return resume.resolved() ? new ClientToolAnswer(result, false)
                        : new ClientToolAnswer("the person cancelled the tool", true);
            }
        }
    }

    // ------------------------------------------------------------------ streaming

    /**
     * The plan that re-joins the run {@code runId} of the input's thread: the snapshot without the run's
     * output, then its events from its first (a client that reconnects, or CopilotKit's {@code connect}).
     *
     * @throws ChatException NOT_FOUND for another owner's run
     */
    Plan rejoin(String ownerId, AgUiInput input, String runId) {
        return stream(ownerId, input, runId, Set.of(), false);
    }

    private Plan stream(String ownerId, AgUiInput input, String runId, Set<String> answered, boolean cancel) {
        RunState state = engine.state(ownerId, runId);
        AgUiHistory history = AgUiHistory.read(engine, ownerId, input.threadId(), downloadPath);
        Set<String> pending = new LinkedHashSet<>();
        state.pendingInputs().forEach(p -> pending.add(p.inputId()));
        return new Plan(runId, state.run().assistantMessageId(), history.snapshot(runId, input.messages()),
                state.lastSeq(), pending, answered, cancel);
    }
}
