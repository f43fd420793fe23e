package dev.parley.chat.springai.internal;

import dev.parley.chat.agent.ModelFailure;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads what went wrong from the exceptions of Spring AI's models. They come from the provider's own client
 * (OpenAI's and Anthropic's Java SDKs, Spring's {@code RestClient} and {@code WebClient}), which Spring AI does not
 * wrap in one type, so the HTTP status is read from any exception in the causes that offers one: a public
 * {@code statusCode()} (the SDKs) or {@code getStatusCode()} (Spring's web client exceptions), and a rate limit's
 * {@code Retry-After} from its headers ({@code headers().values(name)} of the SDKs, {@code getResponseHeaders()} of
 * Spring's).
 */
public final class Failures {
    private static final Logger log = LoggerFactory.getLogger(Failures.class);

    private Failures() {
    }

    /**
     * The failure {@code error} means: by the first HTTP status in its causes (see
     * {@link ModelFailure#ofHttpStatus}); connection and stream errors ({@link IOException}s, timeouts) mean the
     * provider is unreachable; anything else failed.
     */
    public static ModelFailure of(Throwable error) {
        if (error instanceof ModelFailure failure) {
            return failure;
        }
        for (Throwable t = error; t != null; t = next(t)) {
            Integer status = statusOf(t);
            if (status != null) {
                return ModelFailure.ofHttpStatus(status, bodyOf(t, status), error,
                        ModelFailure.parseRetryAfter(retryAfterOf(t), Instant.now()));
            }
        }
        for (Throwable t = error; t != null; t = next(t)) {
            if (t instanceof IOException || t instanceof UncheckedIOException || t instanceof TimeoutException) {
                return new ModelFailure(ModelFailure.Kind.UNREACHABLE,
                        "The model provider could not be reached or the stream broke off: " + describe(t), error);
            }
        }
        return new ModelFailure(ModelFailure.Kind.FAILED, "The model call failed: " + describe(error), error);
    }

    /** A prompt that could not be built (say, tools for options that take none). */
    public static ModelFailure invalidRequest(RuntimeException error) {
        return new ModelFailure(ModelFailure.Kind.INVALID_REQUEST, "The model request is invalid: " + describe(error),
                error);
    }

    private static @Nullable Throwable next(Throwable t) {
        return t.getCause() == t ? null : t.getCause();
    }

    private static @Nullable Integer statusOf(Throwable t) {
        Object status = call(t, "statusCode");
        if (status == null) {
            status = call(t, "getStatusCode");
        }
        if (status instanceof Integer code) {
            return code;
        }
        if (status != null) {
            Object value = call(status, "value");
            if (value instanceof Integer code) {
                return code;
            }
        }
        return null;
    }

    /** The {@code Retry-After} header where the exception keeps the response's headers; null otherwise. */
    private static @Nullable String retryAfterOf(Throwable t) {
        Object headers = call(t, "headers");
        if (headers == null) {
            headers = call(t, "getResponseHeaders");
        }
        if (headers == null) {
            return null;
        }
        for (String method : new String[] {"values", "getFirst"}) {
            try {
                Object found = headers.getClass().getMethod(method, String.class).invoke(headers, "Retry-After");
                if (found instanceof List<?> values) {
                    found = values.isEmpty() ? null : values.get(0);
                }
                if (found != null) {
                    return found.toString();
                }
            } catch (ReflectiveOperationException | RuntimeException e) {
                log.trace("The headers of {} have no {}(String)", t.getClass().getName(), method);
            }
        }
        return null;
    }

    /** The provider's body where the exception keeps it, else its message without the SDKs' "429: " prefix. */
    private static @Nullable String bodyOf(Throwable t, int status) {
        Object body = call(t, "getResponseBodyAsString");
        if (body instanceof String text && !text.isBlank()) {
            return text;
        }
        String message = t.getMessage();
        String prefix = status + ": ";
        return message != null && message.startsWith(prefix) ? message.substring(prefix.length()) : message;
    }

    private static @Nullable Object call(Object target, String method) {
        try {
            Method found = target.getClass().getMethod(method);
            return found.getParameterCount() == 0 ? found.invoke(target) : null;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private static String describe(Throwable error) {
        return error.getMessage() != null ? error.getMessage() : error.getClass().getSimpleName();
    }
}
