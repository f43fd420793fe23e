package dev.parley.chat.mcp;

import static dev.parley.chat.testing.ScriptedModel.Reply.reply;

import dev.parley.chat.agent.ModelMessage;
import dev.parley.chat.agent.ModelRequest;
import dev.parley.chat.testing.ScriptedModel;
import java.util.ArrayList;
import java.util.List;

/**
 * A scripted model whose every turn is written in the person's message: one tool call per line,
 * {@code <tool> <arguments JSON>}, made one after the other (the next once the previous one's result is in);
 * then it answers "done".
 */
final class ScriptedTurns {
    private ScriptedTurns() {
    }

    static ScriptedModel model() {
        return ScriptedModel.choosing(ScriptedTurns::next);
    }

    private static ScriptedModel.Reply next(ModelRequest request) {
        List<ModelMessage> messages = request.messages();
        int user = lastUser(messages);
        String[] lines = ((ModelMessage.User) messages.get(user)).text().split("\n");
        int done = (int) messages.subList(user, messages.size()).stream().filter(ModelMessage.ToolResult.class::isInstance)
                .count();
        if (done >= lines.length || lines[done].isBlank()) {
            return reply().text("done");
        }
        String line = lines[done].strip();
        int space = line.indexOf(' ');
        String tool = space < 0 ? line : line.substring(0, space);
        String arguments = space < 0 ? "{}" : line.substring(space + 1);
        return reply().completeToolCall("call-" + done, tool, arguments);
    }

    /** The tool results the model was handed in the turn it answered last. */
    static List<ModelMessage.ToolResult> lastResults(ScriptedModel model) {
        List<ModelRequest> requests = model.requests();
        List<ModelMessage> messages = requests.get(requests.size() - 1).messages();
        List<ModelMessage.ToolResult> results = new ArrayList<>();
        for (ModelMessage message : messages.subList(lastUser(messages), messages.size())) {
            if (message instanceof ModelMessage.ToolResult result) {
                results.add(result);
            }
        }
        return results;
    }

    private static int lastUser(List<ModelMessage> messages) {
        for (int i = messages.size() - 1; i >= 0; i--) {
            if (messages.get(i) instanceof ModelMessage.User) {
                return i;
            }
        }
        throw new IllegalStateException("no user message in " + messages);
    }
}
