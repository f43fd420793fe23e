package dev.parley.chat.agent;

import java.util.List;
import java.util.Objects;

/** One message of the conversation a model is sent, in the shape chat-completion APIs share. */
public sealed interface ModelMessage {

    /** What the person wrote. */
    record User(String text) implements ModelMessage {
        public User {
            Objects.requireNonNull(text, "text");
        }
    }

    /** What the model answered: text, tool calls, or both. */
    record Assistant(String text, List<ToolCall> toolCalls) implements ModelMessage {
        public Assistant {
            Objects.requireNonNull(text, "text");
            toolCalls = toolCalls == null ? List.of() : List.copyOf(toolCalls);
        }
    }

    /** A tool call's result, answering the assistant message that made the call. */
    record ToolResult(String callId, String name, String result, boolean error) implements ModelMessage {
        public ToolResult {
            Objects.requireNonNull(callId, "callId");
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(result, "result");
        }
    }
}
