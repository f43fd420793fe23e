package dev.parley.chat.spring.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.json.ChatJson;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;

/**
 * Request and response bodies, read and written with Parley's own JSON codec (Jackson 2) whatever JSON
 * setup the host's MVC uses (Spring Boot 4 uses Jackson 3): Parley's endpoints take and give bytes.
 *
 * <p>Bodies must be declared JSON ({@code application/json} or any {@code application/*+json}, with any
 * parameters): a browser sends a cross-site form ({@code text/plain}, {@code application/x-www-form-urlencoded},
 * {@code multipart/form-data}) without asking, but a JSON request from another site only after a CORS
 * preflight, so refusing everything else keeps forms from starting runs where CSRF protection is off.
 */
public final class JsonBodies {
    private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS", "TRACE");

    private final int maxBytes;

    public JsonBodies(int maxBytes) {
        this.maxBytes = maxBytes;
    }

    /**
     * Refuses, before anything is done, a request with a body that is not declared JSON (on any endpoint)
     * or an unsafe request declaring a content type other than JSON (a form posted without fields).
     *
     * @throws UnsupportedMediaType for such a request
     */
    public static void refuseNonJson(HttpServletRequest request) {
        String type = request.getContentType();
        boolean declaresOther = type != null && !isJson(type);
        boolean body = hasBody(request);
        if (body ? type == null || declaresOther : declaresOther && !SAFE_METHODS.contains(request.getMethod())) {
            throw notJson(type);
        }
    }

    /** Whether a Content-Type value names JSON: application/json or application/*+json, any parameters. */
    static boolean isJson(@Nullable String contentType) {
        if (contentType == null) {
            return false;
        }
        try {
            MediaType type = MediaType.parseMediaType(contentType);
            return type.getType().equals("application")
                    && (type.getSubtype().equals("json") || type.getSubtype().endsWith("+json"));
        } catch (InvalidMediaTypeException e) {
            return false;
        }
    }

    private static UnsupportedMediaType notJson(@Nullable String type) {
        return new UnsupportedMediaType("the request body must be JSON, sent with Content-Type: application/json; got "
                + (type == null ? "no Content-Type" : "'" + type + "'"));
    }

    /**
     * The request body as a JSON object; an empty body is an empty object.
     *
     * @throws UnsupportedMediaType unless the request declares JSON, even with an empty body
     * @throws ChatException INVALID_INPUT for a body that is too large or not a JSON object
     */
    public JsonNode object(HttpServletRequest request) {
        if (!isJson(request.getContentType())) {
            throw notJson(request.getContentType());
        }
        byte[] bytes = read(request);
        if (bytes.length == 0) {
            return ChatJson.shared().objectNode();
        }
        JsonNode node = ChatJson.shared().readTree(new String(bytes, java.nio.charset.StandardCharsets.UTF_8));
        if (node == null || !node.isObject()) {
            throw ChatException.invalidInput("the request body must be a JSON object");
        }
        return node;
    }

    /**
     * The request body as a JSON object when the request has one, else an empty object (for endpoints
     * whose body is optional, which need no Content-Type without one).
     *
     * @throws UnsupportedMediaType for a body that is not declared JSON
     * @throws ChatException INVALID_INPUT for a body that is too large or not a JSON object
     */
    public JsonNode objectIfAny(HttpServletRequest request) {
        if (!hasBody(request)) {
            return ChatJson.shared().objectNode();
        }
        return object(request);
    }

    private static boolean hasBody(HttpServletRequest request) {
        return request.getContentLengthLong() > 0 || request.getHeader("Transfer-Encoding") != null;
    }

    private byte[] read(HttpServletRequest request) {
        if (request.getContentLengthLong() > maxBytes) {
            throw ChatException.invalidInput("the request body is larger than " + maxBytes + " bytes");
        }
        try (InputStream in = request.getInputStream()) {
            byte[] bytes = in.readNBytes(maxBytes + 1);
            if (bytes.length > maxBytes) {
                throw ChatException.invalidInput("the request body is larger than " + maxBytes + " bytes");
            }
            return bytes;
        } catch (IOException e) {
            throw ChatException.invalidInput("the request body could not be read");
        }
    }

    public static ResponseEntity<byte[]> json(HttpStatus status, Object body) {
        return ResponseEntity.status(status).contentType(MediaType.APPLICATION_JSON)
                .body(ChatJson.shared().writeBytes(body));
    }

    public static ResponseEntity<byte[]> ok(Object body) {
        return json(HttpStatus.OK, body);
    }

    // ---- typed reads with clear errors

    /** A required non-null string field. */
    public static String requiredText(JsonNode body, String field) {
        String value = optionalText(body, field);
        if (value == null) {
            throw ChatException.invalidInput("\"" + field + "\" is required");
        }
        return value;
    }

    /** An optional string field: absent or null gives null, another type is INVALID_INPUT. */
    public static @Nullable String optionalText(JsonNode body, String field) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isTextual()) {
            throw ChatException.invalidInput("\"" + field + "\" must be a string");
        }
        return value.asText();
    }

    public static @Nullable Integer optionalInt(JsonNode body, String field) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.canConvertToInt() || !value.isIntegralNumber()) {
            throw ChatException.invalidInput("\"" + field + "\" must be an integer");
        }
        return value.intValue();
    }

    public static @Nullable Boolean optionalBoolean(JsonNode body, String field) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isBoolean()) {
            throw ChatException.invalidInput("\"" + field + "\" must be true or false");
        }
        return value.booleanValue();
    }

    /** An optional JSON object as a map of JSON-compatible values. */
    public static Map<String, Object> optionalObject(JsonNode body, String field) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            return Map.of();
        }
        if (!value.isObject()) {
            throw ChatException.invalidInput("\"" + field + "\" must be a JSON object");
        }
        Map<String, Object> map = ChatJson.shared().readMap(value.toString());
        return new LinkedHashMap<>(map);
    }

    /** An optional array of strings; empty when absent or null. */
    public static List<String> optionalTextList(JsonNode body, String field) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            return List.of();
        }
        if (!value.isArray()) {
            throw ChatException.invalidInput("\"" + field + "\" must be an array of strings");
        }
        return textOrTextList(body, field);
    }

    /** A string or an array of strings, as a list. */
    public static List<String> textOrTextList(JsonNode body, String field) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            throw ChatException.invalidInput("\"" + field + "\" is required");
        }
        List<String> values = new ArrayList<>();
        if (value.isTextual()) {
            values.add(value.asText());
        } else if (value.isArray()) {
            for (Iterator<JsonNode> it = value.elements(); it.hasNext();) {
                JsonNode element = it.next();
                if (!element.isTextual()) {
                    throw ChatException.invalidInput("\"" + field + "\" must hold strings only");
                }
                values.add(element.asText());
            }
        } else {
            throw ChatException.invalidInput("\"" + field + "\" must be a string or an array of strings");
        }
        return values;
    }
}
