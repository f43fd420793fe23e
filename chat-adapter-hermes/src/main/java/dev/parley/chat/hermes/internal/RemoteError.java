package dev.parley.chat.hermes.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;

/**
 * An HTTP error answer of the Bridge ({@code {"error":{"code","message","retryable"}}}) or of the API
 * server ({@code {"error":{"message","type","code"}}}). The message is already redacted.
 */
public record RemoteError(int status, String code, String message) {
    private static final int MAX_MESSAGE = 500;

    /** Reads an error body; a body that is not the expected JSON gives {@code HTTP_<status>}. */
    static RemoteError parse(int status, String body, ObjectMapper json, Redactor redactor) {
        String code = "HTTP_" + status;
        String message = "HTTP " + status;
        try {
            JsonNode error = json.readTree(body).path("error");
            if (error.isObject()) {
                if (error.path("code").isTextual() && !error.path("code").asText().isBlank()) {
                    code = error.path("code").asText().toUpperCase(java.util.Locale.ROOT);
                }
                if (error.path("message").isTextual()) {
                    message = error.path("message").asText();
                }
            }
        } catch (Exception notJson) {
            // the status alone has to do
        }
        if (message.length() > MAX_MESSAGE) {
            message = message.substring(0, MAX_MESSAGE) + "…";
        }
        return new RemoteError(status, code, redactor.redact(message));
    }

    /** The failure as the SPI reports it: 400 INVALID_INPUT, 404/410 NOT_FOUND, 409 CONFLICT, … */
    public ChatException toException(String what) {
        ErrorCode kind;
        if (status == 400 || status == 422) {
            kind = ErrorCode.INVALID_INPUT;
        } else if (status == 404 || status == 410) {
            kind = ErrorCode.NOT_FOUND;
        } else if (status == 409) {
            kind = ErrorCode.CONFLICT;
        } else if (status == 401 || status == 403 || status == 502 || status == 503 || status == 504) {
            kind = ErrorCode.RUNTIME_UNAVAILABLE;
        } else {
            kind = ErrorCode.RUNTIME_FAILED;
        }
        return new ChatException(kind, what + " failed: " + code + " (HTTP " + status + "): " + message);
    }

    /** The code a failed run carries: the remote code, or RUNTIME_UNAVAILABLE for a gateway without one. */
    public String runCode() {
        if (code.startsWith("HTTP_") && (status == 502 || status == 503 || status == 504)) {
            return ErrorCode.RUNTIME_UNAVAILABLE.name();
        }
        return code;
    }
}
