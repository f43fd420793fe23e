package dev.parley.chat.store;

import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@link InMemoryChatStore}'s record of what runs wait on: each run's inputs in first-save order with their
 * transitions (answer, reopen, expire or cancel), and the approvals a person gave for a whole thread. Not
 * thread-safe: the store calls it under its one lock. Lists returned are new.
 */
final class InMemoryInputs {
    private final Map<String, Map<String, PendingInput>> inputsByRun = new HashMap<>();
    /** "threadId\0toolName" of every approval remembered for a thread. */
    private final Set<String> approvals = new HashSet<>();

    /** Stores a new input; one whose {@code (runId, inputId)} is stored is ignored. */
    void save(PendingInput input) {
        inputsByRun.computeIfAbsent(input.runId(), k -> new LinkedHashMap<>()).putIfAbsent(input.inputId(), input);
    }

    /** Removes the inputs of these runs and the approvals remembered for the thread. */
    void deleteOfThread(String threadId, Collection<String> runIds) {
        for (String runId : runIds) {
            inputsByRun.remove(runId);
        }
        approvals.removeIf(key -> key.startsWith(threadId + '\u0000'));
    }

    Optional<PendingInput> find(String runId, String inputId) {
        return Optional.ofNullable(inputsByRun.getOrDefault(runId, Map.of()).get(inputId));
    }

    /** The run's inputs still PENDING, oldest first. */
    List<PendingInput> listPending(String runId) {
        List<PendingInput> pending = new ArrayList<>();
        for (PendingInput input : inputsByRun.getOrDefault(runId, Map.of()).values()) {
            if (input.state() == InputState.PENDING) {
                pending.add(input);
            }
        }
        return pending;
    }

    /** See {@link ChatStore#answerInput}. */
    AnswerOutcome answer(String runId, String inputId, InputAnswer answer, Instant at) {
        Map<String, PendingInput> inputs = inputsByRun.get(runId);
        PendingInput input = inputs == null ? null : inputs.get(inputId);
        if (input == null) {
            return AnswerOutcome.NOT_FOUND;
        }
        switch (input.state()) {
            case PENDING:
                inputs.put(inputId, input.resolved(InputState.ANSWERED, answer, at));
                return AnswerOutcome.ACCEPTED;
            case ANSWERED:
                return answer.equals(input.answer()) ? AnswerOutcome.REPLAYED : AnswerOutcome.CONFLICT;
            default:
                return AnswerOutcome.CONFLICT;
        }
    }

    /** Makes an ANSWERED input PENDING again, without its answer; any other is left as it is. */
    /** Takes an answer back: PENDING again, or CANCELLED when the run has ended (it waits for nothing). */
    void reopen(String runId, String inputId, boolean runEnded) {
        Map<String, PendingInput> inputs = inputsByRun.get(runId);
        PendingInput input = inputs == null ? null : inputs.get(inputId);
        if (input != null && input.state() == InputState.ANSWERED) {
            inputs.put(inputId, runEnded ? input.resolved(InputState.CANCELLED, null, input.resolvedAt())
                    : input.resolved(InputState.PENDING, null, null));
        }
    }

    /**
     * Resolves a PENDING input to {@code state}, which the caller has checked is EXPIRED or CANCELLED.
     *
     * @return false if the input was not pending
     */
    boolean close(String runId, String inputId, InputState state, Instant at) {
        Map<String, PendingInput> inputs = inputsByRun.get(runId);
        PendingInput input = inputs == null ? null : inputs.get(inputId);
        if (input == null || input.state() != InputState.PENDING) {
            return false;
        }
        inputs.put(inputId, input.resolved(state, null, at));
        return true;
    }

    /** Marks every PENDING input of the run CANCELLED. */
    void cancelPending(String runId, Instant at) {
        Map<String, PendingInput> inputs = inputsByRun.get(runId);
        if (inputs != null) {
            inputs.replaceAll((id, input) -> input.state() == InputState.PENDING
                    ? input.resolved(InputState.CANCELLED, null, at) : input);
        }
    }

    /** Remembers an approval; the caller has checked that the thread exists. */
    void rememberApproval(String threadId, String toolName) {
        approvals.add(threadId + '\u0000' + toolName);
    }

    boolean isApprovedForThread(String threadId, String toolName) {
        return approvals.contains(threadId + '\u0000' + toolName);
    }
}
