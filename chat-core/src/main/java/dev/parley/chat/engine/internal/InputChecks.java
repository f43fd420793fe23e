package dev.parley.chat.engine.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.ClientToolAnswer;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.runtime.HostToolSpec;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The shape checks of what a person sends for a pending input, and of the tools a page offers: each
 * failure is INVALID_INPUT with a message saying what is wrong, and nothing has been changed yet.
 */
public final class InputChecks {
    /** A tool name as model APIs accept it (OpenAI, Anthropic: letters, digits, _ and -, up to 64). */
    private static final Pattern TOOL_NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final int MAX_CLIENT_TOOLS = 64;
    private static final int MAX_TOOL_DESCRIPTION = 4_000;

    private InputChecks() {
    }

    /**
     * Checks an answer against the pending input it answers.
     *
     * @throws ChatException INVALID_INPUT for an answer of another kind, a decision the asker did not
     *     offer, several choices to a single-choice question, edited arguments where editing is not allowed
     *     or that are not JSON, blank or oversized text
     */
    public static void answer(PendingInput input, InputAnswer answer, EngineLimits limits) {
        if (answer.kind() != input.kind()) {
            throw ChatException.invalidInput("input " + input.inputId() + " is " + article(input.kind().wireName())
                    + ", not answered by " + article(answer.kind().wireName()) + " answer");
        }
        if (answer instanceof ClarifyAnswer clarify) {
            clarify(clarify, (ClarifyRequest) input.request(), limits);
        } else if (answer instanceof ApprovalAnswer approval) {
            approval(approval, (ApprovalRequest) input.request(), limits);
        } else if (answer instanceof ClientToolAnswer result && result.result().length() > limits.maxMessageLength()) {
            throw ChatException.invalidInput("the tool's result is longer than " + limits.maxMessageLength()
                    + " characters");
        }
    }

    private static void clarify(ClarifyAnswer answer, ClarifyRequest question, EngineLimits limits) {
        List<String> entries = answer.answer();
        if (entries.isEmpty()) {
            throw ChatException.invalidInput("an answer must not be empty");
        }
        int total = 0;
        for (String entry : entries) {
            if (entry == null || entry.isBlank()) {
                throw ChatException.invalidInput("an answer must not contain blank entries");
            }
            total += entry.length();
        }
        if (total > limits.maxMessageLength()) {
            throw ChatException.invalidInput("the answer is longer than " + limits.maxMessageLength() + " characters");
        }
        if (!question.multiSelect() && entries.size() > 1) {
            throw ChatException.invalidInput("this question takes one answer, got " + entries.size());
        }
    }

    private static void approval(ApprovalAnswer answer, ApprovalRequest asked, EngineLimits limits) {
        if (!asked.decisions().contains(answer.decision())) {
            throw ChatException.invalidInput("the decision " + answer.decision().wireName() + " is not offered; choose "
                    + asked.decisions().stream().map(d -> d.wireName()).toList());
        }
        String edited = answer.editedArguments();
        if (edited == null) {
            return;
        }
        if (!asked.argumentsEditable()) {
            throw ChatException.invalidInput("the arguments of this call may not be edited");
        }
        if (!answer.decision().allows()) {
            throw ChatException.invalidInput("edited arguments go with a decision that allows the call");
        }
        if (edited.length() > limits.maxMessageLength()) {
            throw ChatException.invalidInput("the edited arguments are longer than " + limits.maxMessageLength()
                    + " characters");
        }
        json(edited, "the edited arguments");
    }

    /**
     * Checks the tools a page offers for a run.
     *
     * @throws ChatException INVALID_INPUT for more than 64 tools, a name models do not accept or given
     *     twice or naming a host action, an oversized description, parameters that are not a JSON object
     */
    public static void clientTools(List<HostToolSpec> tools, Map<String, HostAction> hostActions) {
        if (tools.size() > MAX_CLIENT_TOOLS) {
            throw ChatException.invalidInput("at most " + MAX_CLIENT_TOOLS + " client tools, got " + tools.size());
        }
        Set<String> names = new HashSet<>();
        for (HostToolSpec tool : tools) {
            if (!TOOL_NAME.matcher(tool.name()).matches()) {
                throw ChatException.invalidInput("a tool name is 1 to 64 letters, digits, _ or -, got '"
                        + abbreviate(tool.name()) + "'");
            }
            if (!names.add(tool.name())) {
                throw ChatException.invalidInput("the client tool " + tool.name() + " is given twice");
            }
            if (hostActions.containsKey(tool.name())) {
                throw ChatException.invalidInput("the client tool " + tool.name() + " has the name of a host action");
            }
            if (tool.description().length() > MAX_TOOL_DESCRIPTION) {
                throw ChatException.invalidInput("the description of " + tool.name() + " is longer than "
                        + MAX_TOOL_DESCRIPTION + " characters");
            }
            if (!json(tool.parametersSchema(), "the parameters of " + tool.name()).isObject()) {
                throw ChatException.invalidInput("the parameters of " + tool.name() + " must be a JSON Schema object");
            }
        }
    }

    private static JsonNode json(String text, String what) {
        try {
            return ChatJson.shared().readTree(text);
        } catch (ChatException e) {
            throw ChatException.invalidInput(what + " are not valid JSON");
        }
    }

    private static String article(String kind) {
        return ("aeiou".indexOf(kind.charAt(0)) >= 0 ? "an " : "a ") + kind.replace('_', ' ');
    }

    private static String abbreviate(String text) {
        return text.length() <= 40 ? text : text.substring(0, 40) + "…";
    }
}
