package dev.parley.chat.spring.internal.agui;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.RunState;
import dev.parley.chat.engine.ThreadPage;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.spring.internal.ClientContexts;
import dev.parley.chat.spring.internal.SseResponses;
import dev.parley.chat.spring.internal.SseStreams;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Iterator;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What CopilotKit's runtime protocol asks of Parley, for one caller: the runtime's description, a run (an
 * AG-UI turn), a connect (the thread rebuilt, and its live run followed), a stop, and the caller's threads.
 * The run and connect answers are AG-UI event streams made by {@link AgUiFrames}, so they are the AG-UI
 * endpoint's, with two differences CopilotKit needs: a dropped stream never stops a run (CopilotKit stops
 * through {@link #stop}, and a reloaded page re-joins with {@link #connect}), and a run stopped that way ends
 * with {@code RUN_FINISHED}, keeping its partial answer.
 *
 * <p>There is one agent, {@value #AGENT_ID}, the name CopilotKit uses when a page names none. Thread-safe.
 */
final class CopilotKitRuntime {
    /** The one agent's id. */
    static final String AGENT_ID = "default";

    private final ChatEngine engine;
    private final SseStreams streams;
    private final AgUiTurns turns;
    private final String description;

    CopilotKitRuntime(ChatEngine engine, SseStreams streams, ClientContexts contexts, String description,
            String downloadPath) {
        this.engine = engine;
        this.streams = streams;
        this.turns = new AgUiTurns(engine, contexts, false, downloadPath);
        this.description = description;
    }

    /** {@code GET /info}: one agent, the SSE mode, and the thread list as the only thread endpoint. */
    ObjectNode info() {
        ObjectNode info = ChatJson.shared().objectNode();
        String version = CopilotKitRuntime.class.getPackage().getImplementationVersion();
        info.put("version", version == null ? "parley" : version);
        info.putObject("agents").putObject(AGENT_ID).put("name", AGENT_ID).put("className", "ParleyAgent")
                .put("description", description);
        info.put("audioFileTranscriptionEnabled", false).put("mode", "sse");
        ObjectNode threadEndpoints = info.putObject("threadEndpoints").put("list", true).put("inspect", false)
                .put("mutations", false).put("realtimeMetadata", false);
        ObjectNode singleRoute = info.putObject("singleRoute").put("resourceOperations", true);
        singleRoute.set("threadEndpoints", threadEndpoints.deepCopy());
        return info;
    }

    /**
     * A run: the AG-UI turn the input asks for (see docs/ag-ui.md), streamed to its end. Input Parley cannot act
     * on is a stream of one {@code RUN_ERROR}.
     *
     * @throws ChatException INVALID_INPUT for a malformed input, NOT_FOUND for another owner's thread, both
     *     before anything changed
     */
    void run(String owner, JsonNode body, HttpServletRequest request, HttpServletResponse response)
            throws IOException {
        AgUiInput input = AgUiInput.parse(body);
        AgUiTurns.Plan plan;
        try {
            plan = turns.plan(owner, input);
        } catch (AgUiTurns.Refused refused) {
            AgUiController.writeAll(response, AgUiFrames.runError(refused.code(), refused.getMessage()));
            return;
        }
        stream(owner, input, plan, request, response);
    }

    /**
     * A connect: never creates a thread. An unknown thread, or another owner's, is an empty stream. A thread
     * whose newest run has ended is {@code RUN_STARTED}, its snapshot and {@code RUN_FINISHED}. A thread whose
     * newest run goes on (or waits for the person) is the snapshot without that run's output, then the run's
     * events from its first and live to its end, or to where it waits (a {@code RUN_FINISHED} carrying the
     * questions as an interrupt outcome); from the store, so on any instance.
     *
     * @throws ChatException INVALID_INPUT for a malformed input
     */
    void connect(String owner, JsonNode body, HttpServletRequest request, HttpServletResponse response)
            throws IOException {
        AgUiInput input = AgUiInput.parse(body);
        Optional<AgUiHistory> history = history(owner, input.threadId());
        if (history.isEmpty()) {
            AgUiController.writeAll(response, "");
            return;
        }
        Optional<RunState> live = history.get().latestRunId().map(id -> engine.state(owner, id))
                .filter(state -> !state.run().status().isTerminal());
        if (live.isEmpty()) {
            AgUiController.writeAll(response, AgUiFrames.atRest(input.threadId(), input.runId(),
                    history.get().snapshot(null, input.messages())));
            return;
        }
        stream(owner, input, turns.rejoin(owner, input, live.get().run().id()), request, response);
    }

    /**
     * A stop: cancels the thread's run that goes on, keeping its partial answer; the run's open streams end
     * with its end. An unknown thread, another owner's and one with no run going on stop nothing.
     *
     * @param body empty, or {@code {runId}}, which is checked but not needed: a thread has one run at a time
     * @throws CopilotKitController.Refusal 400 for a body with another key or a runId that is not a string
     */
    ObjectNode stop(String owner, String threadId, JsonNode body) {
        for (Iterator<String> fields = body.fieldNames(); fields.hasNext(); ) {
            String field = fields.next();
            if (!field.equals("runId")) {
                throw new CopilotKitController.Refusal(400, "Invalid stop request",
                        "a stop request's body is empty or {runId}; it has \"" + field + "\"");
            }
        }
        JsonNode runId = body.get("runId");
        if (runId != null && (!runId.isTextual() || runId.asText().isBlank())) {
            throw new CopilotKitController.Refusal(400, "Invalid runId", "runId must be a non-blank string");
        }
        Optional<RunState> live = history(owner, threadId).flatMap(AgUiHistory::latestRunId)
                .map(id -> engine.state(owner, id)).filter(state -> !state.run().status().isTerminal());
        ObjectNode answer = ChatJson.shared().objectNode();
        if (live.isEmpty()) {
            return answer.put("stopped", false).put("message", "thread " + threadId + " has no run going on");
        }
        engine.cancel(owner, live.get().run().id());
        answer.put("stopped", true).putObject("interrupt").put("type", "RUN_ERROR")
                .put("message", "Run stopped by user").put("code", "STOPPED");
        return answer;
    }

    /**
     * A page of the caller's threads, newest activity first, in the shape of CopilotKit's thread list.
     *
     * @param cursor a {@code nextCursor} of an earlier page, or null for the first
     * @throws ChatException INVALID_INPUT for a cursor Parley did not give out or a limit out of range
     */
    ObjectNode threads(String owner, @Nullable String cursor, int limit, boolean includeArchived) {
        ThreadPage page = engine.listThreads(owner, cursor, limit);
        ObjectNode answer = ChatJson.shared().objectNode();
        ArrayNode threads = answer.putArray("threads");
        for (ChatThread thread : page.threads()) {
            boolean archived = thread.status() == ThreadStatus.ARCHIVED;
            if (archived && !includeArchived) {
                continue;
            }
            ObjectNode entry = threads.addObject().put("id", thread.id()).put("organizationId", owner)
                    .put("agentId", AGENT_ID).put("createdById", owner);
            if (thread.title() == null) {
                entry.putNull("name");
            } else {
                entry.put("name", thread.title());
            }
            entry.put("archived", archived).put("createdAt", thread.createdAt().toString())
                    .put("updatedAt", thread.lastMessageAt().toString());
        }
        if (page.nextCursor() == null) {
            answer.putNull("nextCursor");
        } else {
            answer.put("nextCursor", page.nextCursor());
        }
        return answer;
    }

    /** The newest page of the caller's thread, or nothing for an unknown thread or another owner's. */
    private Optional<AgUiHistory> history(String owner, String threadId) {
        try {
            return Optional.of(AgUiHistory.read(engine, owner, threadId, turns.downloadPath()));
        } catch (ChatException e) {
            if (e.code() == ErrorCode.NOT_FOUND) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /** Streams the planned run; leaving the stream never stops it, and a stop ends it as a success. */
    private void stream(String owner, AgUiInput input, AgUiTurns.Plan plan, HttpServletRequest request,
            HttpServletResponse response) throws IOException {
        AgUiFrames frames = new AgUiFrames(input.threadId(), input.runId(), plan.assistantMessageId(), plan.snapshot(),
                input.state(), plan.planSeq(), plan.stillPending(), plan.answeredNow(), true, () -> { });
        SseResponses.start(request, response, engine.subscribe(owner, plan.runId(), 0), streams, frames);
    }
}
