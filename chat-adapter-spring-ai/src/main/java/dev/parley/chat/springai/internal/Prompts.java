package dev.parley.chat.springai.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.agent.ModelMessage;
import dev.parley.chat.agent.ModelRequest;
import dev.parley.chat.runtime.HostToolSpec;
import java.util.ArrayList;
import java.util.List;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;

/** Turns a Parley model request into a Spring AI {@link Prompt}. */
public final class Prompts {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Prompts() {
    }

    /**
     * The prompt: the system prompt first, then the conversation (consecutive tool results in one tool message,
     * as Spring AI groups them; the person's files as {@link UserMessages} puts them), with a copy of
     * {@code base} carrying the chosen model and the run's tools.
     *
     * @throws IllegalArgumentException if the request has tools and {@code base} takes none, a tool's
     *     parameters are not a JSON object, or a file is of a type the client cannot send
     */
    public static Prompt toPrompt(ModelRequest request, ChatOptions base) {
        List<Message> messages = new ArrayList<>();
        if (request.systemPrompt() != null && !request.systemPrompt().isBlank()) {
            messages.add(new SystemMessage(request.systemPrompt()));
        }
        List<ToolResponseMessage.ToolResponse> results = new ArrayList<>();
        for (ModelMessage message : request.messages()) {
            if (message instanceof ModelMessage.ToolResult result) {
                results.add(new ToolResponseMessage.ToolResponse(result.callId(), result.name(), result.result()));
                continue;
            }
            flushResults(messages, results);
            if (message instanceof ModelMessage.User user) {
                messages.add(UserMessages.toUserMessage(user));
            } else {
                messages.add(toAssistantMessage((ModelMessage.Assistant) message));
            }
        }
        flushResults(messages, results);
        return new Prompt(messages, options(request, base));
    }

    private static void flushResults(List<Message> messages, List<ToolResponseMessage.ToolResponse> results) {
        if (!results.isEmpty()) {
            messages.add(ToolResponseMessage.builder().responses(List.copyOf(results)).build());
            results.clear();
        }
    }

    private static AssistantMessage toAssistantMessage(ModelMessage.Assistant assistant) {
        List<AssistantMessage.ToolCall> calls = assistant.toolCalls().stream()
                .map(call -> new AssistantMessage.ToolCall(call.id(), "function", call.name(), call.arguments()))
                .toList();
        return AssistantMessage.builder().content(assistant.text().isEmpty() && !calls.isEmpty() ? null
                : assistant.text()).toolCalls(calls).build();
    }

    /** A copy of {@code base} with the chosen model and exactly the run's tools (none if it has none). */
    private static ChatOptions options(ModelRequest request, ChatOptions base) {
        ChatOptions.Builder<?> builder = base.mutate();
        if (request.modelId() != null) {
            builder.model(request.modelId());
        }
        if (builder instanceof ToolCallingChatOptions.Builder<?> tools) {
            tools.toolCallbacks(request.tools().stream().map(Prompts::toCallback).toList());
        } else if (!request.tools().isEmpty()) {
            throw new IllegalArgumentException("the chat options " + base.getClass().getName()
                    + " take no tools; the model's options must be a ToolCallingChatOptions");
        }
        return builder.build();
    }

    static ToolCallback toCallback(HostToolSpec tool) {
        String description = tool.description().isBlank() ? tool.name() : tool.description();
        return new DescribedTool(ToolDefinition.builder().name(tool.name()).description(description)
                .inputSchema(schema(tool)).build());
    }

    /** The tool's JSON Schema, as an object schema ({@code "type":"object"} added where it is missing). */
    private static String schema(HostToolSpec tool) {
        JsonNode parsed;
        try {
            parsed = JSON.readTree(tool.parametersSchema().isBlank() ? "{}" : tool.parametersSchema());
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("the parameters of tool " + tool.name() + " are not JSON", e);
        }
        if (!(parsed instanceof ObjectNode schema)) {
            throw new IllegalArgumentException("the parameters of tool " + tool.name() + " are not a JSON Schema");
        }
        if (!schema.has("type")) {
            schema.put("type", "object");
        }
        return schema.toString();
    }

    /** A tool the model may call and only the agent loop runs: Spring AI gets its definition, never a way to run it. */
    private record DescribedTool(ToolDefinition definition) implements ToolCallback {
        @Override
        public ToolDefinition getToolDefinition() {
            return definition;
        }

        @Override
        public String call(String toolInput) {
            throw new UnsupportedOperationException("Parley's agent loop runs " + definition.name()
                    + "; the ChatModel must only propose the call");
        }
    }
}
