package dev.parley.chat.hermes.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.UserMessage;
import java.util.List;

/**
 * The Bridge's history addition ({@code docs/hermes-bridge-protocol.md} section 11): a thread's conversation
 * as the {@code history} field of {@code POST /run}, so that a Bridge can build a session it does not hold
 * (after its restart, an eviction, or a run that answers an edit). Entries, oldest first:
 * {@code {"role":"user","text"}}, {@code {"role":"assistant","text"}},
 * {@code {"role":"tool_call","toolCallId","toolName","args"}} and
 * {@code {"role":"tool_result","toolCallId","toolName","result","isError"}}; other messages are not sent. A user
 * message's files are named after its text, one a line ({@code [image: cat.png]}); their bytes are not sent again.
 */
public final class BridgeHistory {
    /** What {@code clientCapabilities} says for this addition in {@code POST /run}. */
    public static final String CLIENT_CAPABILITY = "history";

    private BridgeHistory() {
    }

    /** The entries for these messages (texts redacted, as everything the adapter passes on). */
    public static ArrayNode entries(List<Message> messages, ObjectMapper json, Redactor redactor) {
        ArrayNode entries = json.createArrayNode();
        for (Message message : messages) {
            if (message instanceof UserMessage user) {
                StringBuilder text = new StringBuilder(user.text());
                for (MessageAttachment file : user.attachments()) {
                    text.append(text.isEmpty() ? "" : "\n").append(ApiServerRequests.mention(file));
                }
                entries.addObject().put("role", "user").put("text", redactor.redact(text.toString()));
            } else if (message instanceof AssistantMessage answer) {
                entries.addObject().put("role", "assistant").put("text", redactor.redact(answer.text()));
            } else if (message instanceof ActionExecutionMessage call) {
                entries.addObject().put("role", "tool_call").put("toolCallId", call.executionId())
                        .put("toolName", call.name()).put("args", redactor.redact(call.arguments()));
            } else if (message instanceof ResultMessage result) {
                entries.addObject().put("role", "tool_result").put("toolCallId", result.executionId())
                        .put("toolName", result.name()).put("result", redactor.redact(result.result()))
                        .put("isError", result.error());
            }
        }
        return entries;
    }
}
