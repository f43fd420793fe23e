package dev.parley.chat.hermes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.model.RunStatus;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A thread's memory on every Hermes line, through the engine: 0.19 loads nothing from {@code session_id},
 * so the earlier turns go as {@code conversation_history}; newer servers restore the session, so only
 * {@code session_id} goes. Either way the agent sees every earlier turn, and an edit sees its own branch.
 */
class ApiServerMemoryTest extends ApiServerTestSupport {

    private List<RunTicket> threeTurns(ChatEngine engine, String threadId) {
        List<RunTicket> turns = new ArrayList<>();
        for (String text : List.of("My name is Ada.", "I live in Lisbon.", "Where do I live, and what is my name?")) {
            RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of(text));
            awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
            turns.add(ticket);
        }
        return turns;
    }

    @Test
    void on019TheEarlierTurnsGoAsConversationHistory() {
        HermesApiStub hermes = stub(HermesApiStub.Line.V0_19);
        ChatEngine engine = engine(apiAdapter(hermes));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();

        threeTurns(engine, threadId);

        assertThat(hermes.runs()).extracting(StubRun::userTurnsSeen).containsExactly(0L, 1L, 2L);
        assertThat(hermes.runs().get(2).userTurns()).containsExactly("My name is Ada.", "I live in Lisbon.");
        assertThat(hermes.runs().get(2).history).extracting(h -> h.path("role").asText())
                .containsExactly("user", "assistant", "user", "assistant");
        assertThat(hermes.runs().get(1).body.has("conversation_history")).isTrue();
        assertThat(hermes.runs().get(0).body.has("conversation_history")).as("nothing earlier").isFalse();
        String session = hermes.runs().get(0).body.path("session_id").asText();
        assertThat(session).startsWith("parley-");
        assertThat(hermes.runs()).allSatisfy(run -> assertThat(run.body.path("session_id").asText()).isEqualTo(session));
        assertThat(store.findThread(threadId).orElseThrow().runtimeSessionId()).isEqualTo(session);
    }

    @Test
    void onNewerLinesTheSessionAloneCarriesTheMemory() {
        HermesApiStub hermes = stub(HermesApiStub.Line.NEWER);
        ChatEngine engine = engine(apiAdapter(hermes));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();

        threeTurns(engine, threadId);

        assertThat(hermes.runs()).extracting(StubRun::userTurnsSeen).containsExactly(0L, 1L, 2L);
        assertThat(hermes.runs().get(2).userTurns()).containsExactly("My name is Ada.", "I live in Lisbon.");
        assertThat(hermes.runs()).noneMatch(run -> run.body.has("conversation_history"));
        String session = hermes.runs().get(0).body.path("session_id").asText();
        assertThat(hermes.runs()).allSatisfy(run -> assertThat(run.body.path("session_id").asText()).isEqualTo(session));
    }

    @Test
    void anEditedBranchGetsExactlyItsOwnHistoryOnEveryLine() {
        for (HermesApiStub.Line line : HermesApiStub.Line.values()) {
            HermesApiStub hermes = stub(line);
            ChatEngine engine = engine(apiAdapter(hermes));
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            List<RunTicket> turns = threeTurns(engine, threadId);

            RunTicket edit = engine.editMessage(ALICE, turns.get(1).userMessageId(), StartRun.of("I live in Porto."));
            awaitRun(engine, edit.runId(), RunStatus.SUCCEEDED);
            RunTicket after = engine.startRun(ALICE, threadId, StartRun.of("Where do I live?"));
            awaitRun(engine, after.runId(), RunStatus.SUCCEEDED);

            StubRun edited = hermes.runs().get(3);
            assertThat(edited.userTurns()).as(line + ": the edit sees the turn before the edited one only")
                    .containsExactly("My name is Ada.");
            assertThat(edited.body.has("conversation_history")).as(line + ": sent, since no session covers it").isTrue();
            assertThat(edited.body.path("session_id").asText()).as(line + ": a fresh session, known to lack the start")
                    .startsWith("parley-h-").isNotEqualTo(hermes.runs().get(0).body.path("session_id").asText());
            assertThat(hermes.runs().get(4).body.path("session_id").asText()).isEqualTo(edited.body.path("session_id").asText());
            assertThat(hermes.runs().get(4).body.has("conversation_history"))
                    .as(line + ": Hermes keeps only the turns its runs added, so the history still goes").isTrue();
            assertThat(hermes.runs().get(4).userTurns()).as(line + ": the next turn follows the edited branch")
                    .containsExactly("My name is Ada.", "I live in Porto.");
        }
    }
}
