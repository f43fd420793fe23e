package dev.parley.chat.engine;

import dev.parley.chat.model.ClarifyMessage;
import dev.parley.chat.model.Run;
import java.util.List;
import java.util.Objects;

/**
 * A run as it stands now: its record, the seq of its newest event (a subscriber's cursor to start from)
 * and the clarify questions waiting for an answer (seed 000's {@code /state}, for a page that reloads).
 */
public record RunState(Run run, long lastSeq, List<ClarifyMessage> pendingClarifies) {
    public RunState {
        Objects.requireNonNull(run, "run");
        pendingClarifies = List.copyOf(pendingClarifies);
    }
}
