package dev.parley.chat.hermes;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalToJson;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.AgentStreamEvent.InputOutcome;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.ApprovalReply;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.StreamCollector;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The approvals addition of the Bridge protocol (section 10): frames to pending inputs, decisions, expiry. */
class BridgeApprovalsTest extends AdapterTestSupport {
    private static final String TOKEN = "tok-secret-123456";
    private static final List<ApprovalDecision> ONCE_OR_DENY = List.of(ApprovalDecision.ALLOW_ONCE, ApprovalDecision.DENY);

    private static ApprovalReply reply(ApprovalDecision decision) {
        return new ApprovalReply("r1", "a1", decision, null);
    }

    // ------------------------------------------------------------------ frames

    @Test
    void approvalFramesBecomePendingInputsAndTheirBridgeSideEnds() {
        wiremock.stubFor(post("/run").willReturn(sse("bridge/approvals.sse")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().generateResponse(request()));

        assertThat(events).containsExactly(
                new AgentStreamEvent.RuntimeSession("hs-1", false),
                new AgentStreamEvent.ThinkingDelta("r1:thinking:2", "I will clean up."),
                new AgentStreamEvent.ToolCallStart("r1:tool:call_1", "call_1", "terminal", "{\"command\":\"rm -rf build/tmp\"}"),
                new AgentStreamEvent.InputRequested("r1:approval:a1", "a1", new ApprovalRequest("terminal",
                        "{\"command\":\"rm -rf build/tmp\"}", "recursive delete", List.of(ApprovalDecision.ALLOW_ONCE,
                        ApprovalDecision.ALLOW_FOR_THREAD, ApprovalDecision.ALWAYS_ALLOW, ApprovalDecision.DENY), false),
                        Instant.ofEpochMilli(1795000060004L), "4"),
                new AgentStreamEvent.ToolCallResult("r1:result:call_1", "call_1", "removed 3 files", false),
                new AgentStreamEvent.ThinkingDelta("r1:thinking:7", "Now the cache."),
                new AgentStreamEvent.ToolCallStart("r1:tool:call_2", "call_2", "terminal", "{\"command\":\"rm -rf cache\"}"),
                new AgentStreamEvent.InputRequested("r1:approval:a2", "a2", new ApprovalRequest("terminal",
                        "{\"command\":\"rm -rf cache\"}", "Hermes asks before it runs this command", ONCE_OR_DENY, false),
                        null, "9"),
                new AgentStreamEvent.InputResolved("a2", InputOutcome.EXPIRED, null),
                new AgentStreamEvent.ToolCallResult("r1:result:call_2", "call_2", "BLOCKED: the approval timed out", true),
                new AgentStreamEvent.ToolCallStart("r1:tool:call_3", "call_3", "terminal", "{\"command\":\"git clean -fdx\"}"),
                new AgentStreamEvent.InputRequested("r1:approval:a3", "a3", new ApprovalRequest("terminal",
                        "{\"command\":\"git clean -fdx\"}", "delete untracked files", ONCE_OR_DENY, false), null, "13"),
                new AgentStreamEvent.InputResolved("a3", InputOutcome.CANCELLED, null),
                new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "cancelled"));
    }

    @Test
    void anApprovalWithoutAnIdIsAProtocolError() {
        wiremock.stubFor(post("/run").willReturn(aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream")
                .withBody(frame(1, "run_started", "\"hermesSessionId\":\"hs-1\",\"resumedSession\":false")
                        + frame(2, "approval_request", "\"command\":\"rm -rf x\",\"choices\":[\"once\",\"deny\"]"))));
        wiremock.stubFor(post("/runs/r1/cancel").willReturn(aResponse().withStatus(202).withBody("{\"status\":\"cancelling\"}")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().generateResponse(request()));

        assertThat(events).last().isEqualTo(new AgentStreamEvent.RunFailed("PROTOCOL_ERROR",
                "approval_request frame 2 has no approvalId"));
        wiremock.verify(postRequestedFor(urlEqualTo("/runs/r1/cancel")));
    }

    @Test
    void aCommandOrDescriptionThatEchoesASecretIsMasked() {
        wiremock.stubFor(post("/run").willReturn(aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream")
                .withBody(frame(1, "approval_request", "\"approvalId\":\"a1\",\"command\":\"curl -H 'Bearer " + TOKEN
                        + "' x\",\"description\":\"sends " + TOKEN + "\",\"choices\":[\"once\",\"deny\"]")
                        + frame(2, "done", "\"status\":\"completed\""))));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter(b -> b.bearerToken(TOKEN)).generateResponse(request()));

        ApprovalRequest asked = (ApprovalRequest) ((AgentStreamEvent.InputRequested) events.get(0)).request();
        assertThat(asked.arguments()).isEqualTo("{\"command\":\"curl -H 'Bearer ****' x\"}");
        assertThat(asked.description()).isEqualTo("sends ****");
    }

    @Test
    void aReattachedRunWhoseApprovalExpiredMeanwhileClosesIt() {
        wiremock.stubFor(get("/runs/r1").willReturn(aResponse().withStatus(200).withHeader("Content-Type", "application/json")
                .withBody("{\"runId\":\"r1\",\"status\":\"running\",\"lastSeq\":8}")));
        wiremock.stubFor(get("/runs/r1/events?after=4").willReturn(sse("bridge/after-4-expired.sse")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().reattach(request("hs-1", List.of()), "4"));

        assertThat(events).containsExactly(
                new AgentStreamEvent.InputResolved("a1", InputOutcome.EXPIRED, null),
                new AgentStreamEvent.ToolCallResult("r1:result:call_1", "call_1", "BLOCKED: the approval timed out", true),
                new AgentStreamEvent.TextFinal("r1:answer", "Nobody approved it in time."),
                new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
    }

    // ------------------------------------------------------------------ decisions

    @Test
    void eachDecisionIsPostedUnderItsHermesName() {
        wiremock.stubFor(post("/runs/r1/approval").willReturn(okJson("{\"accepted\":true,\"replayed\":false}")));
        HermesRuntimeAdapter adapter = adapter(b -> b.bearerToken(TOKEN));

        adapter.answerApproval(reply(ApprovalDecision.ALLOW_ONCE));
        adapter.answerApproval(reply(ApprovalDecision.ALLOW_FOR_THREAD));
        adapter.answerApproval(reply(ApprovalDecision.ALWAYS_ALLOW));
        adapter.answerApproval(reply(ApprovalDecision.DENY));

        for (String choice : List.of("once", "session", "always", "deny")) {
            wiremock.verify(postRequestedFor(urlEqualTo("/runs/r1/approval"))
                    .withHeader("Authorization", com.github.tomakehurst.wiremock.client.WireMock.equalTo("Bearer " + TOKEN))
                    .withRequestBody(equalToJson("{\"approvalId\":\"a1\",\"decision\":\"" + choice + "\"}")));
        }
    }

    @Test
    void theBridgesRefusalsBecomeConflictNotFoundAndInvalidInput() {
        HermesRuntimeAdapter adapter = adapter();
        wiremock.stubFor(post("/runs/r1/approval").willReturn(errorBody(409, "APPROVAL_NOT_PENDING", "decided otherwise")));
        assertThatThrownBy(() -> adapter.answerApproval(reply(ApprovalDecision.DENY)))
                .isInstanceOfSatisfying(ChatException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT);
                    assertThat(e.getMessage()).contains("APPROVAL_NOT_PENDING").contains("decided otherwise");
                });
        wiremock.stubFor(post("/runs/r1/approval").willReturn(errorBody(404, "APPROVAL_NOT_FOUND", "never asked")));
        assertThatThrownBy(() -> adapter.answerApproval(reply(ApprovalDecision.ALLOW_ONCE)))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
        wiremock.stubFor(post("/runs/r1/approval").willReturn(errorBody(400, "INVALID_REQUEST", "always is not offered")));
        assertThatThrownBy(() -> adapter.answerApproval(reply(ApprovalDecision.ALWAYS_ALLOW)))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT));
    }

    @Test
    void editedArgumentsAreRefusedBeforeAnyCall() {
        assertThatThrownBy(() -> adapter().answerApproval(new ApprovalReply("r1", "a1", ApprovalDecision.ALLOW_ONCE,
                "{\"command\":\"ls\"}"))).isInstanceOfSatisfying(ChatException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT));
        HermesRuntimeAdapter apiServer = adapter(b -> b.transport(HermesTransport.API_SERVER));
        assertThatThrownBy(() -> apiServer.answerApproval(new ApprovalReply("r1", "a1", ApprovalDecision.ALLOW_ONCE,
                "{\"command\":\"ls\"}"))).isInstanceOfSatisfying(ChatException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT));
        assertThat(wiremock.getAllServeEvents()).isEmpty();
    }

    // ------------------------------------------------------------------ expiry

    @Test
    void anExpiryIsToldToTheBridgeAndNeverFails() {
        HermesRuntimeAdapter adapter = adapter();
        wiremock.stubFor(post("/runs/r1/approval/expire").willReturn(okJson("{\"accepted\":true,\"replayed\":false}")));
        adapter.inputExpired("r1", "a1");
        wiremock.verify(postRequestedFor(urlEqualTo("/runs/r1/approval/expire"))
                .withRequestBody(equalToJson("{\"approvalId\":\"a1\"}")));

        wiremock.stubFor(post(urlPathMatching("/runs/r1/approval/expire")).willReturn(
                errorBody(409, "APPROVAL_NOT_PENDING", "decided already")));
        assertThatCode(() -> adapter.inputExpired("r1", "a1")).doesNotThrowAnyException();
        wiremock.stubFor(post(urlPathMatching("/runs/r1/approval/expire")).willReturn(aResponse().withStatus(500)));
        assertThatCode(() -> adapter.inputExpired("r1", "a1")).doesNotThrowAnyException();
        assertThatCode(() -> adapter("http://127.0.0.1:" + closedPort(), b -> { }).inputExpired("r1", "a1"))
                .doesNotThrowAnyException();
    }

    @Test
    void theBridgesReportOfAnExpiryTheHostSentIsNotPassedOnAgain() throws Exception {
        CountDownLatch toldToExpire = new CountDownLatch(1);
        try (RawServer bridge = new RawServer(exchange -> {
            if (exchange.is("POST", "/runs/r1/approval/expire")) {
                exchange.json(200, "{\"accepted\":true,\"replayed\":false}");
                toldToExpire.countDown();
                return;
            }
            exchange.streamHead();
            exchange.write(frame(1, "run_started", "\"hermesSessionId\":\"hs-1\",\"resumedSession\":false")
                    + frame(2, "approval_request", "\"approvalId\":\"a1\",\"command\":\"rm -rf x\",\"choices\":[\"once\","
                            + "\"deny\"],\"expiresAt\":1"));
            if (!toldToExpire.await(10, TimeUnit.SECONDS)) {
                throw new AssertionError("the adapter did not tell the Bridge");
            }
            exchange.write(frame(3, "approval_resolved", "\"approvalId\":\"a1\",\"outcome\":\"expired\",\"decision\":null")
                    + frame(4, "tool_result", "\"toolCallId\":\"c1\",\"toolName\":\"terminal\",\"result\":\"BLOCKED\","
                            + "\"isError\":true")
                    + frame(5, "done", "\"status\":\"completed\""));
        })) {
            HermesRuntimeAdapter adapter = adapter(bridge.baseUrl(), b -> { });
            StreamCollector stream = StreamCollector.unbounded();
            adapter.generateResponse(request()).subscribe(stream);
            Await.until(stream::events, events -> events.stream().anyMatch(AgentStreamEvent.InputRequested.class::isInstance),
                    "the approval");

            adapter.inputExpired("r1", "a1");

            List<AgentStreamEvent> events = stream.awaitDone().assertContract().events();
            assertThat(events).noneMatch(AgentStreamEvent.InputResolved.class::isInstance);
            assertThat(events).contains(new AgentStreamEvent.ToolCallResult("r1:result:c1", "c1", "BLOCKED", true));
        }
    }

    private static com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder okJson(String json) {
        return aResponse().withStatus(200).withHeader("Content-Type", "application/json").withBody(json);
    }
}
