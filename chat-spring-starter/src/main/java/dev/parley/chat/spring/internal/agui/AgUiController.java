package dev.parley.chat.spring.internal.agui;

import dev.parley.chat.ChatException;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.spring.OwnerResolver;
import dev.parley.chat.spring.internal.ClientContexts;
import dev.parley.chat.spring.internal.JsonBodies;
import dev.parley.chat.spring.internal.OriginCheck;
import dev.parley.chat.spring.internal.ParleyEndpoints;
import dev.parley.chat.spring.internal.SseResponses;
import dev.parley.chat.spring.internal.SseStreams;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Parley's AG-UI endpoint, {@code POST {parley.web.base-path}{parley.web.agui.path}}: takes a
 * {@code RunAgentInput} and answers the AG-UI event stream ({@code data:} frames of JSON), closed after the
 * final event. See {@code docs/ag-ui.md} for the mapping. A malformed input is a {@code 400} problem, another
 * owner's thread {@code 404}, both before the stream starts; an input Parley cannot act on (history the
 * thread does not have, an unanswered interrupt, a busy thread) is a stream of one {@code RUN_ERROR}. A client
 * that drops the stream before its end stops the run (AG-UI's only stop).
 */
@RestController
@RequestMapping("${parley.web.base-path:/api/chat}")
public class AgUiController extends ParleyEndpoints {
    private static final Logger log = LoggerFactory.getLogger(AgUiController.class);

    private final ChatEngine engine;
    private final SseStreams streams;
    private final JsonBodies bodies;
    private final AgUiTurns turns;

    /** @param downloadPath where attachments are downloaded: this prefix and the attachment's id */
    public AgUiController(ChatEngine engine, OwnerResolver owners, OriginCheck origins, SseStreams streams,
            JsonBodies bodies, ClientContexts contexts, String downloadPath) {
        super(owners, origins);
        this.engine = engine;
        this.streams = streams;
        this.bodies = bodies;
        this.turns = new AgUiTurns(engine, contexts, true, downloadPath);
    }

    @PostMapping("${parley.web.agui.path:/agui}")
    public void run(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String owner = owner(request);
        AgUiInput input = AgUiInput.parse(bodies.object(request));
        AgUiTurns.Plan plan;
        try {
            plan = turns.plan(owner, input);
        } catch (AgUiTurns.Refused refused) {
            writeAll(response, AgUiFrames.runError(refused.code(), refused.getMessage()));
            return;
        }
        AgUiFrames frames = new AgUiFrames(input.threadId(), input.runId(), plan.assistantMessageId(), plan.snapshot(),
                input.state(), plan.planSeq(), plan.stillPending(), plan.answeredNow(), plan.cancelExpected(),
                () -> stop(owner, plan.runId()));
        SseResponses.start(request, response, engine.subscribe(owner, plan.runId(), 0), streams, frames);
    }

    private void stop(String owner, String runId) {
        try {
            engine.cancel(owner, runId);
        } catch (ChatException e) {
            log.debug("Stopping run {} after its AG-UI client left failed: {}", runId, e.getMessage());
        }
    }

    /** A whole AG-UI answer at once (possibly empty): {@code 200}, an event stream, closed after it. */
    static void writeAll(HttpServletResponse response, String frames) throws IOException {
        response.setStatus(HttpServletResponse.SC_OK);
        response.setContentType("text/event-stream");
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.setHeader("Cache-Control", "no-cache");
        response.getOutputStream().write(frames.getBytes(StandardCharsets.UTF_8));
    }
}
