package dev.parley.chat.cluster;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A request to the instance that holds a run, or its reply. Kept small (a coordinator may carry it in a
 * PostgreSQL NOTIFY): an answer stays in the store, the message only says which pending input.
 *
 * @param correlationId pairs a reply with its request
 * @param from the sending instance; replies go back to it
 * @param inputId for ANSWER: the pending input whose stored answer to deliver
 * @param error for REPLY: null when the request succeeded, else why it failed ({@link #ALREADY_ANSWERED} when
 *     the input was resolved before and the answer was not delivered again)
 */
public record ControlMessage(
        Kind kind,
        String runId,
        String correlationId,
        String from,
        @Nullable String inputId,
        @Nullable String error) {

    /** The error of a REPLY to ANSWER whose input the run had already resolved: the answer was not delivered. */
    public static final String ALREADY_ANSWERED = "already answered";

    /** What a control message asks for. */
    public enum Kind {
        /** Stop the run. */
        CANCEL,
        /** Deliver the stored answer of a pending input to whoever asked for it. */
        ANSWER,
        /** The outcome of a request. */
        REPLY
    }

    public ControlMessage {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(correlationId, "correlationId");
        Objects.requireNonNull(from, "from");
    }

    /** The reply to this request. */
    public ControlMessage reply(String replyingInstance, @Nullable String failure) {
        return new ControlMessage(Kind.REPLY, runId, correlationId, replyingInstance, inputId, failure);
    }
}
