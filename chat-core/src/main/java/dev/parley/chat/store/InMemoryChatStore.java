package dev.parley.chat.store;

import dev.parley.chat.ChatException;
import dev.parley.chat.attachment.Attachment;
import dev.parley.chat.attachment.AttachmentStore;
import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Feedback;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.outbox.OutboxEntry;
import dev.parley.chat.outbox.OutboxStore;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A {@link ChatStore} in the heap: fast, and gone when the process ends. For tests, demos and hosts
 * that do not need history across restarts. Thread-safe (one lock); reads return copies.
 *
 * <p>Each aggregate lives in its own part — {@link InMemoryThreads}, {@link InMemoryMessages},
 * {@link InMemoryRuns}, {@link InMemoryInputs}, {@link InMemoryFeedback}, {@link InMemoryHostActions},
 * {@link InMemoryOutbox} —
 * and {@link InMemoryBatchWrite} composes them into one batch. This class owns the one lock (every call
 * into a part is made holding it) and composes deleting a thread across the parts.
 */
public final class InMemoryChatStore implements ChatStore, AttachmentStore, OutboxStore {

    private final Object lock = new Object();
    private final InMemoryThreads threads = new InMemoryThreads();
    private final InMemoryMessages messages = new InMemoryMessages();
    private final InMemoryRuns runs = new InMemoryRuns();
    private final InMemoryInputs inputs = new InMemoryInputs();
    private final InMemoryFeedback feedback = new InMemoryFeedback();
    private final InMemoryHostActions hostActions = new InMemoryHostActions();
    private final InMemoryAttachments attachments = new InMemoryAttachments();
    private final InMemoryOutbox outbox = new InMemoryOutbox();
    private final InMemoryBatchWrite batchWrite = new InMemoryBatchWrite(threads, messages, runs, inputs, outbox);

    // ---- threads

    @Override
    public void createThread(ChatThread thread) {
        synchronized (lock) {
            threads.create(thread);
        }
    }

    @Override
    public Optional<ChatThread> findThread(String threadId) {
        synchronized (lock) {
            return threads.find(threadId);
        }
    }

    @Override
    public List<ChatThread> listThreads(String ownerId, @Nullable ThreadCursor after, int limit) {
        synchronized (lock) {
            return threads.list(ownerId, after, limit);
        }
    }

    @Override
    public boolean updateThread(ChatThread thread) {
        synchronized (lock) {
            return threads.update(thread);
        }
    }

    @Override
    public boolean deleteThread(String threadId) {
        synchronized (lock) {
            if (!threads.delete(threadId)) {
                return false;
            }
            List<String> runIds = runs.deleteOfThread(threadId);
            inputs.deleteOfThread(threadId, runIds);
            hostActions.deleteOfRuns(runIds);
            messages.deleteOfThread(threadId);
            feedback.deleteOfThread(threadId);
            attachments.deleteOfThread(threadId);
            outbox.deleteOfThread(threadId);
            return true;
        }
    }

    // ---- the batched write

    @Override
    public void write(StoreBatch batch) {
        synchronized (lock) {
            batchWrite.write(batch);
        }
    }

    // ---- messages and branches

    @Override
    public Optional<Message> findMessage(String messageId) {
        synchronized (lock) {
            return messages.find(messageId);
        }
    }

    @Override
    public List<Message> listTopLevelMessages(String threadId, @Nullable String beforeMessageId, int limit) {
        synchronized (lock) {
            return messages.listTopLevel(threadId, beforeMessageId, limit);
        }
    }

    @Override
    public List<Message> listNewestStepMessages(Collection<String> runIds, int limitPerRun) {
        synchronized (lock) {
            return messages.listNewestSteps(runIds, limitPerRun);
        }
    }

    @Override
    public List<Message> listStepMessagesAfter(String runId, @Nullable String afterStepId, int limit) {
        synchronized (lock) {
            return messages.listStepsAfter(runId, afterStepId, limit);
        }
    }

    @Override
    public Map<String, Integer> countStepMessages(Collection<String> runIds) {
        synchronized (lock) {
            return messages.countSteps(runIds);
        }
    }

    @Override
    public Map<String, List<String>> findVariantIds(Collection<String> parentMessageIds) {
        synchronized (lock) {
            return messages.findVariantIds(parentMessageIds);
        }
    }

    @Override
    public List<Message> listBranch(String threadId, String leafId, @Nullable String beforeMessageId, int limit) {
        synchronized (lock) {
            return messages.listBranch(threadId, leafId, beforeMessageId, limit);
        }
    }

    @Override
    public List<Message> findMessages(Collection<String> messageIds) {
        synchronized (lock) {
            return messages.findAll(messageIds);
        }
    }

    @Override
    public Map<String, List<String>> findUserSiblingIds(String threadId, Collection<String> userMessageIds) {
        synchronized (lock) {
            return messages.findUserSiblingIds(threadId, userMessageIds);
        }
    }

    @Override
    public Optional<String> findNewestDescendant(String threadId, String messageId) {
        synchronized (lock) {
            return messages.findNewestDescendant(threadId, messageId);
        }
    }

    @Override
    public Optional<UserMessage> findUserMessageByClientId(String threadId, String clientMessageId) {
        synchronized (lock) {
            return messages.findUserByClientId(threadId, clientMessageId);
        }
    }

    @Override
    public List<Message> listTopLevelMessagesAfter(String threadId, @Nullable String afterMessageId, int limit) {
        synchronized (lock) {
            return messages.listTopLevelAfter(threadId, afterMessageId, limit);
        }
    }

    // ---- search

    @Override
    public List<ThreadSearchHit> searchThreads(String ownerId, SearchQuery query, int offset, int limit) {
        synchronized (lock) {
            return threads.search(ownerId, query, offset, limit, messages);
        }
    }

    // ---- runs and events

    @Override
    public Optional<Run> findRun(String runId) {
        synchronized (lock) {
            return Optional.ofNullable(runs.find(runId));
        }
    }

    @Override
    public List<Run> findRuns(Set<RunStatus> statuses) {
        synchronized (lock) {
            return runs.findByStatus(statuses);
        }
    }

    @Override
    public List<Run> findThreadRuns(String threadId, Set<RunStatus> statuses) {
        synchronized (lock) {
            return runs.findOfThread(threadId, statuses);
        }
    }

    @Override
    public List<RunEvent> readEvents(String runId, long afterSeq, int limit) {
        synchronized (lock) {
            return runs.readEvents(runId, afterSeq, limit);
        }
    }

    @Override
    public long lastSeq(String runId) {
        synchronized (lock) {
            return runs.lastSeq(runId);
        }
    }

    @Override
    public void reserveSeq(String runId, long upTo) {
        synchronized (lock) {
            requireRun(runId);
            runs.reserveSeq(runId, upTo);
        }
    }

    @Override
    public long reservedSeq(String runId) {
        synchronized (lock) {
            return runs.reservedSeq(runId);
        }
    }

    @Override
    public Optional<StoreBatch.ResumePoint> findResumePoint(String runId) {
        synchronized (lock) {
            return Optional.ofNullable(runs.resumePoint(runId));
        }
    }

    @Override
    public void saveStartContext(String runId, Map<String, String> headers) {
        synchronized (lock) {
            runs.saveStartContext(runId, headers);
        }
    }

    @Override
    public Map<String, String> findStartContext(String runId) {
        synchronized (lock) {
            return runs.startContext(runId);
        }
    }

    // ---- retention

    @Override
    public List<Run> findRunsToCompact(Instant endedBefore, int limit) {
        synchronized (lock) {
            return runs.findToCompact(endedBefore, limit);
        }
    }

    @Override
    public void compactRunEvents(String runId, List<RunEvent> kept, Instant at) {
        synchronized (lock) {
            runs.compactEvents(runId, kept);
        }
    }

    // ---- leases

    @Override
    public Set<String> leaseRuns(String instanceId, Collection<String> runIds, Instant until) {
        synchronized (lock) {
            return runs.lease(instanceId, runIds, until);
        }
    }

    @Override
    public boolean takeOverRun(String runId, String instanceId, Instant now, Instant until) {
        synchronized (lock) {
            return runs.takeOver(runId, instanceId, now, until);
        }
    }

    @Override
    public List<Run> findRunsWithExpiredLease(Instant now) {
        synchronized (lock) {
            return runs.findWithExpiredLease(now);
        }
    }

    @Override
    public Optional<RunLease> findLease(String runId) {
        synchronized (lock) {
            return Optional.ofNullable(runs.findLease(runId));
        }
    }

    // ---- pending inputs and approvals

    @Override
    public Optional<PendingInput> findInput(String runId, String inputId) {
        synchronized (lock) {
            return inputs.find(runId, inputId);
        }
    }

    @Override
    public List<PendingInput> listPendingInputs(String runId) {
        synchronized (lock) {
            return inputs.listPending(runId);
        }
    }

    @Override
    public AnswerOutcome answerInput(String runId, String inputId, InputAnswer answer, Instant at) {
        synchronized (lock) {
            return inputs.answer(runId, inputId, answer, at);
        }
    }

    @Override
    public void reopenInput(String runId, String inputId) {
        synchronized (lock) {
            Run run = runs.find(runId);
            boolean ended = run == null || run.status().isTerminal();
            inputs.reopen(runId, inputId, ended);
        }
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException if {@code state} is neither EXPIRED nor CANCELLED
     */
    @Override
    public boolean closeInput(String runId, String inputId, InputState state, Instant at) {
        if (state != InputState.EXPIRED && state != InputState.CANCELLED) {
            throw new IllegalArgumentException("an input is closed EXPIRED or CANCELLED, not " + state);
        }
        synchronized (lock) {
            return inputs.close(runId, inputId, state, at);
        }
    }

    @Override
    public void cancelPendingInputs(String runId, Instant at) {
        synchronized (lock) {
            inputs.cancelPending(runId, at);
        }
    }

    @Override
    public void rememberApproval(String threadId, String toolName, Instant at) {
        synchronized (lock) {
            requireThread(threadId);
            inputs.rememberApproval(threadId, toolName);
        }
    }

    @Override
    public boolean isApprovedForThread(String threadId, String toolName) {
        synchronized (lock) {
            return inputs.isApprovedForThread(threadId, toolName);
        }
    }

    // ---- feedback

    @Override
    public void saveFeedback(Feedback rating) {
        synchronized (lock) {
            requireThread(rating.threadId());
            feedback.save(rating);
        }
    }

    @Override
    public Optional<Feedback> findFeedback(String messageId, String ownerId) {
        synchronized (lock) {
            return feedback.find(messageId, ownerId);
        }
    }

    @Override
    public List<Feedback> listFeedback(Collection<String> messageIds) {
        synchronized (lock) {
            return feedback.list(messageIds);
        }
    }

    // ---- host actions

    @Override
    public HostActionRecord claimHostAction(String runId, String executionId, String name, String arguments,
            Instant at) {
        synchronized (lock) {
            requireRun(runId);
            return hostActions.claim(runId, executionId, name, arguments, at);
        }
    }

    @Override
    public void completeHostAction(String runId, String executionId, String result, boolean error, Instant at) {
        synchronized (lock) {
            if (!hostActions.complete(runId, executionId, result, error, at)) {
                throw new ThreadGoneException(Set.of(runId));
            }
        }
    }

    // ---- attachments

    @Override
    public Attachment saveAttachment(Attachment attachment) {
        synchronized (lock) {
            requireThread(attachment.threadId());
            return attachments.save(attachment);
        }
    }

    @Override
    public Optional<Attachment> findAttachment(String attachmentId) {
        synchronized (lock) {
            return attachments.find(attachmentId);
        }
    }

    @Override
    public List<Attachment> findAttachments(Collection<String> attachmentIds) {
        synchronized (lock) {
            return attachments.find(attachmentIds);
        }
    }

    @Override
    public long storedAttachmentBytes(String ownerId) {
        synchronized (lock) {
            return attachments.bytesOf(ownerId);
        }
    }

    @Override
    public List<String> unreferencedBlobs(int limit) {
        synchronized (lock) {
            return attachments.unreferenced(limit);
        }
    }

    @Override
    public void forgetBlobs(Collection<String> blobKeys) {
        synchronized (lock) {
            attachments.forget(blobKeys);
        }
    }

    // ---- the outbox

    @Override
    public List<OutboxEntry> claimOutbox(String instanceId, Instant now, Instant leaseUntil, int limit) {
        synchronized (lock) {
            return outbox.claim(instanceId, now, leaseUntil, limit);
        }
    }

    @Override
    public boolean completeOutbox(String messageId, String destination, String instanceId) {
        synchronized (lock) {
            return outbox.complete(messageId, destination, instanceId);
        }
    }

    @Override
    public boolean retryOutbox(String messageId, String destination, String instanceId, int attempts,
            Instant nextAttemptAt) {
        synchronized (lock) {
            return outbox.retry(messageId, destination, instanceId, attempts, nextAttemptAt);
        }
    }

    @Override
    public boolean failOutbox(String messageId, String destination, String instanceId, int attempts, Instant at) {
        synchronized (lock) {
            return outbox.fail(messageId, destination, instanceId, attempts, at);
        }
    }

    @Override
    public OutboxStore.Counts countOutbox() {
        synchronized (lock) {
            return outbox.counts();
        }
    }

    @Override
    public int purgeFailedOutbox(Instant before) {
        synchronized (lock) {
            return outbox.purgeFailed(before);
        }
    }

    /** A write of a run's row: the run must be stored (its thread may have been deleted). */
    private void requireRun(String runId) {
        if (!runs.exists(runId)) {
            throw new ThreadGoneException(Set.of(runId));
        }
    }

    /** A write of a thread's row: the thread must exist. */
    private void requireThread(String threadId) {
        if (!threads.exists(threadId)) {
            throw ChatException.notFound("thread", threadId);
        }
    }
}
