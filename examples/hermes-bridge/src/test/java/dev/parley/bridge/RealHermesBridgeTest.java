package dev.parley.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.TodoItem;
import dev.parley.chat.model.TodoStatus;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.runtime.RunRequest;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The reference Bridge over a real Hermes Agent: the shared checks, and what only the Bridge carries. */
class RealHermesBridgeTest extends RealHermesChecks {
    private static RealHermes hermes;
    private static HermesRuntimeAdapter adapter;

    @BeforeAll
    static void connect(RealHermes shared) {
        hermes = shared;
        adapter = shared.bridgeAdapter();
    }

    @AfterAll
    static void disconnect() throws Exception {
        if (adapter != null) {
            adapter.close();
        }
        if (hermes != null) {
            assertThat(hermes.bridge().stdout()).as("the Bridge writes nothing to stdout").isEmpty();
            assertThat(hermes.bridge().log()).doesNotContain(BridgeProcess.TOKEN);
        }
    }

    @Override
    RealHermes hermes() {
        return hermes;
    }

    @Override
    HermesRuntimeAdapter adapter() {
        return adapter;
    }

    @Test
    void aClarifyAnswered() throws Exception {
        String m = marker("clarify");
        hermes.model().script(m, ScriptedModel.call("clarify", "{\"question\": \"Which city?\", \"choices\": [\"Paris\", \"Rome\"]}"),
                ScriptedModel.say("Going where you said."));
        RunRequest request = request(m + " pick a city");
        Events events = Events.of(adapter.generateResponse(request));

        AgentStreamEvent.InputRequested asked = events.await(AgentStreamEvent.InputRequested.class);
        assertThat(asked.request()).isEqualTo(new ClarifyRequest("Which city?", List.of("Paris", "Rome"), false));
        adapter.answerClarify(new ClarifyReply(request.runId(), asked.inputId(), List.of("Rome")));

        assertThat(events.all()).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        assertThat(events.await(AgentStreamEvent.ToolCallResult.class).result()).contains("Rome");
        assertThat(events.await(AgentStreamEvent.TextFinal.class).text()).isEqualTo("Going where you said.");
        assertThat(toolResultSent(m)).as("the answer Hermes handed the model").contains("Rome");
    }

    @Test
    void thinkingAndATodoList() throws Exception {
        String m = marker("todo");
        hermes.model().script(m, ScriptedModel.thinkThenCall("First I plan the work.", "todo",
                        "{\"todos\": [{\"id\": \"1\", \"content\": \"Look around\", \"status\": \"completed\"},"
                                + " {\"id\": \"2\", \"content\": \"Answer\", \"status\": \"in_progress\"}]}"),
                ScriptedModel.think("Now I answer.", "All planned."));
        RunRequest request = request(m + " plan it");
        Events events = Events.of(adapter.generateResponse(request));

        assertThat(events.all()).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        String thinking = events.of(AgentStreamEvent.ThinkingDelta.class).stream()
                .map(AgentStreamEvent.ThinkingDelta::delta).collect(Collectors.joining());
        assertThat(thinking).contains("First I plan the work.").contains("Now I answer.");
        assertThat(events.await(AgentStreamEvent.TodosUpdated.class).items()).containsExactly(
                new TodoItem("1", "Look around", TodoStatus.COMPLETED, null),
                new TodoItem("2", "Answer", TodoStatus.IN_PROGRESS, null));
        assertThat(events.await(AgentStreamEvent.TextFinal.class).text()).isEqualTo("All planned.");
    }
}
