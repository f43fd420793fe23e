package dev.parley.chat.spring.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.ExportFormat;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.SearchPage;
import dev.parley.chat.engine.ThreadPage;
import dev.parley.chat.engine.ThreadUpdate;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.spring.OwnerResolver;
import dev.parley.chat.spring.ParleySse;
import dev.parley.chat.store.SearchQuery;
import dev.parley.chat.store.ThreadSearchHit;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.http.ContentDisposition;
import org.springframework.http.HttpHeaders;
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
import org.springframework.web.util.UriUtils;

/**
 * Parley's REST + SSE endpoints (the starter's README lists them), under {@code parley.web.base-path}: sessions (with
 * search and export), runs, streams and selectors ({@link RunInputsController} has what a waiting run asks,
 * {@link MessagesController} what is done to one message). Bodies are
 * JSON written by Parley's codec, and must be declared JSON ({@code 415} otherwise, see {@link JsonBodies});
 * errors are RFC 9457 problem details carrying the error code.
 */
@RestController
@RequestMapping("${parley.web.base-path:/api/chat}")
public class ChatController extends ParleyEndpoints {
    private final ChatEngine engine;
    private final ParleySse sse;
    private final JsonBodies bodies;
    private final ClientContexts contexts;

    public ChatController(ChatEngine engine, OwnerResolver owners, OriginCheck origins, ParleySse sse,
            JsonBodies bodies, ClientContexts contexts) {
        super(owners, origins);
        this.engine = engine;
        this.sse = sse;
        this.bodies = bodies;
        this.contexts = contexts;
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

    /**
     * The caller's sessions, newest activity first; with a non-blank {@code q}, the sessions matching it, best
     * first, as {@code {thread, snippet, messageId?, highlights}} hits (a cursor is then one the search gave out).
     */
    @GetMapping("/sessions")
    public ResponseEntity<byte[]> listSessions(HttpServletRequest request,
            @RequestParam(name = "q", required = false) @Nullable String query,
            @RequestParam(name = "cursor", required = false) @Nullable String cursor,
            @RequestParam(name = "limit", required = false) @Nullable String limit) {
        String owner = owner(request);
        int size = intParam("limit", limit, engineDefaultPage());
        if (query != null && !query.isBlank()) {
            return JsonBodies.ok(search(owner, query, cursor, size));
        }
        ThreadPage threads = engine.listThreads(owner, cursor == null || cursor.isEmpty() ? null : cursor, size);
        Map<String, Object> page = new LinkedHashMap<>();
        page.put("items", threads.threads());
        if (threads.nextCursor() != null) {
            page.put("nextCursor", threads.nextCursor());
        }
        page.put("limit", size);
        return JsonBodies.ok(page);
    }

    /** A page of hits, each with where the query matches in its snippet ({@code highlights}, for marking). */
    private Map<String, Object> search(String owner, String query, @Nullable String cursor, int size) {
        SearchPage hits = engine.searchThreads(owner, query, cursor == null || cursor.isEmpty() ? null : cursor, size);
        SearchQuery parsed = SearchQuery.of(query);
        List<Map<String, Object>> items = new ArrayList<>(hits.hits().size());
        for (ThreadSearchHit hit : hits.hits()) {
            Map<String, Object> item = new LinkedHashMap<>();
            item.put("thread", hit.thread());
            item.put("snippet", hit.snippet());
            if (hit.messageId() != null) {
                item.put("messageId", hit.messageId());
            }
            item.put("highlights", parsed.matchesIn(hit.snippet()));
            items.add(item);
        }
        Map<String, Object> page = new LinkedHashMap<>();
        page.put("items", items);
        if (hits.nextCursor() != null) {
            page.put("nextCursor", hits.nextCursor());
        }
        page.put("limit", size);
        return page;
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

    /**
     * The session written out, streamed as it is read: {@code format=json} (the default; every branch and step,
     * docs/EXPORT.md) or {@code markdown} (the active branch; a message's files link to their download
     * addresses). An unknown format is {@code 400}.
     */
    @GetMapping("/sessions/{id}/export")
    public void export(HttpServletRequest request, HttpServletResponse response, @PathVariable("id") String id,
            @RequestParam(name = "format", required = false) @Nullable String format) throws IOException {
        String owner = owner(request);
        ExportFormat chosen = exportFormat(format);
        engine.getThread(owner, id, null, 1);
        boolean json = chosen == ExportFormat.JSON;
        response.setContentType(json ? "application/json;charset=UTF-8" : "text/markdown;charset=UTF-8");
        response.setHeader(HttpHeaders.CONTENT_DISPOSITION, ContentDisposition.attachment()
                .filename("parley-" + id + (json ? ".json" : ".md"), StandardCharsets.UTF_8).build().toString());
        String url = request.getRequestURL().toString();
        String attachments = url.substring(0, url.lastIndexOf("/sessions/")) + "/attachments/";
        engine.exportThread(owner, id, chosen, response.getOutputStream(),
                file -> attachments + UriUtils.encodePathSegment(file.id(), StandardCharsets.UTF_8));
    }

    private static ExportFormat exportFormat(@Nullable String format) {
        if (format == null || format.isBlank()) {
            return ExportFormat.JSON;
        }
        switch (format.strip().toLowerCase(Locale.ROOT)) {
            case "json":
                return ExportFormat.JSON;
            case "markdown":
            case "md":
                return ExportFormat.MARKDOWN;
            default:
                throw ChatException.invalidInput("format must be \"json\" or \"markdown\", got '" + format + "'");
        }
    }

    @DeleteMapping("/sessions/{id}")
    public ResponseEntity<byte[]> deleteSession(HttpServletRequest request, @PathVariable("id") String id) {
        engine.deleteThread(owner(request), id);
        return ResponseEntity.noContent().build();
    }

    // ------------------------------------------------------------------ runs

    /**
     * Sends a message: {@code 202} with the new run's ticket, or {@code 200} with the first run's ticket when
     * the client message id ({@code clientMessageId} or {@code Idempotency-Key}) was sent before with the same
     * request; the same id with another request is {@code 409}.
     */
    @PostMapping("/sessions/{id}/runs")
    public ResponseEntity<byte[]> startRun(HttpServletRequest request, @PathVariable("id") String id,
            @RequestHeader(name = RunBodies.IDEMPOTENCY_KEY, required = false) @Nullable String idempotencyKey) {
        String owner = owner(request);
        JsonNode body = bodies.object(request);
        return ticket(engine.startRun(owner, id, RunBodies.startRun(body, "message", idempotencyKey, owner, contexts)));
    }

    /** A run ticket: {@code 202} for a run just started or queued, {@code 200} for a replayed request. */
    static ResponseEntity<byte[]> ticket(RunTicket ticket) {
        return JsonBodies.json(ticket.replayed() ? HttpStatus.OK : HttpStatus.ACCEPTED, ticket);
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

    /** The page size when the caller names none: the engine's, as the host configured it. */
    private int engineDefaultPage() {
        return engine.limits().defaultPageSize();
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
