package dev.parley.chat.engine.internal;

import dev.parley.chat.engine.HostAction;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.RunRequest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Builds the request a run gives its runtime: the runtime session to continue — only if the run's question
 * follows the last message that session saw; an edit or another branch starts a new one — the tools the
 * host side answers, and the conversation so far, read from the store only if the runtime asks for it.
 */
final class RuntimeRequests {

    /**
     * @param continuesSession the run continues the thread's runtime session
     * @param leavesSession the thread has a runtime session that does not cover this run (it starts afresh)
     */
    record Prepared(RunRequest request, boolean continuesSession, boolean leavesSession) {
    }

    private RuntimeRequests() {
    }

    static Prepared prepare(EngineContext ctx, Run run, List<Message> initialMessages,
            Collection<HostToolSpec> clientTools) {
        ChatThread thread = ctx.store.findThread(run.threadId()).orElse(null);
        UserMessage question = question(ctx, run, initialMessages);
        String before = question == null ? null : question.parentMessageId();
        String session = thread == null ? null : thread.runtimeSessionId();
        boolean leaves = false;
        if (session != null && thread.sessionHeadId() != null
                && !followsSessionHead(ctx, run, thread.sessionHeadId(), question, before)) {
            session = null;
            leaves = true;
        }
        List<HostToolSpec> offered = new ArrayList<>();
        if (ctx.can(Capability.HOST_TOOLS)) {
            for (HostAction action : ctx.hostActions.values()) {
                offered.add(action.spec());
            }
            offered.addAll(clientTools);
        }
        RunRequest request = new RunRequest(run.threadId(), run.id(), run.ownerId(), run.assistantMessageId(),
                run.input(), session, run.modelId(), run.skill(), run.maxIterations(), offered, run.context(),
                new StoredHistory(ctx.store, ctx.limits, run.threadId(), before));
        return new Prepared(request, session != null, leaves);
    }

    /** The user message a run answers: its own, or for a regeneration the one answered again. */
    private static @Nullable UserMessage question(EngineContext ctx, Run run, List<Message> initialMessages) {
        String questionId = run.userMessageId() != null ? run.userMessageId()
                : initialMessages.stream().filter(m -> m.id().equals(run.assistantMessageId())).findFirst()
                        .map(Message::parentMessageId).orElse(null);
        for (Message message : initialMessages) {
            if (message instanceof UserMessage user && user.id().equals(questionId)) {
                return user;
            }
        }
        return questionId == null ? null
                : ctx.store.findMessage(questionId).filter(UserMessage.class::isInstance).map(UserMessage.class::cast)
                        .orElse(null);
    }

    /**
     * Whether the session whose last seen message is {@code head} covers the run: a new message follows the
     * head; a regeneration answers the head's own question again.
     */
    private static boolean followsSessionHead(EngineContext ctx, Run run, String head, @Nullable UserMessage question,
            @Nullable String before) {
        if (!run.isRegeneration()) {
            return head.equals(before);
        }
        return question != null && ctx.store.findMessage(head).map(Message::parentMessageId)
                .filter(question.id()::equals).isPresent();
    }
}
