package dev.parley.chat.runtime;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.Feedback;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Flow;
import org.jspecify.annotations.Nullable;

/**
 * Drives one agent runtime. The transport is the adapter's business — SSE, WebSocket, chunked HTTP, an
 * in-process library: whatever it is, it comes out as a {@link Flow.Publisher} of
 * {@link AgentStreamEvent}s, so that nothing above the adapter knows the runtime's protocol.
 *
 * <h2>Stream contract</h2>
 * <ul>
 *   <li>The publisher is cold and single-use: the work starts when the engine subscribes.</li>
 *   <li>The stream ends with one terminal event ({@link AgentStreamEvent.RunFinished} or
 *       {@link AgentStreamEvent.RunFailed}) followed by {@code onComplete}. {@code onError} and a
 *       completion without a terminal event both end the run as FAILED.</li>
 *   <li>Cancelling the subscription cancels the work upstream (e.g. closes the HTTP call). The engine
 *       only does that when the run is stopped and the adapter lacks {@link Capability#CANCEL}, or when
 *       the run is already over; a person closing their browser never cancels a run.</li>
 *   <li>Text, thinking and tool-argument tokens are sent as deltas.</li>
 * </ul>
 *
 * <h2>Threading</h2>
 * Implementations must be thread-safe: the engine calls them from many threads for many runs at once.
 * {@link StreamPublisher} implements the publisher side correctly.
 *
 * <h2>Errors</h2>
 * Methods throw {@link ChatException}: {@code UNSUPPORTED} for a capability the adapter lacks,
 * {@code RUNTIME_UNAVAILABLE} when the runtime cannot be reached, {@code NOT_FOUND} or {@code CONFLICT} as
 * the runtime reports them. Messages never contain secrets.
 */
public interface RuntimeAdapter {

    /** Starts a run; see the stream contract above. Never null. */
    Flow.Publisher<AgentStreamEvent> generateResponse(RunRequest request);

    /**
     * Starts a run that answers the same user message again (regenerate). The request continues no session
     * ({@link RunRequest#runtimeSessionId()} is null: the thread's session already holds the answer being
     * replaced); its {@link RunRequest#history()} is the conversation before the question. The default does
     * what {@link #generateResponse(RunRequest)} does.
     */
    default Flow.Publisher<AgentStreamEvent> retry(RunRequest request) {
        return generateResponse(request);
    }

    /** The optional calls this adapter supports. The default is none. */
    default Set<Capability> capabilities() {
        return Set.of();
    }

    /**
     * The attachments this runtime passes to its model, by media type; the engine refuses others before
     * storing anything. The default takes none.
     */
    default AttachmentSupport attachmentSupport() {
        return AttachmentSupport.NONE;
    }

    /** Hands a person's rating to the runtime (e.g. for evaluation). The default ignores it. */
    default void sendFeedback(Feedback feedback) {
    }

    /**
     * Delivers a clarify answer to the waiting run ({@link Capability#CLARIFY}). The engine calls it at
     * most once per clarify.
     */
    default void answerClarify(ClarifyReply reply) {
        throw ChatException.unsupported("this runtime cannot take clarify answers");
    }

    /**
     * Delivers a person's decision on an approval the runtime asked for ({@link Capability#APPROVALS}).
     * The engine calls it at most once per approval; a denial is a decision like any other.
     */
    default void answerApproval(ApprovalReply reply) {
        throw ChatException.unsupported("this runtime cannot take approval decisions");
    }

    /**
     * Tells the runtime that an input it asked for (a clarify, an approval) expired: its deadline passed
     * unanswered. The run goes on or ends as the runtime decides. The default throws UNSUPPORTED, and the
     * engine then ends the run CANCELLED (it cannot go on without the answer).
     */
    default void inputExpired(String runId, String inputId) {
        throw ChatException.unsupported("this runtime cannot be told that an input expired");
    }

    /**
     * Asks the runtime to stop a run ({@link Capability#CANCEL}). The stream then ends with
     * {@code RunFinished(CANCELLED)}; partial output stays.
     */
    default void cancel(String runId) {
        throw ChatException.unsupported("this runtime cannot cancel runs");
    }

    /**
     * Hands the result of a host action, or of a tool the person's browser ran, back to the run that
     * called it ({@link Capability#HOST_TOOLS}).
     */
    default void submitToolResult(ToolResult result) {
        throw ChatException.unsupported("this runtime cannot call host actions");
    }

    /**
     * Re-attaches to a run that is still alive in the runtime, after the host restarted
     * ({@link Capability#REATTACH}): a run that streams, or one that waits for an answer. The stream continues
     * after the position {@code resumeToken} names — a token the run's stream reported through
     * {@link ResumableSubscriber#onResumePoint}, or the one an {@link AgentStreamEvent.InputRequested}
     * carried — with the items that followed it on the first stream, in the same order and form, then with
     * whatever the run does next, to its end. A run the runtime no longer knows ends its stream with
     * {@code RunFinished(INTERRUPTED)}: the host stopped following it, and nobody can any more.
     */
    default Flow.Publisher<AgentStreamEvent> reattach(RunRequest request, String resumeToken) {
        throw ChatException.unsupported("this runtime cannot re-attach to runs");
    }

    /**
     * Continues, from what is stored, a run a previous host process was following when it stopped
     * ({@link Capability#RESUME}); the engine does so only for a run that was waiting for the results of
     * host actions whose approval the person had not given yet. The stream carries on from {@code progress}:
     * it emits nothing of it again and makes none of its calls again; it waits for the result of each of
     * {@link RunProgress#openCalls()} ({@link #submitToolResult}), then goes on to the run's end. Results
     * may arrive as soon as the stream is subscribed to.
     */
    default Flow.Publisher<AgentStreamEvent> resume(RunRequest request, RunProgress progress) {
        throw ChatException.unsupported("this runtime cannot continue runs from the store");
    }

    /**
     * Stops a run that a previous host process left going in the runtime and that the engine cannot follow
     * any more ({@link Capability#CANCEL}): the runtime cannot re-attach to it, or nothing says where to
     * re-attach. The engine then ends the run INTERRUPTED, and the runtime must not finish the turn on its
     * own: the next turn would then build on an answer nobody was shown. The run may already have ended in
     * the runtime, or be unknown there; neither is an error. The default calls {@link #cancel(String)}
     * (and treats NOT_FOUND as done).
     *
     * <p>Also called by a closing engine for its own runs that nobody will follow. Called on an engine worker
     * thread, possibly for several runs at once; it may block, but the engine waits for it at most the cancel
     * grace period ({@code EngineLimits#cancelGracePeriod}) before it ends the run regardless. Whatever it
     * throws is logged; the run ends INTERRUPTED either way.
     *
     * @param resumeToken the last position the run's stream reported ({@link ResumableSubscriber}), which
     *     may name the run on the runtime's side; null if none was stored
     * @throws ChatException RUNTIME_UNAVAILABLE when the runtime cannot be reached
     */
    default void stopOrphan(String runId, @Nullable String resumeToken) {
        try {
            cancel(runId);
        } catch (ChatException e) {
            if (e.code() != ErrorCode.NOT_FOUND) {
                throw e;
            }
        }
    }

    /**
     * The conversation with this {@link RunRequest#conversationKey()} was deleted (its thread deleted, or its
     * owner erased): forget whatever the runtime keeps for it — files, "for this conversation" approvals,
     * sessions. Called once the store has deleted the thread, after its runs ended; what it throws is logged
     * and ignored (the thread is gone either way). The default does nothing.
     */
    default void threadDeleted(String conversationKey) {
    }

    /** Checks that the runtime is reachable. Must not throw; the default reports healthy. */
    default RuntimeHealth health() {
        return RuntimeHealth.up("no health check");
    }

    /** The models a person may choose from. The default is none (the runtime's default model). */
    default List<ModelOption> models() {
        return List.of();
    }

    /** The skills a person may choose from. The default is none. */
    default List<SkillOption> skills() {
        return List.of();
    }

    /**
     * Whether {@link #models()} is every model this runtime takes, even when it is empty: the engine then
     * refuses any other model id with INVALID_INPUT before it stores anything. The default is true when the
     * list is not empty; a runtime that lists no models takes any id and fails the run itself if it does
     * not know it.
     */
    default boolean offersOnlyListedModels() {
        return !models().isEmpty();
    }

    /**
     * Whether {@link #skills()} is every skill this runtime takes, even when it is empty (a runtime with no
     * skills configured then refuses every skill before anything is stored). The default is true when the
     * list is not empty, as for {@link #offersOnlyListedModels()}.
     */
    default boolean offersOnlyListedSkills() {
        return !skills().isEmpty();
    }
}
