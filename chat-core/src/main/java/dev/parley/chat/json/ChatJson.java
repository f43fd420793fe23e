package dev.parley.chat.json;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import com.fasterxml.jackson.annotation.PropertyAccessor;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.input.InputRequest;
import dev.parley.chat.json.internal.InstantMillis;
import dev.parley.chat.json.internal.Mixins;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageKind;
import dev.parley.chat.model.UserMessage;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Reads and writes Parley's model and events as JSON (Jackson 2).
 *
 * <ul>
 *   <li>Messages and events carry a stable {@code type} discriminator ({@code user}, {@code assistant},
 *       …; {@code text_delta}, {@code run_finished}, …).</li>
 *   <li>Instants are epoch milliseconds; null fields are left out.</li>
 *   <li>Unknown fields are ignored. An event of an unknown type reads as
 *       {@link AgentStreamEvent.Unknown} and is written back unchanged; a message of an unknown type
 *       inside a list is dropped.</li>
 *   <li>A {@link RunEvent} is {@code {"runId","seq","timestamp","event":{…}}}.</li>
 * </ul>
 *
 * <p>Thread-safe; share one instance ({@link #shared()}). Malformed input throws {@link ChatException}
 * with {@link ErrorCode#INVALID_INPUT}.
 */
public final class ChatJson {
    private static final ChatJson SHARED = new ChatJson();
    private static final TypeReference<Map<String, Object>> MAP_TYPE = new TypeReference<>() {
    };

    private final ObjectMapper mapper;

    private ChatJson() {
        SimpleModule module = new SimpleModule("parley");
        module.addSerializer(Instant.class, new InstantMillis.Serializer());
        module.addDeserializer(Instant.class, new InstantMillis.Deserializer());
        module.setMixInAnnotation(Message.class, Mixins.MessageMixin.class);
        module.setMixInAnnotation(MessageKind.class, Mixins.MessageKindMixin.class);
        module.setMixInAnnotation(AgentStreamEvent.class, Mixins.EventMixin.class);
        module.setMixInAnnotation(AgentStreamEvent.Unknown.class, Mixins.UnknownEventMixin.class);
        module.setMixInAnnotation(AssistantMessage.class, Mixins.AssistantMessageMixin.class);
        module.setMixInAnnotation(UserMessage.class, Mixins.UserMessageMixin.class);
        module.setMixInAnnotation(AgentStreamEvent.RunFinished.class, Mixins.RunFinishedMixin.class);
        module.setMixInAnnotation(InputRequest.class, Mixins.InputRequestMixin.class);
        module.setMixInAnnotation(InputAnswer.class, Mixins.InputAnswerMixin.class);
        module.setMixInAnnotation(InputKind.class, Mixins.WireNameMixin.class);
        module.setMixInAnnotation(ApprovalDecision.class, Mixins.WireNameMixin.class);
        ObjectMapper m = new ObjectMapper();
        m.registerModule(module);
        m.setVisibility(PropertyAccessor.IS_GETTER, JsonAutoDetect.Visibility.NONE);
        m.setSerializationInclusion(JsonInclude.Include.NON_NULL);
        m.configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
        m.configure(DeserializationFeature.FAIL_ON_INVALID_SUBTYPE, false);
        m.configure(SerializationFeature.FAIL_ON_EMPTY_BEANS, false);
        m.configOverride(List.class).setSetterInfo(JsonSetter.Value.forContentNulls(Nulls.SKIP));
        this.mapper = m;
    }

    /** The shared codec. */
    public static ChatJson shared() {
        return SHARED;
    }

    /** Writes any model value, event, run event or list of them. */
    public String write(Object value) {
        try {
            return mapper.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new ChatException(ErrorCode.INTERNAL, "cannot write " + value.getClass().getSimpleName() + " as JSON", e);
        }
    }

    /** Writes any model value as UTF-8 JSON bytes. */
    public byte[] writeBytes(Object value) {
        try {
            return mapper.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new ChatException(ErrorCode.INTERNAL, "cannot write " + value.getClass().getSimpleName() + " as JSON", e);
        }
    }

    /**
     * A streaming writer onto {@code out} (left open when the generator closes) that writes model values with
     * this codec's rules, for documents too large to build in memory.
     */
    public com.fasterxml.jackson.core.JsonGenerator generator(OutputStream out) throws IOException {
        return mapper.getFactory().createGenerator(out)
                .disable(com.fasterxml.jackson.core.JsonGenerator.Feature.AUTO_CLOSE_TARGET);
    }

    /** Writes a value as UTF-8 JSON to a stream, leaving the stream open. */
    public void write(OutputStream out, Object value) throws IOException {
        mapper.writer().without(com.fasterxml.jackson.core.JsonGenerator.Feature.AUTO_CLOSE_TARGET).writeValue(out, value);
    }

    /** Reads one event; an unknown type gives {@link AgentStreamEvent.Unknown}. */
    public AgentStreamEvent readEvent(String json) {
        try {
            AgentStreamEvent event = mapper.readValue(json, AgentStreamEvent.class);
            return event != null ? event : unknownEvent(mapper.readTree(json));
        } catch (JsonProcessingException | RuntimeException e) {
            throw invalid("event", e);
        }
    }

    /** Reads an event from a parsed JSON object. */
    public AgentStreamEvent readEvent(JsonNode node) {
        try {
            AgentStreamEvent event = mapper.treeToValue(node, AgentStreamEvent.class);
            return event != null ? event : unknownEvent(node);
        } catch (JsonProcessingException | RuntimeException e) {
            throw invalid("event", e);
        }
    }

    /** Reads a logged run event. */
    public RunEvent readRunEvent(String json) {
        try {
            JsonNode node = mapper.readTree(json);
            if (node == null || !node.isObject()) {
                throw new IllegalArgumentException("a run event must be a JSON object");
            }
            JsonNode event = node.get("event");
            if (event == null || !event.isObject()) {
                throw new IllegalArgumentException("a run event needs an \"event\" object");
            }
            return new RunEvent(text(node, "runId"), node.path("seq").asLong(), node.path("timestamp").asLong(),
                    readEvent(event));
        } catch (JsonProcessingException | RuntimeException e) {
            throw invalid("run event", e);
        }
    }

    /** Reads one message. A message of an unknown type is an error here (it cannot be represented). */
    public Message readMessage(String json) {
        Message message = read(json, Message.class);
        if (message == null) {
            throw invalid("message", new IllegalArgumentException("unknown message type"));
        }
        return message;
    }

    /** Reads a list of messages, dropping those of unknown types. */
    public List<Message> readMessages(String json) {
        List<Message> messages = read(json, new TypeReference<List<Message>>() {
        });
        messages.removeIf(Objects::isNull);
        return messages;
    }

    /** Reads a JSON object into a map of JSON-compatible values (used for free-form run context). */
    public Map<String, Object> readMap(String json) {
        return read(json, MAP_TYPE);
    }

    /** Reads any model type. */
    public <T> T read(String json, Class<T> type) {
        try {
            return mapper.readValue(json, type);
        } catch (JsonProcessingException | RuntimeException e) {
            throw invalid(type.getSimpleName(), e);
        }
    }

    /** Reads any model type given as a type reference (for generic types). */
    public <T> T read(String json, TypeReference<T> type) {
        try {
            return mapper.readValue(json, type);
        } catch (JsonProcessingException | RuntimeException e) {
            throw invalid(type.getType().getTypeName(), e);
        }
    }

    /** Parses JSON text into a tree. */
    public JsonNode readTree(String json) {
        try {
            return mapper.readTree(json);
        } catch (JsonProcessingException e) {
            throw invalid("JSON", e);
        }
    }

    /** Converts a tree into a model type. */
    public <T> T convert(JsonNode node, Class<T> type) {
        try {
            return mapper.treeToValue(node, type);
        } catch (JsonProcessingException | RuntimeException e) {
            throw invalid(type.getSimpleName(), e);
        }
    }

    /** A new empty JSON object node. */
    public ObjectNode objectNode() {
        return mapper.createObjectNode();
    }

    private static AgentStreamEvent unknownEvent(JsonNode node) {
        if (node == null || !node.isObject()) {
            throw new IllegalArgumentException("an event must be a JSON object");
        }
        JsonNode type = node.get("type");
        if (type == null || !type.isTextual() || type.asText().isEmpty()) {
            throw new IllegalArgumentException("an event needs a \"type\"");
        }
        return new AgentStreamEvent.Unknown(type.asText(), node.toString());
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || !value.isTextual()) {
            throw new IllegalArgumentException("missing \"" + field + "\"");
        }
        return value.asText();
    }

    private static ChatException invalid(String what, Exception cause) {
        String detail = cause instanceof JsonProcessingException
                ? ((JsonProcessingException) cause).getOriginalMessage()
                : cause.getMessage();
        return new ChatException(ErrorCode.INVALID_INPUT, "malformed " + what + " JSON: " + detail, cause);
    }
}
