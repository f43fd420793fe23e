package dev.parley.chat.runtime;

import java.util.List;
import java.util.Objects;

/**
 * A person's answer to a clarify question: one entry for free text or a single choice, one per chosen
 * option for a multi-select question. Never empty.
 */
public record ClarifyReply(String runId, String clarifyId, List<String> answer) {
    public ClarifyReply {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(clarifyId, "clarifyId");
        answer = List.copyOf(answer);
        if (answer.isEmpty()) {
            throw new IllegalArgumentException("a clarify answer must not be empty");
        }
    }
}
