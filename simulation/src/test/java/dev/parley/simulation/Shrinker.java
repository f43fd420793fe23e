package dev.parley.simulation;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Makes a failing history short enough to read: removes ever smaller chunks of operations (delta debugging)
 * as long as the rest still breaks the same promise. The engine's threads are real, so a history does not
 * always fail the same way twice: each candidate gets a few tries, and the result is the shortest history
 * seen failing, with the command that replays it.
 */
final class Shrinker {
    private static final int TRIES = 3;

    private final Path work;
    private final long budgetNanos;

    Shrinker(Path work, long budgetMillis) {
        this.work = work;
        this.budgetNanos = budgetMillis * 1_000_000;
    }

    /** The shortest subset of {@code failed}'s operations found that still breaks its first promise. */
    Simulation.Outcome shrink(Simulation.Outcome failed) {
        long deadline = System.nanoTime() + budgetNanos;
        String invariant = failed.invariant();
        Simulation.Outcome best = failed;
        List<Integer> ids = new ArrayList<>(failed.ran().stream().map(Op::id).toList());
        int chunks = 2;
        while (ids.size() > 1 && System.nanoTime() < deadline) {
            int size = Math.max(1, ids.size() / chunks);
            boolean removed = false;
            for (int start = 0; start < ids.size() && System.nanoTime() < deadline; start += size) {
                List<Integer> candidate = new ArrayList<>(ids.subList(0, start));
                candidate.addAll(ids.subList(Math.min(ids.size(), start + size), ids.size()));
                if (candidate.isEmpty()) {
                    continue;
                }
                Simulation.Outcome outcome = failsAgain(failed.settings(), candidate, invariant);
                if (outcome != null) {
                    ids = new ArrayList<>(outcome.ran().stream().map(Op::id).toList());
                    best = outcome;
                    chunks = Math.max(2, chunks - 1);
                    removed = true;
                    break;
                }
            }
            if (!removed) {
                if (size == 1) {
                    break;
                }
                chunks = Math.min(ids.size(), chunks * 2);
            }
        }
        return best;
    }

    private Simulation.Outcome failsAgain(Simulation.Settings settings, List<Integer> ids, String invariant) {
        Set<Integer> keep = new LinkedHashSet<>(ids);
        for (int i = 0; i < TRIES; i++) {
            Simulation.Outcome outcome = Simulation.run(settings, keep, work);
            if (outcome.failed() && outcome.invariant().equals(invariant)) {
                return outcome;
            }
        }
        return null;
    }
}
