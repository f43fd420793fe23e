package dev.parley.chat.spring.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.json.ChatJson;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;

/** RFC 9457 problem details carrying Parley's error code. */
public final class Problems {
    public static final MediaType PROBLEM_JSON = MediaType.valueOf("application/problem+json");

    private Problems() {
    }

    /** The HTTP status for an error code. */
    public static HttpStatus status(ErrorCode code) {
        switch (code) {
            case NOT_FOUND:
                return HttpStatus.NOT_FOUND;
            case CONFLICT:
                return HttpStatus.CONFLICT;
            case INVALID_INPUT:
            case CONTEXT_TOO_LONG:
                return HttpStatus.BAD_REQUEST;
            case TOO_LARGE:
                return HttpStatus.PAYLOAD_TOO_LARGE;
            case UNSUPPORTED:
                return HttpStatus.NOT_IMPLEMENTED;
            case RUNTIME_UNAVAILABLE:
            case STORE_FAILURE:
            case RATE_LIMITED:
                return HttpStatus.SERVICE_UNAVAILABLE;
            case RUNTIME_FAILED:
            case AUTHENTICATION_FAILED:
                return HttpStatus.BAD_GATEWAY;
            case SLOW_CONSUMER:
                return HttpStatus.TOO_MANY_REQUESTS;
            default:
                return HttpStatus.INTERNAL_SERVER_ERROR;
        }
    }

    public static ResponseEntity<byte[]> of(ChatException e, String instance) {
        return of(status(e.code()), e.code().name(), e.getMessage(), instance);
    }

    /** A problem response; {@code code} is an {@link ErrorCode} name or one of the web layer's own codes. */
    public static ResponseEntity<byte[]> of(HttpStatus status, String code, @Nullable String detail, String instance) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", "urn:parley:error:" + code.toLowerCase(Locale.ROOT).replace('_', '-'));
        body.put("title", status.getReasonPhrase());
        body.put("status", status.value());
        if (detail != null) {
            body.put("detail", detail);
        }
        body.put("instance", instance);
        body.put("code", code);
        return ResponseEntity.status(status).contentType(PROBLEM_JSON).body(ChatJson.shared().writeBytes(body));
    }
}
