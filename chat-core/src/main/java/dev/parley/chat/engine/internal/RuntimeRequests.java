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
 * follows the last message that session saw; an edit, another branch or a regeneration (the session holds
 * the answer it replaces) starts a new one — the tools the host side answers, and the conversation so far
 * (exactly the active branch before the question), read from the store only if the runtime asks for it.
 */
final class RuntimeRequests {

    /** @param continuesSession the run continues the thread's runtime session */
    record Prepared(RunRequest request, boolean continuesSession) {
    }

    private RuntimeRequests() {
    }

    static Prepared prepare(EngineContext ctx, Run run, List<Message> initialMessages,
            Collection<HostAction> hostActions, Collection<HostToolSpec> clientTools) {
        ChatThread thread = ctx.store.findThread(run.threadId()).orElse(null);
        UserMessage question = question(ctx, run, initialMessages);
        String before = question == null ? null : question.parentMessageId();
        String session = thread == null ? null : thread.runtimeSessionId();
        if (session != null && (run.isRegeneration() || thread.sessionHeadId() != null
                && !thread.sessionHeadId().equals(before))) {
            session = null;
        }
        List<HostToolSpec> offered = new ArrayList<>();
        if (ctx.can(Capability.HOST_TOOLS)) {
            for (HostAction action : hostActions) {
                offered.add(action.spec());
            }
            offered.addAll(clientTools);
        }
        RunRequest request = new RunRequest(run.threadId(), run.id(), run.ownerId(), run.assistantMessageId(),
                run.input(), session, run.modelId(), run.skill(), run.maxIterations(), offered, run.context(),
                new StoredHistory(ctx.store, ctx.limits, run.threadId(), before),
                thread == null ? run.threadId() : RunRequest.conversationKey(thread.id(), thread.createdAt()),
                question == null ? List.of() : question.attachments(), ctx.attachments.contentFor(run.ownerId()));
        return new Prepared(request, session != null);
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

}
