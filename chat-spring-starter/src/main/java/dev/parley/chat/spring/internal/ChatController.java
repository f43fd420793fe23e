package dev.parley.chat.spring.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.engine.ThreadPage;
import dev.parley.chat.engine.ThreadUpdate;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.FeedbackRating;
import dev.parley.chat.spring.OwnerResolver;
import dev.parley.chat.spring.ParleySse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Parley's REST + SSE endpoints (seed 000, section 4.2), under {@code parley.web.base-path}: sessions, runs,
 * streams, messages and selectors ({@link RunInputsController} has what a waiting run asks). Bodies are
 * JSON written by Parley's codec, and must be declared JSON ({@code 415} otherwise, see {@link JsonBodies});
 * errors are RFC 9457 problem details carrying the error code.
 */
@RestController
@RequestMapping("${parley.web.base-path:/api/chat}")
public class ChatController extends ParleyEndpoints {
    private final ChatEngine engine;
    private final ParleySse sse;
    private final JsonBodies bodies;

    public ChatController(ChatEngine engine, OwnerResolver owners, ParleySse sse, JsonBodies bodies) {
        super(owners);
        this.engine = engine;
        this.sse = sse;
        this.bodies = bodies;
    }

    // ------------------------------------------------------------------ sessions (threads)

    @PostMapping("/sessions")
    public ResponseEntity<byte[]> createSession(HttpServletRequest request) {
        String owner = owner(request);
        JsonNode body = bodies.object(request);
        ChatThread thread = engine.createThread(owner, new NewThread(JsonBodies.optionalText(body, "title"),
                JsonBodies.optionalText(body, "modelId"), JsonBodies.optionalText(body, "skill")));
        return JsonBodies.json(HttpStatus.CREATED, thread);
    }

    @GetMapping("/sessions")
    public ResponseEntity<byte[]> listSessions(HttpServletRequest request,
            @RequestParam(name = "cursor", required = false) @Nullable String cursor,
            @RequestParam(name = "limit", required = false) @Nullable String limit) {
        String owner = owner(request);
        int size = intParam("limit", limit, engineDefaultPage());
        ThreadPage threads = engine.listThreads(owner, cursor == null || cursor.isEmpty() ? null : cursor, size);
        Map<String, Object> page = new LinkedHashMap<>();
        page.put("items", threads.threads());
        if (threads.nextCursor() != null) {
            page.put("nextCursor", threads.nextCursor());
        }
        page.put("limit", size);
        return JsonBodies.ok(page);
    }

    @GetMapping("/sessions/{id}")
    public ResponseEntity<byte[]> getSession(HttpServletRequest request, @PathVariable("id") String id,
            @RequestParam(name = "limit", required = false) @Nullable String limit) {
        return JsonBodies.ok(engine.getThread(owner(request), id, null, intParam("limit", limit, engineDefaultPage())));
    }

    @GetMapping("/sessions/{id}/messages")
    public ResponseEntity<byte[]> messages(HttpServletRequest request, @PathVariable("id") String id,
            @RequestParam(name = "before", required = false) @Nullable String before,
            @RequestParam(name = "limit", required = false) @Nullable String limit) {
        return JsonBodies.ok(engine.getThread(owner(request), id, before == null || before.isBlank() ? null : before,
                intParam("limit", limit, engineDefaultPage())));
    }

    @PatchMapping("/sessions/{id}")
    public ResponseEntity<byte[]> updateSession(HttpServletRequest request, @PathVariable("id") String id) {
        String owner = owner(request);
        JsonNode body = bodies.object(request);
        ThreadUpdate.Builder update = ThreadUpdate.builder();
        if (body.has("title")) {
            update.title(JsonBodies.requiredText(body, "title"));
        }
        if (body.has("modelId")) {
            update.modelId(JsonBodies.optionalText(body, "modelId"));
        }
        if (body.has("skill")) {
            update.skill(JsonBodies.optionalText(body, "skill"));
        }
        Boolean archived = JsonBodies.optionalBoolean(body, "archived");
        if (archived != null) {
            update.archived(archived);
        }
        return JsonBodies.ok(engine.updateThread(owner, id, update.build()));
    }

    @DeleteMapping("/sessions/{id}")
    public ResponseEntity<byte[]> deleteSession(HttpServletRequest request, @PathVariable("id") String id) {
        engine.deleteThread(owner(request), id);
        return ResponseEntity.noContent().build();
    }

    // ------------------------------------------------------------------ runs

    @PostMapping("/sessions/{id}/runs")
    public ResponseEntity<byte[]> startRun(HttpServletRequest request, @PathVariable("id") String id) {
        String owner = owner(request);
        JsonNode body = bodies.object(request);
        StartRun run = new StartRun(JsonBodies.requiredText(body, "message"), JsonBodies.optionalText(body, "modelId"),
                JsonBodies.optionalText(body, "skill"), JsonBodies.optionalInt(body, "maxIterations"),
                JsonBodies.optionalObject(body, "context")).withClientTools(InputBodies.clientTools(body));
        RunTicket ticket = engine.startRun(owner, id, run);
        return JsonBodies.json(HttpStatus.ACCEPTED, ticket);
    }

    @GetMapping(path = "/runs/{runId}/stream", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    public void stream(HttpServletRequest request, HttpServletResponse response, @PathVariable("runId") String runId,
            @RequestHeader(name = "Last-Event-ID", required = false) @Nullable String lastEventIdHeader,
            @RequestParam(name = "lastEventId", required = false) @Nullable String lastEventIdParam) {
        String cursor = lastEventIdHeader != null && !lastEventIdHeader.isBlank() ? lastEventIdHeader : lastEventIdParam;
        sse.stream(request, response, owner(request), runId, cursor);
    }

    @PostMapping("/runs/{runId}/cancel")
    public ResponseEntity<byte[]> cancel(HttpServletRequest request, @PathVariable("runId") String runId) {
        return JsonBodies.json(HttpStatus.ACCEPTED, engine.cancel(owner(request), runId));
    }

    // ------------------------------------------------------------------ messages

    /** The body is optional ({@code {clientTools?}}); without one no client tools go with the new run. */
    @PostMapping("/messages/{id}/regenerate")
    public ResponseEntity<byte[]> regenerate(HttpServletRequest request, @PathVariable("id") String id) {
        String owner = owner(request);
        JsonNode body = bodies.objectIfAny(request);
        return JsonBodies.json(HttpStatus.ACCEPTED, engine.regenerate(owner, id, InputBodies.clientTools(body)));
    }

    @PostMapping("/messages/{id}/feedback")
    public ResponseEntity<byte[]> feedback(HttpServletRequest request, @PathVariable("id") String id) {
        String owner = owner(request);
        JsonNode body = bodies.object(request);
        String rating = JsonBodies.requiredText(body, "rating");
        FeedbackRating parsed;
        try {
            parsed = FeedbackRating.valueOf(rating.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw ChatException.invalidInput("\"rating\" must be \"up\" or \"down\"");
        }
        return JsonBodies.ok(engine.feedback(owner, id, parsed, JsonBodies.optionalText(body, "comment")));
    }

    // ------------------------------------------------------------------ selectors

    @GetMapping("/models")
    public ResponseEntity<byte[]> models(HttpServletRequest request) {
        owner(request);
        return JsonBodies.ok(engine.models());
    }

    @GetMapping("/skills")
    public ResponseEntity<byte[]> skills(HttpServletRequest request) {
        owner(request);
        return JsonBodies.ok(engine.skills());
    }

    private static int engineDefaultPage() {
        return EngineLimits.defaults().defaultPageSize();
    }

    private static int intParam(String name, @Nullable String value, int fallback) {
        if (value == null || value.isBlank()) {
            return fallback;
        }
        try {
            return Integer.parseInt(value.strip());
        } catch (NumberFormatException e) {
            throw ChatException.invalidInput(name + " must be an integer, got '" + value + "'");
        }
    }
}
