package dev.parley.chat.store;

import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Feedback;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.model.RunStatus;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Where threads, messages, runs, run events, pending inputs, remembered approvals, feedback and
 * host-action executions live.
 *
 * <p>The engine checks ownership and input before it calls a store; a store trusts its arguments, but
 * keeps its own invariants (an event's {@code (runId, seq)} is stored once; an input is answered once).
 * Every method is thread-safe. Failures are {@link dev.parley.chat.ChatException}s with
 * {@code STORE_FAILURE} (or {@code CONFLICT} or {@code NOT_FOUND} where stated). Implementations must pass
 * the contract suite {@code dev.parley.chat.store.ChatStoreContract} from chat-core's test-jar.
 *
 * <h2>Deletion is final</h2>
 * Every row belongs to a thread: a run and a message to their thread; an event, a pending input, a seq
 * reservation, a lease and a host-action execution to their run; feedback and remembered approvals to their
 * thread. {@link #deleteThread} removes all of them at once, and no write brings any of them back: a write
 * of a row whose thread (or, for a run's rows, whose run) does not exist stores nothing and fails with
 * {@code NOT_FOUND} ({@link ThreadGoneException} where it names runs), or returns its documented
 * "not found" value. Only a {@link ThreadTouch} of a missing thread is silently ignored. Messages may be
 * stored before their run; a run's other rows may not.
 */
public interface ChatStore extends AutoCloseable {

    // ---- threads

    /** Inserts a new thread; {@code CONFLICT} if the id exists. */
    void createThread(ChatThread thread);

    Optional<ChatThread> findThread(String threadId);

    /**
     * At most {@code limit} of an owner's threads, newest {@link ChatThread#lastMessageAt()} first (ties:
     * greatest id first), starting right after {@code after} in that order (from the newest when null);
     * archived threads included.
     */
    List<ChatThread> listThreads(String ownerId, @Nullable ThreadCursor after, int limit);

    /**
     * Replaces the fields a person edits — title, model, skill, status — of an existing thread; the
     * runtime session id and the activity time change only through {@link ThreadTouch}es.
     *
     * @return false if the thread does not exist
     */
    boolean updateThread(ChatThread thread);

    /**
     * Deletes a thread with every row that belongs to it — its messages, runs, events, pending inputs, seq
     * reservations, leases, remembered approvals, feedback, host-action executions and search index entries —
     * atomically. Afterwards no write stores a row of it again (see "Deletion is final" above); a thread
     * created later with the same id starts empty.
     *
     * @return false if the thread did not exist (nothing changes)
     */
    boolean deleteThread(String threadId);

    // ---- the batched write

    /**
     * Stores a batch atomically: threads touched, runs and messages inserted or replaced, leases set, events
     * appended (an event whose {@code (runId, seq)} exists is left as it is, and so is every event of a run
     * whose log is {@linkplain #compactRunEvents compacted}), pending inputs inserted (an existing
     * {@code (runId, inputId)} is left as it is). Runs leaving RUNNING or WAITING_FOR_INPUT are
     * stored before runs entering them, whatever their order in the batch.
     *
     * <p>An ended run waits for no input: a batch that stores a run's terminal status also cancels that run's
     * inputs still PENDING (those inserted by the same batch too), in the same transaction.
     *
     * <p>All or nothing: when it throws, nothing of the batch is stored.
     *
     * <p>A batch holding a row of a thread that does not exist (a run or a message of it, or a row of one of
     * its runs: an event, a pending input, a seq reservation or a lease), or a row of a run that neither is
     * stored nor comes with the batch, is refused whole with {@link ThreadGoneException} naming those runs:
     * a run still writing while its thread is deleted cannot bring the thread's data back. A touch of a
     * missing thread is ignored.
     *
     * @throws ThreadGoneException (NOT_FOUND) if a row of the batch belongs to a thread or run that does not exist
     * @throws LeaseLostException if the batch is {@linkplain StoreBatch#fence() fenced} and another instance
     *     holds the lease of a run in it
     * @throws dev.parley.chat.ChatException CONFLICT if the batch would leave a thread with two runs that are
     *     RUNNING or WAITING_FOR_INPUT (at most one run per thread is active, also across host instances), or
     *     a user message whose {@link UserMessage#clientMessageId()} another user message of the thread
     *     already has; STORE_FAILURE if the store failed
     */
    void write(StoreBatch batch);

    // ---- messages

    Optional<Message> findMessage(String messageId);

    /**
     * The newest {@code limit} user and assistant messages of a thread that come before the message
     * {@code beforeMessageId} (all of them when null), returned oldest first. Messages are ordered by their
     * first save.
     */
    List<Message> listTopLevelMessages(String threadId, @Nullable String beforeMessageId, int limit);

    /**
     * The newest {@code limitPerRun} step messages (everything but user and assistant messages) of each of
     * these runs, all in first-save order: a page's answers with their latest steps, however many steps a run
     * has. Reads about {@code limitPerRun} steps per run, not the run's whole length; empty when
     * {@code limitPerRun} is below 1. Unknown runs are left out.
     */
    List<Message> listNewestStepMessages(Collection<String> runIds, int limitPerRun);

    /**
     * The oldest {@code limit} step messages of a run that come after its step {@code afterStepId} in
     * first-save order (from the run's first step when null): for reading every step of a run page by page,
     * e.g. to export it. Empty if {@code afterStepId} is not a step of this run, or {@code limit} is below 1.
     */
    List<Message> listStepMessagesAfter(String runId, @Nullable String afterStepId, int limit);

    /**
     * How many step messages each of these runs has (to say how many a page of the newest leaves out); runs
     * without steps, and unknown runs, are left out. Returns counts only, no message.
     */
    Map<String, Integer> countStepMessages(Collection<String> runIds);

    /**
     * For each parent message id, the ids of the assistant messages that answer it, in first-save order
     * (regenerated answers are siblings). Parents without answers are left out.
     */
    Map<String, List<String>> findVariantIds(Collection<String> parentMessageIds);

    // ---- branches (a conversation is a tree: an edit is a sibling of the user message it edits, a regenerated
    //      answer a sibling of the answer; a message's parent is the message it followed)

    /**
     * The user and assistant messages on the path from the conversation's start to {@code leafId}: the newest
     * {@code limit} of them that come before {@code beforeMessageId} on the path (from the leaf when null),
     * oldest first. Empty if the leaf is not a top-level message of this thread, or the cursor not on its path.
     */
    List<Message> listBranch(String threadId, String leafId, @Nullable String beforeMessageId, int limit);

    /** The messages with these ids that exist, in first-save order. */
    List<Message> findMessages(Collection<String> messageIds);

    /**
     * For each of these user messages, the user messages sharing its parent (its edits and itself; for a
     * first message, the thread's other first messages), in first-save order. Unknown ids are left out.
     */
    Map<String, List<String>> findUserSiblingIds(String threadId, Collection<String> userMessageIds);

    /**
     * The newest user or assistant message at or below {@code messageId} in the thread's tree (a leaf: any
     * child is newer than its parent), or empty if the message is not a top-level message of the thread.
     */
    Optional<String> findNewestDescendant(String threadId, String messageId);

    /** The user message of this thread the sending client gave this id (see {@link UserMessage#clientMessageId()}). */
    Optional<UserMessage> findUserMessageByClientId(String threadId, String clientMessageId);

    /**
     * The oldest {@code limit} user and assistant messages of every branch of a thread that come after the
     * message {@code afterMessageId} in first-save order (from the start when null): for reading a whole
     * thread page by page, e.g. to export it.
     */
    List<Message> listTopLevelMessagesAfter(String threadId, @Nullable String afterMessageId, int limit);

    // ---- search

    /**
     * The owner's threads whose title or one user or assistant message holds every word (as a word prefix)
     * and phrase of {@code query}, newest match first — first the threads with a matching message, the one
     * whose newest matching message was first saved last first; then the threads only whose title matches,
     * newest activity first (the thread list's order) — skipping {@code offset}, at most {@code limit}. The
     * order depends on the owner's own threads and messages alone; another owner's threads never appear. A
     * hit's snippet comes from its newest matching message, else from the title. The index follows stored
     * messages and titles at once (an updated message or title, a deleted thread).
     *
     * <p>The order lets a store answer from an index read newest first: a page should cost what its own
     * hits cost (and what the pages before it do), not what every match of a common word would.
     */
    List<ThreadSearchHit> searchThreads(String ownerId, SearchQuery query, int offset, int limit);

    // ---- runs and events

    Optional<Run> findRun(String runId);

    /** Runs in any of these states, oldest first. */
    List<Run> findRuns(Set<RunStatus> statuses);

    /** A thread's runs in any of these states, oldest first. */
    List<Run> findThreadRuns(String threadId, Set<RunStatus> statuses);

    /** Up to {@code limit} events of a run with seq above {@code afterSeq}, in seq order. */
    List<RunEvent> readEvents(String runId, long afterSeq, int limit);

    /** The highest stored seq of a run, 0 if none. */
    long lastSeq(String runId);

    /**
     * Durably records that seqs up to {@code upTo} may have been handed out for this run, so that after a
     * crash new events are numbered above every seq a client may hold. Never lowers the mark.
     *
     * @throws ThreadGoneException (NOT_FOUND) if the run is not stored (its thread was deleted); nothing is stored
     */
    void reserveSeq(String runId, long upTo);

    /** The mark {@link #reserveSeq} set, 0 if none. */
    long reservedSeq(String runId);

    /**
     * The run's resume point as the last batch that carried one left it ({@link StoreBatch#resumePoints}):
     * where its runtime stream stood as far as its stored events go. Empty if none was stored.
     */
    Optional<StoreBatch.ResumePoint> findResumePoint(String runId);

    /**
     * Keeps the context a run was started in, as headers (W3C trace headers, as the engine's
     * {@code RunContextPropagator} gives them), so that the run, followed again after a restart or by another
     * instance, is linked to it. Replaces what was kept; does nothing if the run is not stored. It goes with the
     * run. The default keeps nothing: runs followed again are then not linked.
     */
    default void saveStartContext(String runId, Map<String, String> headers) {
    }

    /** What {@link #saveStartContext} kept for the run; empty if nothing was kept. */
    default Map<String, String> findStartContext(String runId) {
        return Map.of();
    }

    // ---- retention

    /**
     * Runs that ended (any terminal status) before {@code endedBefore} and whose event log is not compacted
     * yet, oldest end first, at most {@code limit}.
     */
    List<Run> findRunsToCompact(Instant endedBefore, int limit);

    /**
     * Replaces a run's whole event log with {@code kept} (its start, a snapshot of its final messages, a
     * note saying so, its end), atomically, and marks the run compacted; the run's messages stay as they are.
     *
     * <p>A compacted log is final: a later {@link #write} leaves out the run's events. Only a write made
     * again after its answer was lost (it had taken effect before the run was compacted) brings any, and
     * they would put back, between the note and the end, events the compaction removed.
     */
    void compactRunEvents(String runId, List<RunEvent> kept, Instant at);

    // ---- pending inputs (clarify questions, approvals, client tools)

    Optional<PendingInput> findInput(String runId, String inputId);

    /** A run's inputs still PENDING, oldest first. */
    List<PendingInput> listPendingInputs(String runId);

    /**
     * Answers an input if it is pending, atomically (two hosts racing to answer the same input get one
     * ACCEPTED). The same answer again is REPLAYED; any other answer after that, or an answer to an input
     * that expired or was cancelled, is a CONFLICT; an unknown input (its thread deleted, say) is NOT_FOUND.
     * The store does not check the answer's shape.
     */
    AnswerOutcome answerInput(String runId, String inputId, InputAnswer answer, Instant at);

    /**
     * Undoes an accepted answer that could not be delivered: the input is PENDING again — or CANCELLED if its
     * run has ended (or is gone): an ended run waits for no input.
     */
    void reopenInput(String runId, String inputId);

    /**
     * Resolves a pending input without an answer ({@link InputState#EXPIRED} or
     * {@link InputState#CANCELLED}), atomically.
     *
     * @return false if the input was not pending (answered or resolved before, or unknown)
     */
    boolean closeInput(String runId, String inputId, InputState state, Instant at);

    /** Marks every pending input of a run CANCELLED (the run ended without them being answered). */
    void cancelPendingInputs(String runId, Instant at);

    // ---- approvals remembered per thread ("allow for this conversation")

    /**
     * Remembers that calls of {@code toolName} in this thread need no more approval. Idempotent.
     *
     * @throws dev.parley.chat.ChatException NOT_FOUND if the thread does not exist; nothing is remembered
     */
    void rememberApproval(String threadId, String toolName, Instant at);

    /** True if {@link #rememberApproval} was called for this thread and tool. */
    boolean isApprovedForThread(String threadId, String toolName);

    // ---- feedback

    /**
     * Inserts or replaces the owner's feedback on a message.
     *
     * @throws dev.parley.chat.ChatException NOT_FOUND if the feedback's thread does not exist; nothing is stored
     */
    void saveFeedback(Feedback feedback);

    Optional<Feedback> findFeedback(String messageId, String ownerId);

    /** The feedback given on these messages, by any owner. */
    List<Feedback> listFeedback(Collection<String> messageIds);

    // ---- host actions

    /**
     * Returns the execution {@code (runId, executionId)}, creating it if absent ({@code claimedNow} tells
     * which). Atomic: of concurrent callers exactly one sees {@code claimedNow}.
     *
     * @throws ThreadGoneException (NOT_FOUND) if the run is not stored (its thread was deleted); nothing is stored
     */
    HostActionRecord claimHostAction(String runId, String executionId, String name, String arguments, Instant at);

    /**
     * Records a claimed execution's result; an execution completed before keeps its first result.
     *
     * @throws ThreadGoneException (NOT_FOUND) if the execution is not stored (its run or thread was deleted)
     */
    void completeHostAction(String runId, String executionId, String result, boolean error, Instant at);

    // ---- leases (several host instances on one store)

    /**
     * Renews the leases of runs this instance holds: sets {@code until} where the run's lease is this
     * instance's or there is none. A run another instance took over is left alone.
     *
     * @return the ids whose lease this instance now holds
     */
    Set<String> leaseRuns(String instanceId, Collection<String> runIds, Instant until);

    /**
     * Gives an active run (QUEUED, RUNNING or WAITING_FOR_INPUT) to {@code instanceId} if its lease expired
     * before {@code now} or it has none, atomically: of instances racing for the same run exactly one gets
     * it. A finished or unknown run is never taken over.
     */
    boolean takeOverRun(String runId, String instanceId, Instant now, Instant until);

    /** Runs that are QUEUED, RUNNING or WAITING_FOR_INPUT and whose lease expired before {@code now} or is missing. */
    List<Run> findRunsWithExpiredLease(Instant now);

    Optional<RunLease> findLease(String runId);

    /** Releases resources (connections, flush threads). The default does nothing. */
    @Override
    default void close() {
    }
}
