package dev.parley.simulator.internal;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * What Hermes remembers of approval decisions: {@code session} approves a pattern for one approval key (a
 * conversation), in memory, so a restarted Bridge forgets it; {@code always} approves it for everything
 * (Hermes writes it to its {@code command_allowlist}), so it survives. Thread-safe.
 */
public final class ApprovalMemory {
    private final Map<String, Set<String>> bySession = new HashMap<>();
    private final Set<String> always = new HashSet<>();

    /** True if the pattern needs no approval under this key any more. */
    public synchronized boolean approved(String key, String pattern) {
        return always.contains(pattern) || bySession.getOrDefault(key, Set.of()).contains(pattern);
    }

    /** Remembers a decision as Hermes would: only {@code session} and {@code always} are kept. */
    public synchronized void remember(String key, String pattern, String decision) {
        if (decision.equals("session")) {
            bySession.computeIfAbsent(key, k -> new HashSet<>()).add(pattern);
        } else if (decision.equals("always")) {
            always.add(pattern);
        }
    }

    /** Forgets the session approvals under one key (a deleted conversation); {@code always} ones stay. */
    public synchronized void forget(String key) {
        bySession.remove(key);
    }

    /** Forgets the session approvals, as a restarted Bridge does; {@code always} ones stay. */
    public synchronized void forgetSessions() {
        bySession.clear();
    }
}
