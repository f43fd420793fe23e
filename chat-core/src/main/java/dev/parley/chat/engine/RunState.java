package dev.parley.chat.engine;

import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.ClarifyMessage;
import dev.parley.chat.model.Run;
import java.util.List;
import java.util.Objects;

/**
 * A run as it stands now: its record, the seq of its newest event (a subscriber's cursor to start from)
 * and what waits for the person: what a page that reloads needs to show the run again.
 *
 * @param pendingClarifies the clarify questions waiting for an answer, as messages (the older view; every
 *     one is also in {@code pendingInputs})
 * @param pendingInputs every input waiting for the person, of every kind, oldest first
 */
public record RunState(Run run, long lastSeq, List<ClarifyMessage> pendingClarifies, List<PendingInput> pendingInputs) {
    public RunState {
        Objects.requireNonNull(run, "run");
        pendingClarifies = List.copyOf(pendingClarifies);
        pendingInputs = List.copyOf(pendingInputs);
    }
}
