package dev.parley.chat.engine.internal;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ClarifyMessage;
import dev.parley.chat.model.ErrorMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.StatusMessage;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.TodoItem;
import dev.parley.chat.model.TodoMessage;
import dev.parley.chat.model.UserMessage;
import java.util.List;

/**
 * What an event or a message costs a store write, estimated without serialising it: the characters of its
 * text fields plus a fixed allowance for its ids, envelope and row. Cheap (no allocation); used by the
 * batch writer to cap its transactions ({@link dev.parley.chat.engine.EngineLimits#maxBatchBytes()}).
 */
final class StoredSize {
    /** Ids, type, seq, timestamps and JSON punctuation of one event or message row. */
    static final int ROW_OVERHEAD = 160;
    /** The text fields of events this class does not look into (ids, small objects). */
    private static final int SMALL_EVENT = 128;

    private StoredSize() {
    }

    static int of(RunEvent event) {
        return ROW_OVERHEAD + of(event.event());
    }

    private static int of(AgentStreamEvent event) {
        if (event instanceof AgentStreamEvent.TextDelta delta) {
            return delta.delta().length();
        }
        if (event instanceof AgentStreamEvent.ThinkingDelta delta) {
            return delta.delta().length();
        }
        if (event instanceof AgentStreamEvent.ToolCallArgs args) {
            return args.delta().length();
        }
        if (event instanceof AgentStreamEvent.TextFinal text) {
            return text.text().length();
        }
        if (event instanceof AgentStreamEvent.ToolCallStart start) {
            return start.name().length() + start.arguments().length();
        }
        if (event instanceof AgentStreamEvent.ToolCallResult result) {
            return result.result().length();
        }
        if (event instanceof AgentStreamEvent.StatusUpdate status) {
            return status.text().length();
        }
        if (event instanceof AgentStreamEvent.RunFailed failed) {
            return failed.code().length() + failed.message().length();
        }
        if (event instanceof AgentStreamEvent.TodosUpdated todos) {
            return todos(todos.items());
        }
        if (event instanceof AgentStreamEvent.MessagesSnapshot snapshot) {
            int size = 0;
            for (Message message : snapshot.messages()) {
                size += of(message);
            }
            return size;
        }
        if (event instanceof AgentStreamEvent.Unknown unknown) {
            return unknown.json().length();
        }
        return SMALL_EVENT;
    }

    static int of(Message message) {
        return ROW_OVERHEAD + text(message);
    }

    private static int text(Message message) {
        if (message instanceof AssistantMessage m) {
            return m.text().length();
        }
        if (message instanceof ThinkingMessage m) {
            return m.text().length();
        }
        if (message instanceof UserMessage m) {
            return m.text().length();
        }
        if (message instanceof ActionExecutionMessage m) {
            return m.name().length() + m.arguments().length();
        }
        if (message instanceof ResultMessage m) {
            return m.result().length();
        }
        if (message instanceof StatusMessage m) {
            return m.text().length();
        }
        if (message instanceof ErrorMessage m) {
            return m.message().length();
        }
        if (message instanceof TodoMessage m) {
            return todos(m.items());
        }
        if (message instanceof ClarifyMessage m) {
            int size = m.question().length();
            for (String choice : m.choices()) {
                size += choice.length();
            }
            return size;
        }
        return SMALL_EVENT;
    }

    private static int todos(List<TodoItem> items) {
        int size = 0;
        for (TodoItem item : items) {
            size += 32 + item.content().length();
        }
        return size;
    }
}
