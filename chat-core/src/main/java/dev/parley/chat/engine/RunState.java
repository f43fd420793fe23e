package dev.parley.chat.engine;

import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.Run;
import java.util.List;
import java.util.Objects;

/**
 * A run as it stands now: its record, the seq of its newest event (a subscriber's cursor to start from)
 * and what waits for the person: what a page that reloads needs to show the run again.
 *
 * @param pendingInputs every input waiting for the person, of every kind (clarify questions, approvals,
 *     tools the person's browser runs), oldest first; a clarify's question is its {@code request}, and its
 *     message is the one {@code messageId} names
 */
public record RunState(Run run, long lastSeq, List<PendingInput> pendingInputs) {
    public RunState {
        Objects.requireNonNull(run, "run");
        pendingInputs = List.copyOf(pendingInputs);
    }
}
