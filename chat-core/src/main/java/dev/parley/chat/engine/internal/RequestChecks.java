package dev.parley.chat.engine.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.engine.StartRun;
import org.jspecify.annotations.Nullable;

/** The checks of a caller's input the engine makes before anything is read or written: INVALID_INPUT. */
public final class RequestChecks {
    /** The longest title, model id, skill or client message id. */
    public static final int MAX_FIELD_LENGTH = 200;

    private RequestChecks() {
    }

    public static void owner(String ownerId) {
        if (ownerId == null || ownerId.isBlank()) {
            throw ChatException.invalidInput("an owner id is required");
        }
    }

    public static void limit(EngineLimits limits, int limit) {
        if (limit < 1 || limit > limits.maxPageSize()) {
            throw ChatException.invalidInput("limit must be between 1 and " + limits.maxPageSize() + ", got " + limit);
        }
    }

    public static String message(EngineLimits limits, String text) {
        if (text == null || text.isBlank()) {
            throw ChatException.invalidInput("the message must not be blank");
        }
        if (text.length() > limits.maxMessageLength()) {
            throw ChatException.invalidInput("the message is longer than " + limits.maxMessageLength() + " characters");
        }
        return text;
    }

    public static String title(String title) {
        if (title.isBlank()) {
            throw ChatException.invalidInput("a title must not be blank");
        }
        if (title.length() > MAX_FIELD_LENGTH) {
            throw ChatException.invalidInput("a title must not be longer than " + MAX_FIELD_LENGTH + " characters");
        }
        return title.strip();
    }

    public static void optionalField(@Nullable String value, String name) {
        if (value != null && (value.isBlank() || value.length() > MAX_FIELD_LENGTH)) {
            throw ChatException.invalidInput(name + " must be null or 1 to " + MAX_FIELD_LENGTH + " characters");
        }
    }

    /** Checks a run request's own fields (the message, model, skill, budget, client id); returns the text. */
    public static String startRun(EngineLimits limits, StartRun request) {
        String text = message(limits, request.message());
        optionalField(request.modelId(), "modelId");
        optionalField(request.skill(), "skill");
        optionalField(request.clientMessageId(), "clientMessageId");
        if (request.maxIterations() != null && request.maxIterations() < 1) {
            throw ChatException.invalidInput("maxIterations must be positive, got " + request.maxIterations());
        }
        return text;
    }

    /** The first {@code titleLength} characters of the message, on one line. */
    public static String defaultTitle(EngineLimits limits, String text) {
        String line = text.strip().replaceAll("\\s+", " ");
        int end = line.offsetByCodePoints(0, Math.min(limits.titleLength(), line.codePointCount(0, line.length())));
        return line.substring(0, end);
    }
}
