package dev.parley.chat.agent;

import static dev.parley.chat.testing.ScriptedModel.Reply.reply;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.testing.ScriptedModel;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A model that repeats a tool-call id (in a later call, or within one response) gets each call run and each result
 * under its own id; the engine sees execution ids unique within the run.
 */
class RepeatedToolCallIdTest extends AgentLoopFixture {

    @Test
    void anIdRepeatedInALaterCallRunsTheToolAgainAndTheModelGetsTheNewResult() {
        ScriptedModel model = ScriptedModel.replying(
                reply().toolCall(0, "call_0", "lookup_order", "{\"id\":1}"),
                reply().toolCall(0, "call_0", "lookup_order", "{\"id\":2}"),
                reply().text("Both shipped."));
        try (ChatEngine engine = engine(model, b -> b)) {
            Run run = runToEnd(engine, NewThread.empty(), "orders 1 and 2?");

            assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(lookups).containsExactly("{\"id\":1}", "{\"id\":2}");
            List<ModelMessage> third = model.requests().get(2).messages();
            assertThat(third).containsExactly(new ModelMessage.User("orders 1 and 2?"),
                    new ModelMessage.Assistant("", List.of(new ToolCall("call_0", "lookup_order", "{\"id\":1}"))),
                    new ModelMessage.ToolResult("call_0", "lookup_order", "order {\"id\":1}: shipped", false),
                    new ModelMessage.Assistant("", List.of(new ToolCall("call_0", "lookup_order", "{\"id\":2}"))),
                    new ModelMessage.ToolResult("call_0", "lookup_order", "order {\"id\":2}: shipped", false));
            assertThat(steps(run)).filteredOn(ActionExecutionMessage.class::isInstance)
                    .extracting(m -> ((ActionExecutionMessage) m).executionId()).containsExactly("call_0", "call_0-2");
        }
    }

    @Test
    void anIdRepeatedWithinOneResponseRunsBothCalls() {
        ScriptedModel model = ScriptedModel.replying(
                reply().completeToolCall("call_0", "lookup_order", "{\"id\":1}")
                        .completeToolCall("call_0", "lookup_order", "{\"id\":2}"),
                reply().text("Done."));
        try (ChatEngine engine = engine(model, b -> b)) {
            Run run = runToEnd(engine, NewThread.empty(), "orders 1 and 2?");

            assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(lookups).containsExactlyInAnyOrder("{\"id\":1}", "{\"id\":2}");
            List<ModelMessage> second = model.requests().get(1).messages();
            assertThat(second.subList(2, 4)).containsExactly(
                    new ModelMessage.ToolResult("call_0", "lookup_order", "order {\"id\":1}: shipped", false),
                    new ModelMessage.ToolResult("call_0", "lookup_order", "order {\"id\":2}: shipped", false));
        }
    }

    @Test
    void aRepeatedIdStreamedInPiecesIsAnnouncedUnderItsNewExecutionId() {
        ScriptedModel model = ScriptedModel.replying(
                reply().toolCall(0, "x", "lookup_order", "{\"id\":", "7}"),
                reply().toolCall(0, "x", "lookup_order", "{\"id\":", "8}"),
                reply().text("ok"));
        try (ChatEngine engine = engine(model, b -> b)) {
            Run run = runToEnd(engine, NewThread.empty(), "7 and 8");

            assertThat(lookups).containsExactly("{\"id\":7}", "{\"id\":8}");
            assertThat(steps(run)).filteredOn(ActionExecutionMessage.class::isInstance)
                    .extracting(m -> ((ActionExecutionMessage) m).arguments())
                    .containsExactly("{\"id\":7}", "{\"id\":8}");
        }
    }
}
