package dev.parley.chat.reduce;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.UserMessage;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class RunReducerTest {
    private long seq;
    private final RunReducer reducer = new RunReducer();

    private void apply(AgentStreamEvent event) {
        seq++;
        reducer.apply(new RunEvent("r", seq, 1000 + seq, event));
    }

    private void started() {
        apply(new AgentStreamEvent.RunStarted("t", "r", "a"));
        Instant at = Instant.ofEpochMilli(1000);
        apply(new AgentStreamEvent.MessagesSnapshot(null, null, List.of(
                new UserMessage("u", "t", "r", null, MessageStatus.COMPLETED, at, "hi"),
                new AssistantMessage("a", "t", "r", "u", MessageStatus.IN_PROGRESS, at, "", null, null)), null));
    }

    @Test
    void takeChangedReturnsOnlyWhatChangedSinceTheLastCall() {
        started();
        assertThat(reducer.takeChanged()).extracting(Message::id).containsExactly("u", "a");
        assertThat(reducer.takeChanged()).isEmpty();

        apply(new AgentStreamEvent.TextDelta("a", "x"));
        apply(new AgentStreamEvent.StatusUpdate("s", "busy", "working"));
        assertThat(reducer.hasChanges()).isTrue();
        List<Message> changed = reducer.takeChanged();
        assertThat(changed).extracting(Message::id).containsExactly("a", "s");
        assertThat(((AssistantMessage) changed.get(0)).text()).isEqualTo("x");
        assertThat(reducer.hasChanges()).isFalse();
    }

    @Test
    void aLongStreamAccumulatesWithoutLosingTokens() {
        started();
        StringBuilder expected = new StringBuilder();
        for (int i = 0; i < 50_000; i++) {
            String token = "t" + i + " ";
            expected.append(token);
            apply(new AgentStreamEvent.TextDelta("a", token));
        }
        apply(new AgentStreamEvent.RunFinished(dev.parley.chat.model.RunStatus.SUCCEEDED, null));
        AssistantMessage answer = (AssistantMessage) reducer.message("a");
        assertThat(answer.text()).isEqualTo(expected.toString());
        assertThat(answer.status()).isEqualTo(MessageStatus.COMPLETED);
    }

    @Test
    void exposesToolCallsAndPendingInputsForTheEngine() {
        started();
        apply(new AgentStreamEvent.ToolCallStart("c", "x1", "lookup", "{\"id\":"));
        apply(new AgentStreamEvent.ToolCallArgs("x1", "7}"));
        assertThat(reducer.action("x1").arguments()).isEqualTo("{\"id\":7}");
        assertThat(reducer.action("nope")).isNull();

        apply(new AgentStreamEvent.ClarifyRequested("q", "c1", "ok?", List.of(), false, "9"));
        assertThat(reducer.pendingInputs()).extracting(i -> i.inputId()).containsExactly("c1");
        assertThat(reducer.pendingInputs().get(0).resumeToken()).isEqualTo("9");
        assertThat(reducer.clarify("c1").isPending()).isTrue();
        apply(new AgentStreamEvent.ClarifyResolved("c1", AgentStreamEvent.ClarifyOutcome.ANSWERED, List.of("yes")));
        assertThat(reducer.pendingInputs()).isEmpty();
        assertThat(reducer.clarify("c1").answer()).containsExactly("yes");
    }
}
