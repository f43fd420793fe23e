package dev.parley.chat.engine.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.store.BranchMovedException;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadTouch;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Moves the end of a thread's active branch (its active leaf): to another branch ({@link #switchTo}), back to an
 * earlier answer ({@link #rollBackTo}), or to before the last exchange ({@link #undo}); and checks that an answer
 * ends it, to be continued ({@link #requireContinuable}). Nothing is deleted: every
 * message stays reachable by switching to its branch. A move is refused while the thread has a run, and written
 * only if the leaf is still the one read (a message sent meanwhile wins). Thread-safe.
 */
public final class Branches {
    private static final Set<RunStatus> LIVE = Set.of(RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.WAITING_FOR_INPUT);

    private final ChatStore store;
    private final RunManager runs;
    private final ThreadViews views;

    public Branches(ChatStore store, RunManager runs, ThreadViews views) {
        this.store = store;
        this.runs = runs;
        this.views = views;
    }

    /** The branch through {@code message}, down to its newest message, becomes the active one. */
    public void switchTo(ChatThread thread, Message message) {
        if (!message.kind().isTopLevel()) {
            throw ChatException.invalidInput("a branch is chosen by a user or assistant message");
        }
        requireIdle(thread, "switch branches");
        String leaf = store.findNewestDescendant(thread.id(), message.id())
                .orElseThrow(() -> ChatException.notFound("message", message.id()));
        move(thread, leaf, "switch branches");
    }

    /** The answer {@code message} ends the active branch; what followed it stays on its own branch. */
    public void rollBackTo(ChatThread thread, Message message) {
        if (!(message instanceof AssistantMessage)) {
            throw ChatException.invalidInput("a conversation is rolled back to one of the assistant's answers");
        }
        requireIdle(thread, "roll back");
        move(thread, message.id(), "roll back");
    }

    /**
     * The active branch's last exchange (its last user message and everything after it) is taken back: the
     * answer before that message ends the branch.
     *
     * @return the answer that ends the branch now
     */
    public String undo(ChatThread thread) {
        requireIdle(thread, "undo");
        UserMessage last = lastUserMessage(thread)
                .orElseThrow(() -> ChatException.conflict("the conversation has no message to take back"));
        String before = last.parentMessageId();
        if (before == null) {
            throw ChatException.conflict("the first message has nothing before it to go back to; edit it instead,"
                    + " or start a new conversation");
        }
        move(thread, before, "undo");
        return before;
    }

    /**
     * Checks that {@code message} is the answer ending the active branch and the thread is idle, so that a new
     * run can go on from it.
     */
    public void requireContinuable(ChatThread thread, Message message) {
        if (!(message instanceof AssistantMessage)) {
            throw ChatException.invalidInput("only an answer of the assistant can be continued");
        }
        requireIdle(thread, "continue");
        if (!message.id().equals(views.activeLeaf(thread))) {
            throw ChatException.conflict("only the last answer of the conversation can be continued; roll back to"
                    + " this one first");
        }
    }

    private Optional<UserMessage> lastUserMessage(ChatThread thread) {
        String id = views.activeLeaf(thread);
        Set<String> seen = new HashSet<>();
        while (id != null && seen.add(id)) {
            Optional<Message> found = store.findMessage(id);
            if (found.isEmpty()) {
                return Optional.empty();
            }
            if (found.get() instanceof UserMessage user) {
                return Optional.of(user);
            }
            id = found.get().parentMessageId();
        }
        return Optional.empty();
    }

    private void requireIdle(ChatThread thread, String what) {
        if (runs.isThreadBusy(thread.id()) || !store.findThreadRuns(thread.id(), LIVE).isEmpty()) {
            throw ChatException.conflict("the thread has an active run; " + what + " once it has ended");
        }
    }

    private void move(ChatThread thread, String leaf, String what) {
        @Nullable String leafBefore = thread.activeLeafId();
        try {
            store.write(StoreBatch.builder().touch(new ThreadTouch(thread.id(), null, null, null, leaf, null))
                    .expectActiveLeaf(thread.id(), leafBefore).build());
        } catch (BranchMovedException e) {
            throw ChatException.conflict("the thread's active branch moved (a message was sent meanwhile); "
                    + what + " once its run has ended");
        }
    }
}
