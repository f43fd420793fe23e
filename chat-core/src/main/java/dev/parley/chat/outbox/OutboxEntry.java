package dev.parley.chat.outbox;

import dev.parley.chat.input.InputKind;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * One notification to deliver to one destination. It carries ids and states only — never message text, the
 * owner or anything secret — so that what leaves the host is what the receiver needs to look the run up.
 *
 * <p>{@code messageId} is the same for every delivery of one event (to each destination, on every attempt,
 * after a restart): it is derived from the run and what happened to it, so a receiver de-duplicates by it and a
 * second write of the same event stores nothing new.
 *
 * @param messageId the stable id of the event ({@code msg_} and 32 hex digits)
 * @param destination the name of the destination ({@link OutboxRouting})
 * @param status for a run's end the status it ended with; for an input request WAITING_FOR_INPUT
 * @param inputId the input's id for {@link OutboxEventType#INPUT_REQUESTED}, else null
 * @param inputKind the input's kind for {@link OutboxEventType#INPUT_REQUESTED}, else null
 * @param occurredAt when the run ended or the input was asked
 * @param attempts delivery attempts made so far (0 for a new entry)
 * @param nextAttemptAt not to be delivered before this
 */
public record OutboxEntry(
        String messageId,
        String destination,
        OutboxEventType type,
        String threadId,
        String runId,
        RunStatus status,
        @Nullable String inputId,
        @Nullable InputKind inputKind,
        Instant occurredAt,
        int attempts,
        Instant nextAttemptAt) {

    public OutboxEntry {
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(occurredAt, "occurredAt");
        Objects.requireNonNull(nextAttemptAt, "nextAttemptAt");
        if ((type == OutboxEventType.INPUT_REQUESTED) != (inputId != null && inputKind != null)) {
            throw new IllegalArgumentException("an input id and kind come with input.requested and only with it");
        }
        if (attempts < 0) {
            throw new IllegalArgumentException("attempts must not be negative, got " + attempts);
        }
    }

    /**
     * The entry telling {@code destination} that {@code run}, whose record is terminal, ended.
     *
     * @throws IllegalArgumentException if the run has not ended
     */
    public static OutboxEntry runEnded(Run run, String destination) {
        OutboxEventType type = OutboxEventType.ofEnd(run.status());
        Instant at = run.finishedAt() != null ? run.finishedAt() : run.createdAt();
        return new OutboxEntry(messageId(run.id() + "\u0000end"), destination, type, run.threadId(), run.id(),
                run.status(), null, null, at, 0, at);
    }

    /** The entry telling {@code destination} that run {@code run} waits for {@code input}. */
    public static OutboxEntry inputRequested(Run run, PendingInput input, String destination) {
        return new OutboxEntry(messageId(run.id() + "\u0000input\u0000" + input.inputId()), destination,
                OutboxEventType.INPUT_REQUESTED, run.threadId(), run.id(), RunStatus.WAITING_FOR_INPUT,
                input.inputId(), input.kind(), input.createdAt(), 0, input.createdAt());
    }

    /** This entry after a failed attempt: {@code attempts} made, the next not before {@code next}. */
    public OutboxEntry retried(int attemptsMade, Instant next) {
        return new OutboxEntry(messageId, destination, type, threadId, runId, status, inputId, inputKind, occurredAt,
                attemptsMade, next);
    }

    private static String messageId(String key) {
        return "msg_" + UUID.nameUUIDFromBytes(key.getBytes(StandardCharsets.UTF_8)).toString().replace("-", "");
    }
}
