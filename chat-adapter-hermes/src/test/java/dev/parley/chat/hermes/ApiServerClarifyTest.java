package dev.parley.chat.hermes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.testing.StreamCollector;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.Capability;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Clarify questions on the lines that advertise them: asked, answered on {@code /clarify}, or timed out by Hermes. */
class ApiServerClarifyTest extends ApiServerTestSupport {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RunTicket start(ChatEngine engine, HermesApiStub hermes) {
        hermes.script = body -> "clarify.sse";
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        return engine.startRun(ALICE, threadId, StartRun.of("deploy it"));
    }

    @Test
    void aQuestionIsAskedAndAMultiSelectAnswerGoesAsHermesReadsIt() throws Exception {
        HermesApiStub hermes = stub(HermesApiStub.Line.NEWER);
        ChatEngine engine = engine(apiAdapter(hermes));
        RunTicket ticket = start(engine, hermes);

        PendingInput asked = awaitPending(engine, ticket.runId(), InputKind.CLARIFY, 1).get(0);
        assertThat(asked.inputId()).isEqualTo("4f1c2a9e0b7d4c3e8a6f5d2b1c0e9a87");
        assertThat(asked.request()).isEqualTo(new ClarifyRequest("Which environment?",
                List.of("Staging (Recommended)", "Production"), true));
        engine.answer(ALICE, ticket.runId(), asked.inputId(), List.of("Staging (Recommended)", "Production"));

        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        int post = hermes.requests().indexOf("POST /v1/runs/" + hermes.runs().get(0).id + "/clarify HTTP/1.1");
        assertThat(post).isPositive();
        assertThat(JSON.readTree(hermes.bodies().get(post)).path("response").asText())
                .as("a JSON array inside the string").isEqualTo("[\"Staging (Recommended)\",\"Production\"]");
        assertThat(store.findInput(ticket.runId(), asked.inputId()).orElseThrow().state()).isEqualTo(InputState.ANSWERED);
        assertThat(((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text())
                .as("the prompt and the acknowledgement Hermes also writes as text are not the answer")
                .isEqualTo("Deploying to staging.");
    }

    @Test
    void aQuestionHermesTimesOutExpires() {
        HermesApiStub hermes = stub(HermesApiStub.Line.NEWER);
        hermes.approvalTimeout = Duration.ofMillis(300);
        ChatEngine engine = engine(apiAdapter(hermes));
        RunTicket ticket = start(engine, hermes);

        PendingInput asked = awaitPending(engine, ticket.runId(), InputKind.CLARIFY, 1).get(0);
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        assertThat(store.findInput(ticket.runId(), asked.inputId()).orElseThrow().state()).isEqualTo(InputState.EXPIRED);
    }

    @Test
    void aQuestionFromAServerThatCannotBeAnsweredHereIsNotAsked() {
        HermesApiStub hermes = stub(HermesApiStub.Line.NEWER);
        hermes.approvalTimeout = Duration.ofMillis(300);
        hermes.script = body -> "clarify.sse";

        List<AgentStreamEvent> events = StreamCollector.collect(apiAdapter(hermes, b -> b.apiServerClarify(FeatureSetting.OFF))
                .generateResponse(request()));

        assertThat(events).noneMatch(e -> e instanceof AgentStreamEvent.InputRequested);
        assertThat(events).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
    }

    @Test
    void onlyServersThatAdvertiseClarifyGetTheCapabilityUnlessPinned() {
        HermesRuntimeAdapter old = apiAdapter(stub(HermesApiStub.Line.V0_19));
        old.health();
        assertThat(old.capabilities()).doesNotContain(Capability.CLARIFY);

        HermesRuntimeAdapter pinned = apiAdapter(stub(HermesApiStub.Line.V0_19), b -> b.apiServerClarify(FeatureSetting.ON));
        pinned.health();
        assertThat(pinned.capabilities()).contains(Capability.CLARIFY);

        HermesRuntimeAdapter off = apiAdapter(stub(HermesApiStub.Line.NEWER), b -> b.apiServerClarify(FeatureSetting.OFF));
        off.health();
        assertThat(off.capabilities()).doesNotContain(Capability.CLARIFY);
    }

    @Test
    void a01917ServerOffersClarifyExactlyWhenItsInteractiveClarifyIsOn() {
        HermesApiStub off = stub(HermesApiStub.Line.V0_19_17);
        HermesRuntimeAdapter overOff = apiAdapter(off);
        overOff.health();
        assertThat(overOff.capabilities()).doesNotContain(Capability.CLARIFY).contains(Capability.APPROVALS);

        HermesApiStub on = stub(HermesApiStub.Line.V0_19_17);
        on.interactiveClarify = true;
        HermesRuntimeAdapter overOn = apiAdapter(on);
        overOn.health();
        assertThat(overOn.capabilities()).contains(Capability.CLARIFY, Capability.APPROVALS);
    }
}
