package dev.parley.simulator.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * Reading and answering the simulator's requests, errors in the Bridge's shape (protocol section 1). A request's
 * body is read only by {@link #readBody} (after its token was checked); a request refused before that is
 * answered by {@link #refuse}, which leaves its body unread and cuts the connection.
 */
public final class Exchanges {
    /** The largest request body taken but {@code POST /run}'s (protocol: {@code 413} above 1 MiB). */
    public static final int MAX_BODY = 1 << 20;
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Reads bodies: no bound on a string's length but the body's own (an attachment's Base64 is one string). */
    private static final ObjectMapper READER = new ObjectMapper(JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(Integer.MAX_VALUE).build()).build());

    /**
     * Thrown out of a handler so that the JDK's server drops the connection instead of finishing the exchange:
     * it then neither reads what is left of the request body nor ends a chunked response. The handler must let
     * it pass, without closing the exchange.
     */
    public static final class ConnectionCut extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public ConnectionCut(String why) {
            super(why, null, false, false);
        }
    }

    private Exchanges() {
    }

    /**
     * The request body, at most {@code limit} bytes; for a larger one it answers {@code 413} by {@link #refuse}
     * (throwing {@link ConnectionCut}).
     *
     * @param limit {@link #MAX_BODY}, or more for {@code POST /run} with attachments (protocol section 1)
     */
    public static byte[] readBody(HttpExchange ex, long limit) throws IOException {
        String length = ex.getRequestHeaders().getFirst("Content-Length");
        if (length != null && declaredLength(length) > limit) {
            refuse(ex, 413, "INVALID_REQUEST", "the body is larger than " + limit + " bytes");
        }
        InputStream in = ex.getRequestBody();
        byte[] bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, limit + 1));
        if (bytes.length > limit) {
            refuse(ex, 413, "INVALID_REQUEST", "the body is larger than " + limit + " bytes");
        }
        in.close();
        return bytes;
    }

    private static long declaredLength(String value) {
        try {
            return Long.parseLong(value.strip());
        } catch (NumberFormatException e) {
            return 0; // the JDK's server refuses a malformed length before any handler runs
        }
    }

    /** The body as a JSON object, or null after answering {@code 400}. */
    public static JsonNode parseJson(HttpExchange ex, byte[] body) throws IOException {
        try {
            JsonNode node = READER.readTree(body);
            if (node != null && node.isObject()) {
                return node;
            }
        } catch (IOException notJson) {
            // answered below
        }
        error(ex, 400, "INVALID_REQUEST", "the body must be a JSON object", false);
        return null;
    }

    /** A string field, or null if absent or not a string. */
    public static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || !value.isTextual() ? null : value.asText();
    }

    public static void json(HttpExchange ex, int status, JsonNode body) throws IOException {
        byte[] bytes = JSON.writeValueAsBytes(body);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    /** {@code {"error":{"code","message","retryable"}}} with the status, for a request whose body was read. */
    public static void error(HttpExchange ex, int status, String code, String message, boolean retryable)
            throws IOException {
        json(ex, status, errorBody(code, message, retryable));
    }

    /**
     * Refuses a request before its body was read. A request without a body is answered as by {@link #error};
     * one with a small body (a length up to {@value #DISCARDABLE} bytes) too, its body then discarded unread.
     * One with a larger body ({@code Content-Length} above that, or {@code Transfer-Encoding}) gets the answer
     * with {@code Connection: close}, then the connection is cut without reading the body: this throws
     * {@link ConnectionCut}.
     */
    /** The largest refused body discarded rather than cut off (see {@link #refuse}). */
    static final int DISCARDABLE = 64 * 1024;

    public static void refuse(HttpExchange ex, int status, String code, String message) throws IOException {
        if (!declaresBody(ex)) {
            error(ex, status, code, message, false);
            return;
        }
        if (declaresSmallBody(ex)) {
            // a small body is discarded unread once the answer is out: closing a connection whose unread bytes
            // sit in the socket makes TCP reset it, and the client may lose the answer
            error(ex, status, code, message, false);
            ex.getRequestBody().transferTo(OutputStream.nullOutputStream());
            return;
        }
        byte[] bytes = JSON.writeValueAsBytes(errorBody(code, message, false));
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.getResponseHeaders().set("Connection", "close");
        ex.sendResponseHeaders(status, bytes.length);
        OutputStream out = ex.getResponseBody();
        out.write(bytes);
        out.flush();
        // closing the response would make the JDK's server read (drain) the unread body first
        throw new ConnectionCut("refused before its body was read: " + code);
    }

    /** A body of a known length of at most {@value #DISCARDABLE} bytes, cheap to discard. */
    private static boolean declaresSmallBody(HttpExchange ex) {
        String length = ex.getRequestHeaders().getFirst("Content-Length");
        return !ex.getRequestHeaders().containsKey("Transfer-Encoding") && length != null
                && declaredLength(length) > 0 && declaredLength(length) <= DISCARDABLE;
    }

    private static boolean declaresBody(HttpExchange ex) {
        String length = ex.getRequestHeaders().getFirst("Content-Length");
        return ex.getRequestHeaders().containsKey("Transfer-Encoding") || (length != null && declaredLength(length) != 0);
    }

    private static ObjectNode errorBody(String code, String message, boolean retryable) {
        ObjectNode body = JSON.createObjectNode();
        body.putObject("error").put("code", code).put("message", message).put("retryable", retryable);
        return body;
    }

    /** {@code 200 {"accepted":true,"replayed":…}}, the answer of every call that hands the run something. */
    public static void accepted(HttpExchange ex, boolean replayed) throws IOException {
        json(ex, 200, JSON.createObjectNode().put("accepted", true).put("replayed", replayed));
    }

    /** At most 80 characters of a client's text, for error messages. */
    public static String clip(String text) {
        return text.length() <= 80 ? text : text.substring(0, 80) + "…";
    }
}
