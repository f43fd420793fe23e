package dev.parley.chat.agent;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * A model call failed in a way the person can act on; {@link #kind()} names it, and the run fails with the
 * matching code ({@link #code()}, see {@link Kind}). A rate limit may say when to try again
 * ({@link #retryAfter()}, from the provider's {@code Retry-After}); the run's error carries it
 * ({@code retryAfterSeconds}) and the message says so too. Messages never contain secrets.
 */
public final class ModelFailure extends ChatException {
    private static final long serialVersionUID = 1L;

    /** How a model call failed, and the {@link ErrorCode} (and run code) each kind carries. */
    public enum Kind {
        /** Too many requests (HTTP 429); worth retrying later. {@link ErrorCode#RATE_LIMITED}. */
        RATE_LIMITED(ErrorCode.RATE_LIMITED),
        /** The API key or credentials were refused (HTTP 401, 403). {@link ErrorCode#AUTHENTICATION_FAILED}. */
        AUTHENTICATION(ErrorCode.AUTHENTICATION_FAILED),
        /** The conversation is longer than the model's context window. {@link ErrorCode#CONTEXT_TOO_LONG}. */
        CONTEXT_TOO_LONG(ErrorCode.CONTEXT_TOO_LONG),
        /**
         * The model's server could not be reached or did not answer (connection refused, timeout, 5xx).
         * {@link ErrorCode#RUNTIME_UNAVAILABLE}.
         */
        UNREACHABLE(ErrorCode.RUNTIME_UNAVAILABLE),
        /** The request was refused as malformed (HTTP 400 for another reason). {@link ErrorCode#INVALID_INPUT}. */
        INVALID_REQUEST(ErrorCode.INVALID_INPUT),
        /** Anything else. {@link ErrorCode#RUNTIME_FAILED}. */
        FAILED(ErrorCode.RUNTIME_FAILED);

        private final ErrorCode code;

        Kind(ErrorCode code) {
            this.code = code;
        }

        /** The code a failure of this kind carries, and the code its run fails with. */
        public ErrorCode code() {
            return code;
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_PROVIDER_TEXT = 300;
    /** How providers (OpenAI, vLLM, Ollama, llama.cpp, Anthropic, Gemini) say a prompt is over the window. */
    private static final List<String> CONTEXT_WORDS = List.of("context_length_exceeded", "context length",
            "context window", "context size", "maximum context", "too many tokens", "prompt is too long",
            "input is too long", "exceeds the context", "reduce the length");

    private final Kind kind;
    private final @Nullable Duration retryAfter;

    public ModelFailure(Kind kind, String message, @Nullable Throwable cause) {
        this(kind, message, cause, null);
    }

    /**
     * @param retryAfter how long the provider asked to wait before trying again ({@code Retry-After}), null if it
     *     did not say; it is added to the message ("retry after 20 s")
     */
    public ModelFailure(Kind kind, String message, @Nullable Throwable cause, @Nullable Duration retryAfter) {
        super(kind.code(), retryAfter == null ? message : message + " (retry after " + ceilSeconds(retryAfter) + " s)",
                cause);
        this.kind = kind;
        this.retryAfter = retryAfter;
    }

    public ModelFailure(Kind kind, String message) {
        this(kind, message, null);
    }

    public Kind kind() {
        return kind;
    }

    /** How long the provider asked to wait before the next try (its {@code Retry-After}); null if it did not say. */
    public @Nullable Duration retryAfter() {
        return retryAfter;
    }

    /**
     * How long the provider asked to wait, in whole seconds rounded up, as a run's error carries it
     * ({@code retryAfterSeconds}); null if it did not say.
     */
    public @Nullable Long retryAfterSeconds() {
        return retryAfter == null ? null : ceilSeconds(retryAfter);
    }

    /**
     * What an HTTP error from a model provider means, for adapters over libraries that report the status:
     * 429 {@link Kind#RATE_LIMITED}; 401 and 403 {@link Kind#AUTHENTICATION}; a 4xx whose text speaks of the
     * context window {@link Kind#CONTEXT_TOO_LONG}; 408 and 5xx {@link Kind#UNREACHABLE}; other 4xx
     * {@link Kind#INVALID_REQUEST}; anything else {@link Kind#FAILED}.
     *
     * @param status the HTTP status
     * @param providerText the provider's error body or message, null if none; a JSON body is read for its
     *     {@code error.message}. It is quoted (shortened) in the message, except for 401 and 403, whose bodies
     *     may echo a key
     * @param cause the library's exception, kept as the cause
     */
    public static ModelFailure ofHttpStatus(int status, @Nullable String providerText, @Nullable Throwable cause) {
        return ofHttpStatus(status, providerText, cause, null);
    }

    /**
     * As {@link #ofHttpStatus(int, String, Throwable)}, for adapters that see the response's headers:
     * {@code retryAfter} (a 429's or 503's {@code Retry-After}, see {@link #parseRetryAfter}) is kept on a
     * {@link Kind#RATE_LIMITED} failure.
     */
    public static ModelFailure ofHttpStatus(int status, @Nullable String providerText, @Nullable Throwable cause,
            @Nullable Duration retryAfter) {
        String said = providerMessage(providerText);
        String quoted = said.isEmpty() ? "" : ": " + said;
        if (status == 429) {
            return new ModelFailure(Kind.RATE_LIMITED, "The model provider is limiting requests (HTTP 429)" + quoted,
                    cause, retryAfter);
        }
        if (status == 401 || status == 403) {
            return new ModelFailure(Kind.AUTHENTICATION,
                    "The model provider refused the credentials (HTTP " + status + ")", cause);
        }
        if (status >= 400 && status < 500 && isContextTooLong(providerText)) {
            return new ModelFailure(Kind.CONTEXT_TOO_LONG,
                    "The conversation is longer than the model's context window (HTTP " + status + ")" + quoted, cause);
        }
        if (status == 408 || (status >= 500 && status < 600)) {
            return new ModelFailure(Kind.UNREACHABLE, "The model provider did not answer (HTTP " + status + ")" + quoted,
                    cause);
        }
        if (status >= 400 && status < 500) {
            return new ModelFailure(Kind.INVALID_REQUEST,
                    "The model provider refused the request (HTTP " + status + ")" + quoted, cause);
        }
        return new ModelFailure(Kind.FAILED, "The model provider answered HTTP " + status + quoted, cause);
    }

    /**
     * A {@code Retry-After} header's wait: delay-seconds ({@code 20}) or an HTTP date (then the time from
     * {@code now} until it, at least zero). Null for a missing or unreadable value.
     */
    public static @Nullable Duration parseRetryAfter(@Nullable String value, Instant now) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String text = value.strip();
        try {
            long seconds = Long.parseLong(text);
            return seconds < 0 ? null : Duration.ofSeconds(seconds);
        } catch (NumberFormatException notSeconds) {
            try {
                Instant at = ZonedDateTime.parse(text, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
                return at.isAfter(now) ? Duration.between(now, at) : Duration.ZERO;
            } catch (DateTimeParseException notADate) {
                return null;
            }
        }
    }

    /** True if a provider's error text says the prompt does not fit the model's context window. */
    public static boolean isContextTooLong(@Nullable String providerText) {
        if (providerText == null) {
            return false;
        }
        String text = providerText.toLowerCase(Locale.ROOT);
        return CONTEXT_WORDS.stream().anyMatch(text::contains);
    }

    private static String providerMessage(@Nullable String text) {
        if (text == null || text.isBlank()) {
            return "";
        }
        String said = text.strip();
        if (said.startsWith("{")) {
            try {
                JsonNode body = JSON.readTree(said);
                JsonNode error = body.path("error");
                JsonNode message = error.isTextual() ? error : error.path("message");
                if (!message.isTextual()) {
                    message = body.path("message");
                }
                if (message.isTextual()) {
                    said = message.asText();
                }
            } catch (JsonProcessingException notJson) {
                said = text.strip();
            }
        }
        return said.length() <= MAX_PROVIDER_TEXT ? said : said.substring(0, MAX_PROVIDER_TEXT) + "…";
    }

    private static long ceilSeconds(Duration wait) {
        return wait.toNanosPart() > 0 ? wait.toSeconds() + 1 : wait.toSeconds();
    }
}
