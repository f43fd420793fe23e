package dev.parley.chat.hermes;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalToJson;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.testing.StreamCollector;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.runtime.RuntimeHealth;
import dev.parley.chat.runtime.ToolResult;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Clarify answers, cancel, tool results, re-attach after a restart, health, models and capabilities. */
class ControlCallsTest extends AdapterTestSupport {

    @Test
    void aClarifyAnswerIsPostedAsAList() {
        wiremock.stubFor(post("/runs/r1/clarify").willReturn(okJson("{\"accepted\":true,\"replayed\":false}")));

        adapter().answerClarify(new ClarifyReply("r1", "c1", List.of("Rome")));

        wiremock.verify(postRequestedFor(urlEqualTo("/runs/r1/clarify"))
                .withRequestBody(equalToJson("{\"clarifyId\":\"c1\",\"answer\":[\"Rome\"]}")));
    }

    @Test
    void aClarifyThatNoLongerWaitsIsAConflict() {
        wiremock.stubFor(post("/runs/r1/clarify").willReturn(errorBody(409, "CLARIFY_NOT_PENDING", "already answered")));

        assertThatThrownBy(() -> adapter().answerClarify(new ClarifyReply("r1", "c1", List.of("Paris"))))
                .isInstanceOfSatisfying(ChatException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT);
                    assertThat(e.getMessage()).contains("CLARIFY_NOT_PENDING").contains("already answered");
                });
    }

    @Test
    void cancelIsPostedAndAnUnknownRunIsNotFound() {
        wiremock.stubFor(post("/runs/r1/cancel").willReturn(aResponse().withStatus(202).withBody("{\"status\":\"cancelling\"}")));
        wiremock.stubFor(post("/runs/nope/cancel").willReturn(errorBody(404, "RUN_NOT_FOUND", "no such run")));
        HermesRuntimeAdapter adapter = adapter();

        adapter.cancel("r1");

        wiremock.verify(postRequestedFor(urlEqualTo("/runs/r1/cancel")));
        assertThatThrownBy(() -> adapter.cancel("nope"))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
    }

    @Test
    void aToolResultIsPosted() {
        wiremock.stubFor(post("/runs/r1/tool-result").willReturn(okJson("{\"accepted\":true,\"replayed\":false}")));

        adapter().submitToolResult(new ToolResult("r1", "h1", "shipped", false));

        wiremock.verify(postRequestedFor(urlEqualTo("/runs/r1/tool-result"))
                .withRequestBody(equalToJson("{\"toolCallId\":\"h1\",\"result\":\"shipped\",\"isError\":false}")));
    }

    @Test
    void reattachAfterARestartContinuesAfterTheToken() {
        wiremock.stubFor(get("/runs/r1").willReturn(okJson("{\"runId\":\"r1\",\"status\":\"waiting_for_clarification\","
                + "\"lastSeq\":9}")));
        wiremock.stubFor(get("/runs/r1/events?after=9").willReturn(sse("bridge/after-9.sse")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().reattach(request("hs-1", List.of()), "9"));

        assertThat(events).containsExactly(
                new AgentStreamEvent.TextDelta("r1:answer", "Rome it is"),
                new AgentStreamEvent.TextFinal("r1:answer", "Rome it is"),
                new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        wiremock.verify(getRequestedFor(urlEqualTo("/runs/r1/events?after=9")));
    }

    @Test
    void reattachToARunTheBridgeForgotEndsItInterruptedAndATokenThatIsNotASeqIsRefused() {
        wiremock.stubFor(get("/runs/r1").willReturn(errorBody(404, "RUN_NOT_FOUND", "no such run")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().reattach(request(), "9"));

        assertThat(events).singleElement().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.INTERRUPTED,
                "the host stopped while the run was active, and the Hermes Bridge no longer knows run r1"));
        for (String token : List.of("not-a-seq", "-1", "9;thinking=x", "9;thinking=10", "")) {
            assertThatThrownBy(() -> adapter().reattach(request(), token)).as(token)
                    .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT));
        }
    }

    @Test
    void healthReportsTheBridgeAndItsProtocol() {
        wiremock.stubFor(get("/health").willReturn(okJson("{\"status\":\"ok\",\"protocol\":\"hermes-bridge/1\",\"activeRuns\":2}")));
        assertThat(adapter(b -> b.bridgeAttachments(AttachmentSupport.NONE)).health()).isEqualTo(RuntimeHealth.up(
                "Hermes Bridge at 127.0.0.1:" + wiremock.port() + " is up (hermes-bridge/1, 2 active runs)"));
        assertThat(adapter().health().detail()).as("files declared to a Bridge that takes none").endsWith(
                "2 active runs; it takes no attachments, so messages with files fail (see HermesConfig.bridgeAttachments))");

        wiremock.stubFor(get("/health").willReturn(okJson("{\"status\":\"ok\",\"protocol\":\"hermes-bridge/2\"}")));
        assertThat(adapter().health().healthy()).isFalse();
        assertThat(adapter().health().detail()).contains("hermes-bridge/2");

        wiremock.stubFor(get("/health").willReturn(aResponse().withStatus(503)));
        assertThat(adapter().health().detail()).endsWith("answered HTTP 503");

        RuntimeHealth unreachable = adapter("http://127.0.0.1:" + closedPort(), b -> { }).health();
        assertThat(unreachable.healthy()).isFalse();
        assertThat(unreachable.detail()).endsWith("is unreachable");
    }

    @Test
    void modelsComeFromTheResolverWithoutCredentials() {
        HermesRuntimeAdapter adapter = adapter(b -> b.modelResolver(ModelResolver.of(List.of(
                new HermesModel("fast", "openai/gpt-5-mini", "openrouter", null, "sk-abcdefgh"),
                HermesModel.named("hermes-4")))));

        assertThat(adapter.models()).extracting(m -> m.id() + "|" + m.name() + "|" + m.provider())
                .containsExactly("fast|openai/gpt-5-mini|openrouter", "hermes-4|hermes-4|null");
        assertThatThrownBy(() -> adapter.generateResponse(new dev.parley.chat.runtime.RunRequest("t1", "r1", "alice", "a",
                "hi", null, "unknown-model", null, null, null, null)))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT));
    }

    @Test
    void theBridgeTransportDeclaresEveryCapability() {
        assertThat(adapter().capabilities()).containsExactlyInAnyOrder(Capability.CLARIFY, Capability.APPROVALS,
                Capability.CANCEL, Capability.HOST_TOOLS, Capability.REATTACH);
    }

    private static com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder okJson(String json) {
        return aResponse().withStatus(200).withHeader("Content-Type", "application/json").withBody(json);
    }
}
