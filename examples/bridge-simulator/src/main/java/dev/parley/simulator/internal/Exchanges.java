package dev.parley.simulator.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/** Reading and answering the simulator's JSON requests, errors in the Bridge's shape (protocol section 1). */
public final class Exchanges {
    /** The largest request body taken (protocol: {@code 413} above 1 MiB). */
    public static final int MAX_BODY = 1 << 20;
    private static final ObjectMapper JSON = new ObjectMapper();

    private Exchanges() {
    }

    /** The request body as a JSON object, or null after answering {@code 400} or {@code 413}. */
    public static JsonNode readJson(HttpExchange ex) throws IOException {
        byte[] bytes;
        try (InputStream in = ex.getRequestBody()) {
            bytes = in.readNBytes(MAX_BODY + 1);
        }
        if (bytes.length > MAX_BODY) {
            error(ex, 413, "INVALID_REQUEST", "the body is larger than " + MAX_BODY + " bytes", false);
            return null;
        }
        try {
            JsonNode node = JSON.readTree(bytes);
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

    /** {@code {"error":{"code","message","retryable"}}} with the status. */
    public static void error(HttpExchange ex, int status, String code, String message, boolean retryable)
            throws IOException {
        ObjectNode body = JSON.createObjectNode();
        body.putObject("error").put("code", code).put("message", message).put("retryable", retryable);
        json(ex, status, body);
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
