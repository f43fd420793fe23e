package dev.parley.chat.agent;

import static dev.parley.chat.testing.ScriptedModel.Reply.reply;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.StatusMessage;
import dev.parley.chat.testing.ScriptedModel;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How the agent loop ends a run by the model's finish reason: none (a cut stream), the length limit, stop. */
class FinishReasonTest extends AgentLoopFixture {

    @Test
    void aResponseWithoutAFinishReasonFailsTheRunAndKeepsThePartialAnswer() {
        ScriptedModel model = ScriptedModel.replying(reply().text("Your order ", "is on its wa").finish(null));
        try (ChatEngine engine = engine(model, b -> b)) {
            Run run = runToEnd(engine, NewThread.empty(), "where is my order?");

            assertThat(run.status()).isEqualTo(RunStatus.FAILED);
            assertThat(run.error().code()).isEqualTo("RUNTIME_UNAVAILABLE");
            assertThat(run.error().message()).contains("ended without a finish reason");
            assertThat(answer(run)).isEqualTo("Your order is on its wa");
        }
    }

    @Test
    void anAnswerThatStopsOnItsOwnIsNotMarkedTruncated() {
        ScriptedModel model = ScriptedModel.replying(reply().text("Because.").finish("stop"));
        try (ChatEngine engine = engine(model, b -> b)) {
            Run run = runToEnd(engine, NewThread.empty(), "why?");

            assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(answerMessage(run).truncated()).isFalse();
            assertThat(steps(run)).noneMatch(StatusMessage.class::isInstance);
        }
    }

    @Test
    void aResponseWithToolCallsButNoFinishReasonRunsNoTool() {
        ScriptedModel model = ScriptedModel.replying(reply().toolCall(0, "call_1", "lookup_order", "{\"id\":4").finish(null));
        try (ChatEngine engine = engine(model, b -> b)) {
            Run run = runToEnd(engine, NewThread.empty(), "order 42?");

            assertThat(run.status()).isEqualTo(RunStatus.FAILED);
            assertThat(lookups).isEmpty();
            assertThat(model.requests()).hasSize(1);
        }
    }

    /** An answer cut at the length limit is continued: the model gets the partial answer, then the request to go on. */
    @Test
    void anAnswerCutAtTheLengthLimitCanBeContinuedAndTheModelSeesWhereItStopped() {
        ScriptedModel model = ScriptedModel.replying(reply().text("The three reasons are: first, ").finish("length"),
                reply().text("cost; second, time; third, risk.").finish("stop"));
        try (ChatEngine engine = engine(model, b -> b)) {
            Run cut = runToEnd(engine, NewThread.empty(), "why?");
            String runId = engine.continueAnswer(ALICE, cut.assistantMessageId()).runId();
            Run next = dev.parley.chat.testing.Await.until(() -> engine.state(ALICE, runId).run(),
                    r -> r.status().isTerminal(), "the continuing run");

            assertThat(next.status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(answer(next)).isEqualTo("cost; second, time; third, risk.");
            assertThat(model.requests().get(1).messages()).containsExactly(new ModelMessage.User("why?"),
                    new ModelMessage.Assistant("The three reasons are: first, ", List.of()),
                    new ModelMessage.User(ChatEngine.CONTINUE_PROMPT));
        }
    }

    @Test
    void anAnswerCutAtTheLengthLimitSucceedsWithAWarningSayingSo() {
        for (String reason : new String[] {"length", "max_tokens", "MAX_TOKENS"}) {
            ScriptedModel model = ScriptedModel.replying(reply().text("The three reasons are: first, ").finish(reason));
            try (ChatEngine engine = engine(model, b -> b)) {
                Run run = runToEnd(engine, NewThread.empty(), "why?");

                assertThat(run.status()).as(reason).isEqualTo(RunStatus.SUCCEEDED);
                assertThat(answer(run)).isEqualTo("The three reasons are: first, ");
                assertThat(answerMessage(run).truncated()).as("the field the page shows").isTrue();
                assertThat(steps(run)).filteredOn(StatusMessage.class::isInstance).singleElement().satisfies(m -> {
                    assertThat(((StatusMessage) m).level()).isEqualTo("warn");
                    assertThat(((StatusMessage) m).text()).contains("cut off at the model's length limit");
                });
            }
        }
    }

    @Test
    void aToolCallCutAtTheLengthLimitIsNotRunAndSaysWhy() {
        ScriptedModel model = ScriptedModel.replying(
                reply().text("Let me look.").toolCall(0, "call_1", "lookup_order", "{\"id\":", "4").finish("length"),
                reply().text("never asked"));
        try (ChatEngine engine = engine(model, b -> b)) {
            Run run = runToEnd(engine, NewThread.empty(), "order 42?");

            assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(answerMessage(run).truncated()).isTrue();
            assertThat(lookups).isEmpty();
            assertThat(model.requests()).hasSize(1);
            assertThat(steps(run)).filteredOn(ResultMessage.class::isInstance).singleElement().satisfies(m -> {
                assertThat(((ResultMessage) m).error()).isTrue();
                assertThat(((ResultMessage) m).result()).contains("not run");
            });
            assertThat(steps(run)).filteredOn(StatusMessage.class::isInstance).singleElement()
                    .satisfies(m -> assertThat(((StatusMessage) m).text()).contains("tool calls were not run"));
            assertThat(steps(run)).filteredOn(ActionExecutionMessage.class::isInstance).hasSize(1);
        }
    }
}
