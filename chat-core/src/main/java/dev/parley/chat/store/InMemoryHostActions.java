package dev.parley.chat.store;

import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * {@link InMemoryChatStore}'s executions of host actions, one per {@code (runId, executionId)}: the claim
 * that exactly one caller wins, and the first result. Not thread-safe: the store calls it under its one lock.
 */
final class InMemoryHostActions {
    /** Keyed by "runId\0executionId"; every stored record has {@code claimedNow} false. */
    private final Map<String, HostActionRecord> hostActions = new HashMap<>();

    /** See {@link ChatStore#claimHostAction}: the stored execution, else a new one with {@code claimedNow}. */
    HostActionRecord claim(String runId, String executionId, String name, String arguments, Instant at) {
        String key = runId + '\u0000' + executionId;
        HostActionRecord existing = hostActions.get(key);
        if (existing != null) {
            return existing;
        }
        HostActionRecord claimed = new HostActionRecord(runId, executionId, name, arguments, true, null, false, at,
                null);
        hostActions.put(key, new HostActionRecord(runId, executionId, name, arguments, false, null, false, at, null));
        return claimed;
    }

    /**
     * Records the result of a claimed execution not completed yet; a completed one is left as it is.
     *
     * @return false if the execution is not stored
     */
    boolean complete(String runId, String executionId, String result, boolean error, Instant at) {
        String key = runId + '\u0000' + executionId;
        HostActionRecord existing = hostActions.get(key);
        if (existing == null) {
            return false;
        }
        if (!existing.isCompleted()) {
            hostActions.put(key, new HostActionRecord(runId, executionId, existing.name(), existing.arguments(),
                    false, result, error, existing.claimedAt(), at));
        }
        return true;
    }

    /** Removes the executions of these runs. */
    void deleteOfRuns(Collection<String> runIds) {
        for (String runId : runIds) {
            hostActions.keySet().removeIf(key -> key.startsWith(runId + '\u0000'));
        }
    }
}
