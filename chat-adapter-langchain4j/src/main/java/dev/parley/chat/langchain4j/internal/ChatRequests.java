package dev.parley.chat.langchain4j.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.parley.chat.agent.ModelMessage;
import dev.parley.chat.agent.ModelRequest;
import dev.parley.chat.agent.ToolCall;
import dev.parley.chat.runtime.HostToolSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** Turns a Parley model request into a LangChain4j {@link ChatRequest}. */
public final class ChatRequests {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The keywords LangChain4j keeps on a tool's root schema; any other makes it refuse the whole schema. */
    private static final Set<String> ROOT_KEYWORDS = Set.of("type", "description", "properties", "required",
            "additionalProperties", "$defs");

    private ChatRequests() {
    }

    /**
     * The request as LangChain4j takes it: the system prompt first, then the conversation (the person's files
     * as {@link UserContents} puts them, images at {@code imageDetail}), the tools and the chosen model's name.
     *
     * @throws IllegalArgumentException if a tool's parameters are not a JSON Schema of an object, or a file is of
     *     a type the client cannot send
     */
    public static ChatRequest toChatRequest(ModelRequest request, ImageContent.DetailLevel imageDetail) {
        List<ChatMessage> messages = new ArrayList<>();
        if (request.systemPrompt() != null && !request.systemPrompt().isBlank()) {
            messages.add(SystemMessage.from(request.systemPrompt()));
        }
        for (ModelMessage message : request.messages()) {
            messages.add(toChatMessage(message, imageDetail));
        }
        ChatRequest.Builder builder = ChatRequest.builder().messages(messages);
        if (!request.tools().isEmpty()) {
            builder.toolSpecifications(request.tools().stream().map(ChatRequests::toToolSpecification).toList());
        }
        if (request.modelId() != null) {
            builder.modelName(request.modelId());
        }
        return builder.build();
    }

    static ChatMessage toChatMessage(ModelMessage message, ImageContent.DetailLevel imageDetail) {
        if (message instanceof ModelMessage.User user) {
            return UserContents.toUserMessage(user, imageDetail);
        }
        if (message instanceof ModelMessage.Assistant assistant) {
            List<ToolExecutionRequest> calls = assistant.toolCalls().stream().map(ChatRequests::toRequest).toList();
            return AiMessage.builder().text(assistant.text().isEmpty() && !calls.isEmpty() ? null : assistant.text())
                    .toolExecutionRequests(calls).build();
        }
        ModelMessage.ToolResult result = (ModelMessage.ToolResult) message;
        return ToolExecutionResultMessage.builder().id(result.callId()).toolName(result.name()).text(result.result())
                .isError(result.error()).build();
    }

    private static ToolExecutionRequest toRequest(ToolCall call) {
        return ToolExecutionRequest.builder().id(call.id()).name(call.name()).arguments(call.arguments()).build();
    }

    /**
     * A host tool as LangChain4j describes one. Its schema's root must describe an object (a schema without a
     * {@code type} is taken as one); root keywords LangChain4j has no place for ({@code $schema}, {@code title},
     * …) are left out, nested ones are kept as they are.
     */
    static ToolSpecification toToolSpecification(HostToolSpec tool) {
        ObjectNode spec = JSON.createObjectNode();
        spec.put("name", tool.name());
        spec.put("description", tool.description());
        spec.set("parameters", rootSchema(tool));
        return ToolSpecification.fromJson(spec.toString());
    }

    private static ObjectNode rootSchema(HostToolSpec tool) {
        JsonNode parsed;
        try {
            parsed = JSON.readTree(tool.parametersSchema().isBlank() ? "{}" : tool.parametersSchema());
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("the parameters of tool " + tool.name() + " are not JSON", e);
        }
        if (!(parsed instanceof ObjectNode schema)) {
            throw new IllegalArgumentException("the parameters of tool " + tool.name() + " are not a JSON Schema");
        }
        JsonNode type = schema.path("type");
        if (!type.isMissingNode() && !"object".equals(type.asText())) {
            throw new IllegalArgumentException("the parameters of tool " + tool.name() + " must be an object schema");
        }
        ObjectNode root = JSON.createObjectNode().put("type", "object");
        schema.properties().forEach(field -> {
            boolean schemaValuedAdditional = field.getKey().equals("additionalProperties")
                    && !field.getValue().isBoolean();
            if (ROOT_KEYWORDS.contains(field.getKey()) && !schemaValuedAdditional) {
                root.set(field.getKey(), field.getValue());
            }
        });
        return root;
    }
}
