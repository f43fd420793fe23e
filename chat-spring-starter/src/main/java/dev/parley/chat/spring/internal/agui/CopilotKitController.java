package dev.parley.chat.spring.internal.agui;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.spring.OwnerResolver;
import dev.parley.chat.spring.internal.ClientContexts;
import dev.parley.chat.spring.internal.CrossOrigin;
import dev.parley.chat.spring.internal.JsonBodies;
import dev.parley.chat.spring.internal.OriginCheck;
import dev.parley.chat.spring.internal.OwnerResolvers;
import dev.parley.chat.spring.internal.ParleyEndpoints;
import dev.parley.chat.spring.internal.Problems;
import dev.parley.chat.spring.internal.SseStreams;
import dev.parley.chat.spring.internal.Unauthenticated;
import dev.parley.chat.spring.internal.UnsupportedMediaType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * CopilotKit's runtime protocol at {@code {parley.web.base-path}{parley.web.copilotkit.path}} (the
 * {@code runtimeUrl} of a CopilotKit page), so that its React front end talks to Parley with no Node runtime
 * in between: {@code GET /info}, {@code POST /agent/default/run}, {@code POST /agent/default/connect},
 * {@code POST /agent/default/stop/{threadId}}, {@code GET /threads}, and the same calls through the
 * single-route envelope, {@code POST} to the base path with {@code {method, params, body}}. What each does is
 * {@link CopilotKitRuntime}'s.
 *
 * <p>Every call but {@code info} acts for the owner the {@link OwnerResolver} finds (none: {@code 401});
 * another owner's thread answers as an unknown one. The owner must come from the browser's own
 * authentication: the built-in resolver of {@code parley.owner.mode=HEADER}, which believes a header any page
 * can set, is refused ({@code 403}) unless the host says a proxy sets it. POSTs from another origin than the
 * request's own, {@code parley.web.allowed-origins} and {@code parley.web.copilotkit.allowed-origins} are
 * {@code 403}; bodies must be JSON ({@code 415}). Errors are JSON in CopilotKit's shape, {@code {error,
 * message}} (for a bad body {@code {error, details}}), with Parley's error {@code code}; nothing is changed by
 * a refused request.
 */
@RestController
@RequestMapping("${parley.web.base-path:/api/chat}${parley.web.copilotkit.path:/copilotkit}")
public class CopilotKitController {
    private static final Logger log = LoggerFactory.getLogger(CopilotKitController.class);

    private final CopilotKitRuntime runtime;
    private final OwnerResolver owners;
    private final OriginCheck origins;
    private final JsonBodies bodies;
    private final boolean ownerHeaderRefused;
    private final int defaultPageSize;

    /**
     * @param origins the Origin rule, with the origins allowed for this endpoint
     * @param trustOwnerHeader whether a proxy sets the owner header of {@code parley.owner.mode=HEADER}
     * @param downloadPath where attachments are downloaded: this prefix and the attachment's id
     */
    public CopilotKitController(ChatEngine engine, OwnerResolver owners, OriginCheck origins, SseStreams streams,
            JsonBodies bodies, ClientContexts contexts, String agentDescription, boolean trustOwnerHeader,
            String downloadPath) {
        this.runtime = new CopilotKitRuntime(engine, streams, contexts, agentDescription, downloadPath);
        this.owners = owners;
        this.origins = origins;
        this.bodies = bodies;
        this.ownerHeaderRefused = OwnerResolvers.trustsHeader(owners) && !trustOwnerHeader;
        this.defaultPageSize = engine.limits().defaultPageSize();
        if (ownerHeaderRefused) {
            log.warn("Parley: the CopilotKit endpoint refuses every request, because the owner comes from a header"
                    + " (parley.owner.mode=HEADER) that any page can set. Use Spring Security or your own"
                    + " OwnerResolver, or set parley.web.copilotkit.trust-owner-header=true if a proxy that"
                    + " authenticates the person sets the header.");
        }
    }

    /** A refused request, answered in CopilotKit's error shape. */
    static final class Refusal extends RuntimeException {
        private final int status;
        private final String error;

        Refusal(int status, String error, String message) {
            super(message, null, false, false);
            this.status = status;
            this.error = error;
        }
    }

    @GetMapping("/info")
    public ResponseEntity<byte[]> info() {
        refuseOwnerHeader();
        return JsonBodies.ok(runtime.info());
    }

    @PostMapping("/agent/{agentId}/run")
    public void run(@PathVariable("agentId") String agentId, HttpServletRequest request,
            HttpServletResponse response) throws IOException {
        String owner = owner(request);
        knownAgent(agentId);
        runtime.run(owner, bodies.object(request), request, response);
    }

    @PostMapping("/agent/{agentId}/connect")
    public void connect(@PathVariable("agentId") String agentId, HttpServletRequest request,
            HttpServletResponse response) throws IOException {
        String owner = owner(request);
        knownAgent(agentId);
        runtime.connect(owner, bodies.object(request), request, response);
    }

    @PostMapping("/agent/{agentId}/stop/{threadId}")
    public ResponseEntity<byte[]> stop(@PathVariable("agentId") String agentId,
            @PathVariable("threadId") String threadId, HttpServletRequest request) {
        String owner = owner(request);
        knownAgent(agentId);
        return JsonBodies.ok(runtime.stop(owner, threadId, bodies.objectIfAny(request)));
    }

    @GetMapping("/threads")
    public ResponseEntity<byte[]> threads(HttpServletRequest request,
            @RequestParam(name = "agentId", required = false) @Nullable String agentId,
            @RequestParam(name = "limit", required = false) @Nullable String limit,
            @RequestParam(name = "cursor", required = false) @Nullable String cursor,
            @RequestParam(name = "includeArchived", required = false) @Nullable String includeArchived) {
        String owner = owner(request);
        return JsonBodies.ok(threads(owner, agentId, limit, cursor, includeArchived));
    }

    private ObjectNode threads(String owner, @Nullable String agentId, @Nullable String limit, @Nullable String cursor,
            @Nullable String includeArchived) {
        if (agentId != null) {
            knownAgent(agentId);
        }
        int size = defaultPageSize;
        if (limit != null && !limit.isEmpty()) {
            try {
                size = Integer.parseInt(limit);
            } catch (NumberFormatException e) {
                throw ChatException.invalidInput("limit must be a whole number, got '" + limit + "'");
            }
        }
        return runtime.threads(owner, cursor == null || cursor.isEmpty() ? null : cursor, size,
                "true".equals(includeArchived));
    }

    /** A route that takes GET asked with another method: 405, as CopilotKit's runtime answers. */
    @RequestMapping(path = {"/info", "/threads"},
            method = {RequestMethod.POST, RequestMethod.PUT, RequestMethod.PATCH, RequestMethod.DELETE})
    public ResponseEntity<byte[]> takesGet() {
        return methodNotAllowed("GET", "this route takes GET");
    }

    /** A route that takes POST asked with another method: 405, as CopilotKit's runtime answers. */
    @RequestMapping(path = {"", "/", "/agent/{agentId}/run", "/agent/{agentId}/connect",
            "/agent/{agentId}/stop/{threadId}"},
            method = {RequestMethod.GET, RequestMethod.PUT, RequestMethod.PATCH, RequestMethod.DELETE})
    public ResponseEntity<byte[]> takesPost() {
        return methodNotAllowed("POST", "this route takes POST");
    }

    /**
     * The single-route transport: {@code {method, params?, body?}} with {@code info}, {@code agent/run},
     * {@code agent/connect}, {@code agent/stop} and {@code resource/request} for {@code GET /threads}.
     */
    @RequestMapping(path = {"", "/"}, method = RequestMethod.POST)
    public void envelope(HttpServletRequest request, HttpServletResponse response) throws IOException {
        refuseOwnerHeader();
        origins.check(request);
        JsonNode envelope = bodies.object(request);
        JsonNode method = envelope.get("method");
        if (method != null && method.isTextual() && method.asText().equals("info")) {
            write(response, JsonBodies.ok(runtime.info()));
            return;
        }
        String owner = owner(request);
        JsonNode params = envelope.path("params");
        JsonNode body = envelope.get("body");
        if (method == null || !method.isTextual()) {
            throw new Refusal(400, "invalid_request", "the envelope names its \"method\", a string");
        }
        if (body != null && !body.isNull() && !body.isObject()) {
            throw new Refusal(400, "invalid_request", "the envelope's \"body\" is a JSON object");
        }
        JsonNode bodyObject = body == null || body.isNull() ? ChatJson.shared().objectNode() : body;
        switch (method.asText()) {
            case "agent/run" -> {
                knownAgent(param(params, "agentId"));
                runtime.run(owner, bodyObject, request, response);
            }
            case "agent/connect" -> {
                knownAgent(param(params, "agentId"));
                runtime.connect(owner, bodyObject, request, response);
            }
            case "agent/stop" -> {
                knownAgent(param(params, "agentId"));
                write(response, JsonBodies.ok(runtime.stop(owner, param(params, "threadId"), bodyObject)));
            }
            case "resource/request" -> write(response, JsonBodies.ok(resource(owner, params)));
            default -> throw new Refusal(400, "invalid_request", "unknown method \"" + method.asText()
                    + "\"; this runtime serves info, agent/run, agent/connect, agent/stop and resource/request"
                    + " for GET /threads");
        }
    }

    /** A resource request of the envelope: only {@code GET /threads?…} is served. */
    private ObjectNode resource(String owner, JsonNode params) {
        String path = param(params, "path");
        JsonNode httpMethod = params.get("httpMethod");
        URI uri;
        try {
            uri = new URI(path);
        } catch (URISyntaxException e) {
            throw new Refusal(400, "invalid_request", "params.path is not a path: " + path);
        }
        if (!"/threads".equals(uri.getPath())) {
            throw new Refusal(404, "Not found", "this runtime serves no resource " + uri.getPath());
        }
        if (httpMethod != null && !"GET".equals(httpMethod.asText())) {
            throw new Refusal(405, "Method not allowed", "/threads takes GET only");
        }
        String agentId = null;
        String limit = null;
        String cursor = null;
        String includeArchived = null;
        if (uri.getRawQuery() != null) {
            for (String pair : uri.getRawQuery().split("&")) {
                int eq = pair.indexOf('=');
                String name = decode(eq < 0 ? pair : pair.substring(0, eq));
                String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
                switch (name) {
                    case "agentId" -> agentId = value;
                    case "limit" -> limit = value;
                    case "cursor" -> cursor = value;
                    case "includeArchived" -> includeArchived = value;
                    default -> {
                        // other parameters are ignored, as on the route
                    }
                }
            }
        }
        return threads(owner, agentId, limit, cursor, includeArchived);
    }

    private static String decode(String text) {
        return java.net.URLDecoder.decode(text, StandardCharsets.UTF_8);
    }

    private static String param(JsonNode params, String name) {
        JsonNode value = params.get(name);
        if (value == null || !value.isTextual() || value.asText().isBlank()) {
            throw new Refusal(400, "invalid_request", "the envelope's params name \"" + name + "\", a string");
        }
        return value.asText();
    }

    private static void knownAgent(String agentId) {
        if (!CopilotKitRuntime.AGENT_ID.equals(agentId)) {
            throw new Refusal(404, "Agent not found", "Agent '" + agentId + "' does not exist");
        }
    }

    private void refuseOwnerHeader() {
        if (ownerHeaderRefused) {
            throw new Refusal(403, "Owner header refused", "this endpoint does not take the owner from a header any"
                    + " page can set (parley.owner.mode=HEADER); the host authenticates the person, or sets"
                    + " parley.web.copilotkit.trust-owner-header=true behind a proxy that sets the header");
        }
    }

    /** The caller, after the owner-header, Origin and JSON rules. */
    private String owner(HttpServletRequest request) {
        refuseOwnerHeader();
        return ParleyEndpoints.owner(request, owners, origins);
    }

    private static void write(HttpServletResponse response, ResponseEntity<byte[]> answer) throws IOException {
        response.setStatus(answer.getStatusCode().value());
        response.setContentType(MediaType.APPLICATION_JSON_VALUE);
        byte[] body = answer.getBody();
        if (body != null) {
            response.getOutputStream().write(body);
        }
    }

    // ------------------------------------------------------------------ errors, in CopilotKit's shape

    private static ResponseEntity<byte[]> error(int status, String error, String field, @Nullable String message,
            String code) {
        ObjectNode body = ChatJson.shared().objectNode().put("error", error);
        if (message != null) {
            body.put(field, message);
        }
        body.put("code", code);
        return JsonBodies.json(HttpStatus.valueOf(status), body);
    }

    /** 405 {@code {"error": "Method not allowed"}} with the {@code Allow} header, CopilotKit's runtime's shape. */
    private static ResponseEntity<byte[]> methodNotAllowed(String allow, String message) {
        ResponseEntity<byte[]> answer = error(405, "Method not allowed", "message", message, "METHOD_NOT_ALLOWED");
        return ResponseEntity.status(405).headers(answer.getHeaders()).header(HttpHeaders.ALLOW, allow)
                .body(answer.getBody());
    }

    @ExceptionHandler(Refusal.class)
    public ResponseEntity<byte[]> refused(Refusal e) {
        if (e.status == 405) {
            return methodNotAllowed("GET", e.getMessage());
        }
        return error(e.status, e.error, "message", e.getMessage(),
                e.status == 404 ? "NOT_FOUND" : e.status == 403 ? "FORBIDDEN" : "INVALID_INPUT");
    }

    @ExceptionHandler(ChatException.class)
    public ResponseEntity<byte[]> chatError(ChatException e, HttpServletRequest request) {
        if (e.code() == ErrorCode.INVALID_INPUT) {
            return "GET".equals(request.getMethod())
                    ? error(400, "Invalid request", "message", e.getMessage(), e.code().name())
                    : error(400, "Invalid request body", "details", e.getMessage(), e.code().name());
        }
        if (e.code() == ErrorCode.NOT_FOUND) {
            return error(404, "Not found", "message", e.getMessage(), e.code().name());
        }
        HttpStatus status = Problems.status(e.code());
        if (status.is5xxServerError()) {
            log.warn("{} {} failed: {}", request.getMethod(), request.getRequestURI(), e.getMessage(), e);
        }
        return error(status.value(), "Failed to run agent", "message", e.getMessage(), e.code().name());
    }

    @ExceptionHandler(Unauthenticated.class)
    public ResponseEntity<byte[]> unauthenticated() {
        return error(401, "Unauthenticated", "message", "the request names no caller", "UNAUTHENTICATED");
    }

    @ExceptionHandler(CrossOrigin.class)
    public ResponseEntity<byte[]> crossOrigin(CrossOrigin e) {
        return error(403, "Forbidden", "message", e.getMessage(), "CROSS_ORIGIN");
    }

    @ExceptionHandler(UnsupportedMediaType.class)
    public ResponseEntity<byte[]> unsupportedMediaType(UnsupportedMediaType e) {
        ResponseEntity<byte[]> answer = error(415, "Unsupported media type", "message", e.getMessage(),
                "UNSUPPORTED_MEDIA_TYPE");
        return ResponseEntity.status(415).headers(answer.getHeaders())
                .header(HttpHeaders.ACCEPT, MediaType.APPLICATION_JSON_VALUE).body(answer.getBody());
    }

    @ExceptionHandler(RuntimeException.class)
    public ResponseEntity<byte[]> unexpected(RuntimeException e, HttpServletRequest request) {
        log.error("{} {} failed", request.getMethod(), request.getRequestURI(), e);
        return error(500, "internal_error", "message", null, "INTERNAL");
    }
}
