package dev.parley.chat.outbox;

import java.time.Instant;
import java.util.List;

/**
 * What a {@link dev.parley.chat.store.ChatStore} that keeps an outbox does beside it: it stores the
 * {@link dev.parley.chat.store.StoreBatch#outbox() outbox entries} of a batch in the batch's transaction
 * (an entry whose message id and destination are stored already is left as it is), removes a thread's entries
 * when the thread is deleted (so erasing an owner leaves none), and hands entries to dispatchers.
 *
 * <p>An entry is <em>pending</em> until it is {@link #completeOutbox completed} (removed) or
 * {@link #failOutbox failed} for good. Dispatchers of several host instances share the entries through
 * {@link #claimOutbox}: a claim lasts until its lease ends, and while it lasts no other claim takes the entry;
 * a dispatcher that dies leaves its claims to expire. So delivery is at least once: an entry delivered and not
 * completed before its lease ended (the host died, or a delivery took longer than the lease) is delivered again,
 * with the same message id.
 *
 * <p>Thread-safe. Every method throws {@link dev.parley.chat.ChatException} STORE_FAILURE when the store fails.
 */
public interface OutboxStore {

    /**
     * Claims up to {@code limit} pending entries due at {@code now} (their next attempt is not after it) that
     * no lease holds at {@code now}, oldest due first, for {@code instanceId} until {@code leaseUntil}.
     *
     * @return the claimed entries; empty when none is due
     */
    List<OutboxEntry> claimOutbox(String instanceId, Instant now, Instant leaseUntil, int limit);

    /**
     * Removes a delivered entry, if {@code instanceId} still holds its claim.
     *
     * @return false if the claim was lost (the lease ended and another instance claimed it) or the entry is gone
     */
    boolean completeOutbox(String messageId, String destination, String instanceId);

    /**
     * Records a failed attempt of an entry {@code instanceId} claims: the attempts made so far and when to try
     * next; the claim ends.
     *
     * @return false if the claim was lost or the entry is gone
     */
    boolean retryOutbox(String messageId, String destination, String instanceId, int attempts, Instant nextAttemptAt);

    /**
     * Gives up on an entry {@code instanceId} claims: it stays, as failed, with the attempts made and when it
     * failed, for {@link #countOutbox} until {@link #purgeFailedOutbox} or its thread's deletion removes it.
     *
     * @return false if the claim was lost or the entry is gone
     */
    boolean failOutbox(String messageId, String destination, String instanceId, int attempts, Instant at);

    /** How many entries are pending (claimed or not) and how many failed for good. */
    Counts countOutbox();

    /** Removes the entries that failed for good before {@code before}; how many it removed. */
    int purgeFailedOutbox(Instant before);

    /** The outbox's size: {@code pending} entries waiting for delivery, {@code failed} ones given up on. */
    record Counts(long pending, long failed) {
    }
}
