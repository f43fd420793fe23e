package dev.parley.chat.spring.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.engine.RunState;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.ClientToolAnswer;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.runtime.HostToolSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The JSON of pending inputs over HTTP: an answer's body, the {@code clientTools} a page offers, and a
 * run's state with what waits. Shapes that are wrong are INVALID_INPUT before anything is changed.
 */
public final class InputBodies {
    /** A client tool without {@code parameters} takes none. */
    static final String NO_PARAMETERS = "{\"type\":\"object\",\"properties\":{}}";

    private InputBodies() {
    }

    /**
     * An answer's body: {@code {"answer": "Rome"}} or {@code {"answer": ["a", "b"]}} for a clarify,
     * {@code {"decision": "allow_once", "editedArguments": …}} for an approval, {@code {"result": …,
     * "error": false}} for a client tool. {@code kind} (clarify, approval, client_tool) may say which;
     * without it the one field of {@code answer}, {@code decision} and {@code result} present says it.
     * {@code editedArguments} and {@code result} are JSON text when given as a string, else the given
     * JSON value as text.
     *
     * @throws ChatException INVALID_INPUT for an unknown kind, a body that holds none or several of the
     *     three fields without a kind, or a field of the wrong type
     */
    public static InputAnswer answer(JsonNode body) {
        InputKind kind = kind(body);
        switch (kind) {
            case CLARIFY:
                return new ClarifyAnswer(JsonBodies.textOrTextList(body, "answer"));
            case APPROVAL:
                return new ApprovalAnswer(decision(JsonBodies.requiredText(body, "decision")),
                        jsonText(body, "editedArguments"));
            case CLIENT_TOOL:
                String result = jsonText(body, "result");
                if (result == null) {
                    throw ChatException.invalidInput("\"result\" is required");
                }
                Boolean error = JsonBodies.optionalBoolean(body, "error");
                return new ClientToolAnswer(result, error != null && error);
            default:
                throw new IllegalStateException("unknown input kind " + kind);
        }
    }

    private static InputKind kind(JsonNode body) {
        String named = JsonBodies.optionalText(body, "kind");
        if (named != null) {
            for (InputKind kind : InputKind.values()) {
                if (kind.wireName().equals(named)) {
                    return kind;
                }
            }
            String kinds = Arrays.stream(InputKind.values()).map(InputKind::wireName).collect(Collectors.joining(", "));
            throw ChatException.invalidInput("\"kind\" must be one of " + kinds + ", got '" + named + "'");
        }
        List<InputKind> given = new ArrayList<>();
        if (body.hasNonNull("answer")) {
            given.add(InputKind.CLARIFY);
        }
        if (body.hasNonNull("decision")) {
            given.add(InputKind.APPROVAL);
        }
        if (body.hasNonNull("result")) {
            given.add(InputKind.CLIENT_TOOL);
        }
        if (given.size() != 1) {
            throw ChatException.invalidInput("an answer holds one of \"answer\" (clarify), \"decision\" (approval) "
                    + "or \"result\" (client tool), or says its \"kind\"");
        }
        return given.get(0);
    }

    private static ApprovalDecision decision(String name) {
        for (ApprovalDecision decision : ApprovalDecision.values()) {
            if (decision.wireName().equals(name)) {
                return decision;
            }
        }
        String decisions = Arrays.stream(ApprovalDecision.values()).map(ApprovalDecision::wireName)
                .collect(Collectors.joining(", "));
        throw ChatException.invalidInput("\"decision\" must be one of " + decisions + ", got '" + name + "'");
    }

    /** A field that holds JSON: a string is taken as JSON text, any other value as itself; absent or null gives null. */
    private static @Nullable String jsonText(JsonNode body, String field) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        return value.isTextual() ? value.asText() : value.toString();
    }

    /**
     * The {@code clientTools} field: AG-UI's tools, {@code [{name, description?, parameters?}]} with
     * {@code parameters} a JSON Schema object (none: no parameters). Absent or null gives none; the
     * engine checks names and schemas.
     *
     * @throws ChatException INVALID_INPUT for a field that is not an array of such objects
     */
    public static List<HostToolSpec> clientTools(JsonNode body) {
        JsonNode tools = body.get("clientTools");
        if (tools == null || tools.isNull()) {
            return List.of();
        }
        if (!tools.isArray()) {
            throw ChatException.invalidInput("\"clientTools\" must be an array of {name, description, parameters}");
        }
        List<HostToolSpec> specs = new ArrayList<>();
        for (JsonNode tool : tools) {
            if (!tool.isObject()) {
                throw ChatException.invalidInput("each of \"clientTools\" must be an object {name, description, parameters}");
            }
            String name = JsonBodies.requiredText(tool, "name");
            String description = JsonBodies.optionalText(tool, "description");
            JsonNode parameters = tool.get("parameters");
            if (parameters != null && !parameters.isNull() && !parameters.isObject()) {
                throw ChatException.invalidInput("the parameters of client tool " + name + " must be a JSON Schema object");
            }
            specs.add(new HostToolSpec(name, description == null ? "" : description,
                    parameters == null || parameters.isNull() ? NO_PARAMETERS : parameters.toString()));
        }
        return specs;
    }

    /**
     * A run's state as the endpoint writes it: {@code {run, lastSeq, pendingInputs}},
     * each pending input as {@code {runId, inputId, kind, messageId, request, deadline?, createdAt}} (the
     * runtime's resume token stays on the server).
     */
    public static Map<String, Object> state(RunState state) {
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("run", state.run());
        view.put("lastSeq", state.lastSeq());
        view.put("pendingInputs", state.pendingInputs().stream().map(InputBodies::pending).collect(Collectors.toList()));
        return view;
    }

    private static Map<String, Object> pending(PendingInput input) {
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("runId", input.runId());
        view.put("inputId", input.inputId());
        view.put("kind", input.kind().wireName());
        view.put("messageId", input.messageId());
        view.put("request", input.request());
        if (input.deadline() != null) {
            view.put("deadline", input.deadline());
        }
        view.put("createdAt", input.createdAt());
        return view;
    }
}
