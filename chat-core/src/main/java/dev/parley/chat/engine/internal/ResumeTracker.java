package dev.parley.chat.engine.internal;

import dev.parley.chat.store.StoreBatch;
import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;

/**
 * Where one run's runtime stream stands in the runtime, as far as the run's log goes, so that a restarted
 * host can follow the run again without a gap or a repeat ({@link dev.parley.chat.runtime.ResumableSubscriber}).
 *
 * <p>The stream reports resume tokens between its items. A point is a token and how many of the runtime's
 * items after it are in the log ({@code skip}); it holds once the log is stored up to the seq it was
 * reached at. Each item counts, whether it was logged or left out (an item the engine ignores is left out
 * again after a re-attachment: skipping it is the same). A re-attached stream starts at a stored point: its
 * first {@code skip} items are in the log already and are skipped ({@link #skipStored}).
 *
 * <p>The point handed to the store is the newest whose seq the batch's events reach, so it never says more
 * than the store holds, nor less. Not thread-safe: every call is made holding the run's monitor.
 */
final class ResumeTracker {
    /** A point (token and skip), and the seq up to which the log must be stored for it to hold. */
    private record Reached(long seq, String token, long skip) {
    }

    private final String runId;
    /**
     * The run can be re-attached: every point is stored, followable. Otherwise (the runtime cannot re-attach,
     * or the run offers tools the person's browser runs, which are not stored) the token only names the run on
     * the runtime's side, for stopping it: a point is stored only when its token changes, not followable.
     */
    private final boolean reattachable;
    private @Nullable String token;
    /** The runtime's items after {@link #token} that are in the log (or were left out). */
    private long covered;
    /** Items of a re-attached stream that are in the log already. */
    private long toSkip;
    private final ArrayDeque<Reached> reached = new ArrayDeque<>();
    /** The newest seq handed to a batch. */
    private long handedUpTo;
    private StoreBatch.@Nullable ResumePoint handed;

    /** @param handedUpTo the newest seq in the store already (the base of a recovered run; 0 for a new one) */
    ResumeTracker(String runId, boolean reattachable, long handedUpTo) {
        this.runId = runId;
        this.reattachable = reattachable;
        this.handedUpTo = handedUpTo;
    }

    /** A re-attached stream begins at this stored point: its first {@code skip} items are in the log. */
    void resumeAt(String resumeToken, long skip) {
        token = resumeToken;
        covered = skip;
        toSkip = skip;
        handed = new StoreBatch.ResumePoint(runId, resumeToken, skip);
    }

    /** An item of the runtime arrives: true if it is one the log holds already (skip it). */
    boolean skipStored() {
        if (toSkip == 0) {
            return false;
        }
        toSkip--;
        return true;
    }

    /** An item of the runtime was logged at {@code seq}, or left out ({@code seq}: the newest seq). */
    void handled(long seq) {
        if (token == null) {
            return;
        }
        covered++;
        reach(seq);
    }

    /** The stream reported a token; {@code seq} is the newest seq. The items still to skip come after it. */
    void resumePoint(String resumeToken, long seq) {
        token = resumeToken;
        covered = toSkip;
        reach(seq);
    }

    private void reach(long seq) {
        Reached last = reached.peekLast();
        if (!reattachable && token.equals(last != null ? last.token() : handed != null ? handed.token() : null)) {
            return;
        }
        if (last != null && last.seq() == seq) {
            reached.pollLast();
        }
        reached.addLast(new Reached(seq, token, covered));
    }

    /** True once the stream reported where it stands and the run can be re-attached: another host can follow it. */
    boolean followable() {
        return reattachable && token != null;
    }

    /** The token the stream reported last, or null. */
    @Nullable String token() {
        return token;
    }

    /**
     * Adds the newest point the store will hold once the run's events up to {@code lastSeq} are stored (0:
     * no events in this batch) to the batch, if it is news to the store.
     */
    void handOver(StoreBatch.Builder batch, long lastSeq) {
        handedUpTo = Math.max(handedUpTo, lastSeq);
        Reached newest = null;
        while (!reached.isEmpty() && reached.peekFirst().seq() <= handedUpTo) {
            newest = reached.pollFirst();
        }
        if (newest == null || handed != null && newest.token().equals(handed.token()) && (!reattachable
                || newest.skip() == handed.skip())) {
            return;
        }
        handed = new StoreBatch.ResumePoint(runId, newest.token(), newest.skip(), reattachable);
        batch.resumePoint(handed);
    }
}
