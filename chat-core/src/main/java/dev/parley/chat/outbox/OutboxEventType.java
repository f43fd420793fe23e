package dev.parley.chat.outbox;

import dev.parley.chat.ChatException;
import dev.parley.chat.model.RunStatus;
import java.util.Arrays;
import java.util.stream.Collectors;

/** What an outbox entry tells; {@link #wireName()} is its name on the wire ({@code run.succeeded} …). */
public enum OutboxEventType {
    /** A run ended SUCCEEDED. */
    RUN_SUCCEEDED("run.succeeded"),
    /** A run ended FAILED. */
    RUN_FAILED("run.failed"),
    /** A run was stopped on request (or before it started, or its input expired): CANCELLED. */
    RUN_CANCELLED("run.cancelled"),
    /** The host went away while the run was active: INTERRUPTED. */
    RUN_INTERRUPTED("run.interrupted"),
    /** A run waits for a person: an approval, a clarify question or a tool the person's browser runs. */
    INPUT_REQUESTED("input.requested");

    private final String wireName;

    OutboxEventType(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }

    /**
     * The type of a wire name.
     *
     * @throws ChatException CONFIGURATION naming the known names, for a name that is none of them
     */
    public static OutboxEventType ofWireName(String name) {
        for (OutboxEventType type : values()) {
            if (type.wireName.equals(name)) {
                return type;
            }
        }
        throw ChatException.configuration("unknown webhook event '" + name + "'; known: "
                + Arrays.stream(values()).map(OutboxEventType::wireName).collect(Collectors.joining(", ")));
    }

    /**
     * The type telling that a run ended with {@code status}.
     *
     * @throws IllegalArgumentException for a status that is not terminal
     */
    public static OutboxEventType ofEnd(RunStatus status) {
        return switch (status) {
            case SUCCEEDED -> RUN_SUCCEEDED;
            case FAILED -> RUN_FAILED;
            case CANCELLED -> RUN_CANCELLED;
            case INTERRUPTED -> RUN_INTERRUPTED;
            default -> throw new IllegalArgumentException(status + " is not terminal");
        };
    }
}
