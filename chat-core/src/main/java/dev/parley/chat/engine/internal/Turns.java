package dev.parley.chat.engine.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.engine.DoubleTexting;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.store.ThreadTouch;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Starts the turns of a conversation: a new message after the active branch's last message, an edit (a new
 * user message beside the one it edits), a regenerated answer (beside the earlier ones). Each moves the
 * thread's active branch to its answer. A message sent with a client id is sent once: a retry with the same
 * id and message returns the first run's ticket, also when the retry races the first send. Thread-safe.
 */
public final class Turns {
    private final EngineContext ctx;
    private final RunManager runs;
    private final ThreadViews views;
    private final DoubleTexting doubleTexting;

    public Turns(EngineContext ctx, RunManager runs, ThreadViews views, DoubleTexting doubleTexting) {
        this.ctx = ctx;
        this.runs = runs;
        this.views = views;
        this.doubleTexting = doubleTexting;
    }

    /**
     * Sends {@code request} (already checked) as a new user message after the active branch's last message,
     * as it is when the run starts: two messages sent at once to one thread follow one another, neither
     * drops off the branch.
     *
     * @throws ChatException CONFLICT for a client id already used for another message, or as
     *     {@link RunManager#start} says
     */
    public RunTicket send(ChatThread thread, StartRun request) {
        return send(thread, request, views::activeLeaf);
    }

    /**
     * Sends {@code request} (already checked) as an edit: a user message answering {@code parent}, the
     * edited message's parent (null: the thread's start).
     *
     * @throws ChatException as {@link #send(ChatThread, StartRun)}
     */
    public RunTicket sendEdit(ChatThread thread, StartRun request, @Nullable String parent) {
        return send(thread, request, current -> parent);
    }

    /** @param parentOf the new message's parent, given the thread as it is when the run starts */
    private RunTicket send(ChatThread thread, StartRun request, Function<ChatThread, @Nullable String> parentOf) {
        String clientId = request.clientMessageId();
        if (clientId != null) {
            Optional<RunTicket> earlier = replay(thread, request);
            if (earlier.isPresent()) {
                return earlier.get();
            }
        }
        Instant now = ctx.now();
        String runId = newId();
        String userMessageId = newId();
        String assistantMessageId = newId();
        String text = request.message();
        List<MessageAttachment> files = ctx.attachments.forMessage(thread.ownerId(), thread.id(),
                request.attachmentIds());
        AssistantMessage answer = new AssistantMessage(assistantMessageId, thread.id(), runId, userMessageId,
                MessageStatus.IN_PROGRESS, now, "", null, null);
        Run run = new Run(runId, thread.id(), thread.ownerId(), RunStatus.RUNNING, userMessageId, assistantMessageId, text,
                request.modelId() != null ? request.modelId() : thread.modelId(),
                request.skill() != null ? request.skill() : thread.skill(), request.maxIterations(), request.context(),
                now, null, null, null, null, null);
        ThreadTouch touch = new ThreadTouch(thread.id(), null, now, RequestChecks.defaultTitle(ctx.limits, text),
                assistantMessageId, null);
        try {
            return runs.start(run, current -> List.of(new UserMessage(userMessageId, thread.id(), runId,
                    parentOf.apply(current), MessageStatus.COMPLETED, now, text, clientId, files), answer), touch,
                    doubleTexting, request.clientTools());
        } catch (ChatException e) {
            if (e.code() == ErrorCode.CONFLICT && clientId != null) {
                return replay(thread, request).orElseThrow(() -> e);
            }
            throw e;
        }
    }

    /** Answers {@code question} again, beside its earlier answers; the run uses the thread's model and skill. */
    public RunTicket regenerate(ChatThread thread, UserMessage question, @Nullable Run original,
            List<HostToolSpec> clientTools) {
        Instant now = ctx.now();
        String runId = newId();
        String answerId = newId();
        AssistantMessage answer = new AssistantMessage(answerId, thread.id(), runId, question.id(),
                MessageStatus.IN_PROGRESS, now, "", null, null);
        Run run = new Run(runId, thread.id(), thread.ownerId(), RunStatus.RUNNING, null, answerId, question.text(),
                thread.modelId(), thread.skill(), original == null ? null : original.maxIterations(),
                original == null ? Map.of() : original.context(), now, null, null, null, null, null);
        return runs.start(run, current -> List.of(answer), new ThreadTouch(thread.id(), null, now, null, answerId, null),
                doubleTexting, clientTools);
    }

    /**
     * The ticket of the run an earlier send with this client id started, if the request is the same; empty if
     * the id is new.
     *
     * @throws ChatException CONFLICT if the id was used for another message
     */
    private Optional<RunTicket> replay(ChatThread thread, StartRun request) {
        Optional<UserMessage> sent = ctx.store.findUserMessageByClientId(thread.id(), request.clientMessageId());
        if (sent.isEmpty()) {
            return Optional.empty();
        }
        Run run = runs.findRun(sent.get().runId())
                .orElseThrow(() -> ChatException.conflict("the client message id was used by a message whose run is gone"));
        boolean same = run.input().equals(request.message())
                && (request.modelId() == null || request.modelId().equals(run.modelId()))
                && (request.skill() == null || request.skill().equals(run.skill()))
                && Objects.equals(request.maxIterations(), run.maxIterations())
                && request.context().equals(run.context())
                && request.attachmentIds().equals(sent.get().attachments().stream().map(MessageAttachment::id).toList());
        if (!same) {
            throw ChatException.conflict("the client message id " + request.clientMessageId()
                    + " was used for another message");
        }
        return Optional.of(new RunTicket(run.id(), thread.id(), sent.get().id(), run.assistantMessageId(), run.status(),
                true));
    }

    private static String newId() {
        return UUID.randomUUID().toString();
    }
}
