package dev.parley.chat.langchain4j.internal;

import dev.langchain4j.exception.AuthenticationException;
import dev.langchain4j.exception.ContentFilteredException;
import dev.langchain4j.exception.HttpException;
import dev.langchain4j.exception.InternalServerException;
import dev.langchain4j.exception.InvalidRequestException;
import dev.langchain4j.exception.ModelNotFoundException;
import dev.langchain4j.exception.RateLimitException;
import dev.langchain4j.exception.TimeoutException;
import dev.langchain4j.exception.UnresolvedModelServerException;
import dev.parley.chat.agent.ModelFailure;
import java.io.IOException;
import java.nio.channels.UnresolvedAddressException;
import org.jspecify.annotations.Nullable;

/** Reads what went wrong from LangChain4j's exceptions. */
public final class Failures {
    private Failures() {
    }

    /**
     * The failure {@code error} means. An HTTP status anywhere in the causes decides (see
     * {@link ModelFailure#ofHttpStatus}); otherwise LangChain4j's exception type; connection and stream errors
     * ({@link IOException}s) mean the provider is unreachable.
     */
    public static ModelFailure of(Throwable error) {
        if (error instanceof ModelFailure failure) {
            return failure;
        }
        HttpException http = find(error, HttpException.class);
        if (http != null) {
            return ModelFailure.ofHttpStatus(http.statusCode(), http.getMessage(), error);
        }
        if (error instanceof RateLimitException) {
            return new ModelFailure(ModelFailure.Kind.RATE_LIMITED, "The model provider is limiting requests", error);
        }
        if (error instanceof AuthenticationException) {
            return new ModelFailure(ModelFailure.Kind.AUTHENTICATION, "The model provider refused the credentials",
                    error);
        }
        if (error instanceof InvalidRequestException || error instanceof ModelNotFoundException) {
            return ModelFailure.isContextTooLong(error.getMessage())
                    ? new ModelFailure(ModelFailure.Kind.CONTEXT_TOO_LONG,
                            "The conversation is longer than the model's context window", error)
                    : new ModelFailure(ModelFailure.Kind.INVALID_REQUEST,
                            "The model provider refused the request: " + describe(error), error);
        }
        if (error instanceof ContentFilteredException) {
            return new ModelFailure(ModelFailure.Kind.FAILED, "The model provider filtered the answer", error);
        }
        if (error instanceof InternalServerException || error instanceof TimeoutException
                || error instanceof UnresolvedModelServerException || find(error, IOException.class) != null
                || find(error, UnresolvedAddressException.class) != null
                || find(error, java.util.concurrent.TimeoutException.class) != null) {
            return new ModelFailure(ModelFailure.Kind.UNREACHABLE,
                    "The model provider could not be reached or the stream broke off: " + describe(rootOf(error)),
                    error);
        }
        return new ModelFailure(ModelFailure.Kind.FAILED, "The model call failed: " + describe(error), error);
    }

    /** A request LangChain4j would not build (say, a tool schema it cannot read). */
    public static ModelFailure invalidRequest(RuntimeException error) {
        return new ModelFailure(ModelFailure.Kind.INVALID_REQUEST, "The model request is invalid: " + describe(error),
                error);
    }

    private static <T extends Throwable> @Nullable T find(Throwable error, Class<T> type) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }

    private static Throwable rootOf(Throwable error) {
        Throwable root = error;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root;
    }

    private static String describe(Throwable error) {
        return error.getMessage() != null ? error.getMessage() : error.getClass().getSimpleName();
    }
}
