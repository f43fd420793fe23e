package dev.parley.chat.json.internal;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.annotation.JsonValue;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.ClientToolAnswer;
import dev.parley.chat.input.ClientToolRequest;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.ApprovalMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ClarifyMessage;
import dev.parley.chat.model.ErrorMessage;
import dev.parley.chat.model.MessageKind;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.StatusMessage;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.TodoMessage;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.model.UserMessage;
import java.util.List;

/**
 * Jackson mix-ins that keep the public model free of Jackson annotations. The type names are the wire
 * contract: never rename one.
 */
public final class Mixins {
    private Mixins() {
    }

    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.EXISTING_PROPERTY, property = "type")
    @JsonSubTypes({
        @JsonSubTypes.Type(value = UserMessage.class, name = "user"),
        @JsonSubTypes.Type(value = AssistantMessage.class, name = "assistant"),
        @JsonSubTypes.Type(value = ThinkingMessage.class, name = "thinking"),
        @JsonSubTypes.Type(value = ActionExecutionMessage.class, name = "action_execution"),
        @JsonSubTypes.Type(value = ResultMessage.class, name = "result"),
        @JsonSubTypes.Type(value = StatusMessage.class, name = "status"),
        @JsonSubTypes.Type(value = TodoMessage.class, name = "todo"),
        @JsonSubTypes.Type(value = ClarifyMessage.class, name = "clarify"),
        @JsonSubTypes.Type(value = ApprovalMessage.class, name = "approval"),
        @JsonSubTypes.Type(value = ErrorMessage.class, name = "error"),
    })
    public interface MessageMixin {
        /** Written as the {@code type} property, so a message carries it however it is serialized. */
        @JsonProperty("type")
        MessageKind kind();
    }

    /** A kind is written as its wire name. */
    public interface MessageKindMixin {
        @JsonValue
        String wireName();
    }

    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.EXISTING_PROPERTY, property = "type")
    @JsonSubTypes({
        @JsonSubTypes.Type(value = AgentStreamEvent.RunStarted.class, name = AgentStreamEvent.RunStarted.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.RuntimeSession.class, name = AgentStreamEvent.RuntimeSession.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.MessagesSnapshot.class, name = AgentStreamEvent.MessagesSnapshot.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.TextDelta.class, name = AgentStreamEvent.TextDelta.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.TextFinal.class, name = AgentStreamEvent.TextFinal.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.ThinkingDelta.class, name = AgentStreamEvent.ThinkingDelta.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.ToolCallStart.class, name = AgentStreamEvent.ToolCallStart.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.ToolCallArgs.class, name = AgentStreamEvent.ToolCallArgs.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.ToolCallEnd.class, name = AgentStreamEvent.ToolCallEnd.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.ToolCallResult.class, name = AgentStreamEvent.ToolCallResult.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.TodosUpdated.class, name = AgentStreamEvent.TodosUpdated.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.StatusUpdate.class, name = AgentStreamEvent.StatusUpdate.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.ClarifyRequested.class, name = AgentStreamEvent.ClarifyRequested.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.ClarifyResolved.class, name = AgentStreamEvent.ClarifyResolved.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.InputRequested.class, name = AgentStreamEvent.InputRequested.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.InputResolved.class, name = AgentStreamEvent.InputResolved.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.Usage.class, name = AgentStreamEvent.Usage.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.RunFinished.class, name = AgentStreamEvent.RunFinished.TYPE),
        @JsonSubTypes.Type(value = AgentStreamEvent.RunFailed.class, name = AgentStreamEvent.RunFailed.TYPE),
    })
    public interface EventMixin {
        /** Written as the {@code type} property, so an event carries it however it is serialized. */
        @JsonProperty("type")
        String type();
    }

    /** A pending input's request carries its kind as {@code kind}. */
    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.EXISTING_PROPERTY, property = "kind")
    @JsonSubTypes({
        @JsonSubTypes.Type(value = ClarifyRequest.class, name = "clarify"),
        @JsonSubTypes.Type(value = ApprovalRequest.class, name = "approval"),
        @JsonSubTypes.Type(value = ClientToolRequest.class, name = "client_tool"),
    })
    public interface InputRequestMixin {
        @JsonProperty("kind")
        InputKind kind();
    }

    /** An answer carries its kind as {@code kind}. */
    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.EXISTING_PROPERTY, property = "kind")
    @JsonSubTypes({
        @JsonSubTypes.Type(value = ClarifyAnswer.class, name = "clarify"),
        @JsonSubTypes.Type(value = ApprovalAnswer.class, name = "approval"),
        @JsonSubTypes.Type(value = ClientToolAnswer.class, name = "client_tool"),
    })
    public interface InputAnswerMixin {
        @JsonProperty("kind")
        InputKind kind();
    }

    /** Input kinds and approval decisions are written as their wire names. */
    public interface WireNameMixin {
        @JsonValue
        String wireName();
    }

    /** An answer that was not cut off leaves {@code truncated} out; one without suggestions, {@code suggestions}. */
    public interface AssistantMessageMixin {
        @JsonInclude(JsonInclude.Include.NON_DEFAULT)
        boolean truncated();
    }

    /** A message without attachments leaves {@code attachments} out. */
    public interface UserMessageMixin {
        @JsonInclude(JsonInclude.Include.NON_EMPTY)
        List<MessageAttachment> attachments();
    }

    /** A run end whose answer was not cut off leaves {@code truncated} out. */
    public interface RunFinishedMixin {
        @JsonInclude(JsonInclude.Include.NON_DEFAULT)
        boolean truncated();
    }

    /** An unknown event is written back exactly as it was read. */
    @JsonSerialize(using = UnknownEventSerializer.class)
    public interface UnknownEventMixin {
    }
}
