package dev.parley.chat.hermes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.ErrorCode;
import dev.parley.chat.engine.AnswerResult;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.ApprovalMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Hermes' command approvals as pending APPROVAL inputs, through the engine: what is shown, the decision on
 * {@code POST /v1/runs/{id}/approval}, several in one run in order, Hermes' own timeout, a decision taken
 * elsewhere, and approvals that carry ids.
 */
class ApiServerApprovalsTest extends ApiServerTestSupport {

    private RunTicket start(ChatEngine engine, String fixture, HermesApiStub hermes) {
        hermes.script = body -> fixture;
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        return engine.startRun(ALICE, threadId, StartRun.of("clean up"));
    }

    private AnswerResult decide(ChatEngine engine, RunTicket ticket, PendingInput input, ApprovalDecision decision) {
        return engine.answer(ALICE, ticket.runId(), input.inputId(), ApprovalAnswer.of(decision));
    }

    @ParameterizedTest
    @EnumSource(HermesApiStub.Line.class)
    void anApprovalIsAskedAsACardAndTheDecisionReachesHermes(HermesApiStub.Line line) {
        HermesApiStub hermes = stub(line);
        ChatEngine engine = engine(apiAdapter(hermes));
        RunTicket ticket = start(engine, "approval.sse", hermes);

        PendingInput asked = awaitPending(engine, ticket.runId(), InputKind.APPROVAL, 1).get(0);
        ApprovalRequest request = (ApprovalRequest) asked.request();
        assertThat(request.toolName()).isEqualTo("terminal");
        assertThat(request.arguments()).isEqualTo("{\"command\":\"rm -rf build/\"}");
        assertThat(request.description()).isEqualTo("recursive delete");
        assertThat(request.decisions()).containsExactly(ApprovalDecision.ALLOW_ONCE, ApprovalDecision.ALLOW_FOR_THREAD,
                ApprovalDecision.ALWAYS_ALLOW, ApprovalDecision.DENY);
        assertThat(request.argumentsEditable()).isFalse();
        assertThat(asked.deadline()).as("Hermes' approvals.timeout, less a margin").isNotNull();
        assertThat(engine.state(ALICE, ticket.runId()).run().status()).isEqualTo(RunStatus.WAITING_FOR_INPUT);
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.answer(ALICE, ticket.runId(), asked.inputId(),
                new ApprovalAnswer(ApprovalDecision.ALLOW_ONCE, "{\"command\":\"rm -rf /\"}")));

        assertThat(decide(engine, ticket, asked, ApprovalDecision.ALLOW_FOR_THREAD)).isEqualTo(AnswerResult.ACCEPTED);

        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(hermes.decisions()).containsExactly("session");
        ApprovalMessage card = steps(run, ApprovalMessage.class).get(0);
        assertThat(card.outcome()).isEqualTo(InputState.ANSWERED);
        assertThat(card.decision()).isEqualTo(ApprovalDecision.ALLOW_FOR_THREAD);
    }

    @Test
    void severalApprovalsInOneRunAreDecidedInTheirOrder() {
        HermesApiStub hermes = stub(HermesApiStub.Line.V0_19);
        ChatEngine engine = engine(apiAdapter(hermes));
        RunTicket ticket = start(engine, "two-approvals.sse", hermes);

        PendingInput first = awaitPending(engine, ticket.runId(), InputKind.APPROVAL, 1).get(0);
        decide(engine, ticket, first, ApprovalDecision.ALLOW_ONCE);
        PendingInput second = await(() -> engine.state(ALICE, ticket.runId()).pendingInputs(),
                inputs -> inputs.size() == 1 && !inputs.get(0).inputId().equals(first.inputId()), "the second approval")
                .get(0);
        assertThat(((ApprovalRequest) second.request()).decisions()).as("allow_permanent: false")
                .containsExactly(ApprovalDecision.ALLOW_ONCE, ApprovalDecision.ALLOW_FOR_THREAD, ApprovalDecision.DENY);
        assertCode(ErrorCode.INVALID_INPUT, () -> decide(engine, ticket, second, ApprovalDecision.ALWAYS_ALLOW));
        decide(engine, ticket, second, ApprovalDecision.DENY);

        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(hermes.decisions()).containsExactly("once", "deny");
        assertThat(steps(run, ApprovalMessage.class)).extracting(ApprovalMessage::decision)
                .containsExactly(ApprovalDecision.ALLOW_ONCE, ApprovalDecision.DENY);
    }

    @Test
    void withoutIdsHermesTakesTheOldestFirstSoALaterOneWaitsItsTurn() {
        HermesApiStub hermes = stub(HermesApiStub.Line.V0_19);
        ChatEngine engine = engine(apiAdapter(hermes));
        RunTicket ticket = start(engine, "parallel-approvals.sse", hermes);

        List<PendingInput> both = awaitPending(engine, ticket.runId(), InputKind.APPROVAL, 2);
        PendingInput build = both.stream().filter(i -> ((ApprovalRequest) i.request()).arguments().contains("build"))
                .findFirst().orElseThrow();
        PendingInput dist = both.stream().filter(i -> i != build).findFirst().orElseThrow();

        assertCode(ErrorCode.CONFLICT, () -> decide(engine, ticket, dist, ApprovalDecision.DENY));
        assertThat(hermes.decisions()).as("nothing reached Hermes").isEmpty();
        decide(engine, ticket, build, ApprovalDecision.ALLOW_ONCE);
        assertThat(decide(engine, ticket, dist, ApprovalDecision.DENY)).as("its turn now").isEqualTo(AnswerResult.ACCEPTED);

        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(hermes.decisions()).containsExactly("once", "deny");
    }

    @Test
    void approvalsThatCarryIdsAreDecidedByIdInAnyOrder() {
        HermesApiStub hermes = stub(HermesApiStub.Line.NEWER);
        ChatEngine engine = engine(apiAdapter(hermes));
        RunTicket ticket = start(engine, "approval-request-ids.sse", hermes);

        List<PendingInput> both = awaitPending(engine, ticket.runId(), InputKind.APPROVAL, 2);
        assertThat(both).extracting(PendingInput::inputId).containsExactlyInAnyOrder("9b2e", "c41d");
        decide(engine, ticket, both.stream().filter(i -> i.inputId().equals("c41d")).findFirst().orElseThrow(),
                ApprovalDecision.DENY);
        decide(engine, ticket, both.stream().filter(i -> i.inputId().equals("9b2e")).findFirst().orElseThrow(),
                ApprovalDecision.ALLOW_ONCE);

        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(hermes.decisions()).containsExactly("deny", "once");
        assertThat(steps(run, ApprovalMessage.class)).allSatisfy(card -> assertThat(card.outcome())
                .isEqualTo(InputState.ANSWERED));
    }

    @Test
    void hermesOwnTimeoutExpiresTheApprovalAndTheRunGoesOn() {
        HermesApiStub hermes = stub(HermesApiStub.Line.V0_19);
        hermes.approvalTimeout = Duration.ofMillis(800);
        ChatEngine engine = engine(apiAdapter(hermes, b -> b.apiServerApprovalTimeout(Duration.ofMillis(800))));
        RunTicket ticket = start(engine, "approval.sse", hermes);

        PendingInput asked = awaitPending(engine, ticket.runId(), InputKind.APPROVAL, 1).get(0);
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        assertThat(hermes.decisions()).isEmpty();
        assertThat(store.findInput(ticket.runId(), asked.inputId()).orElseThrow().state()).isEqualTo(InputState.EXPIRED);
        assertThat(steps(run, ApprovalMessage.class).get(0).outcome()).isEqualTo(InputState.EXPIRED);
        assertCode(ErrorCode.CONFLICT, () -> decide(engine, ticket, asked, ApprovalDecision.ALLOW_ONCE));
    }

    @Test
    void aDecisionTakenElsewhereWithdrawsTheCard() throws Exception {
        HermesApiStub hermes = stub(HermesApiStub.Line.V0_19);
        ChatEngine engine = engine(apiAdapter(hermes));
        RunTicket ticket = start(engine, "approval.sse", hermes);
        PendingInput asked = awaitPending(engine, ticket.runId(), InputKind.APPROVAL, 1).get(0);

        HttpResponse<String> other = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create(hermes.baseUrl() + "/v1/runs/" + hermes.runs().get(0).id + "/approval"))
                .header("Authorization", "Bearer " + HermesApiStub.KEY)
                .POST(HttpRequest.BodyPublishers.ofString("{\"choice\": \"deny\"}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(other.statusCode()).isEqualTo(200);

        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(store.findInput(ticket.runId(), asked.inputId()).orElseThrow().state()).isEqualTo(InputState.CANCELLED);
        assertThat(steps(run, ApprovalMessage.class).get(0).outcome()).isEqualTo(InputState.CANCELLED);
    }

    @Test
    void a01917ApprovalIsNamedByItsApprovalIdAndStillDecidedOldestFirst() {
        HermesApiStub hermes = stub(HermesApiStub.Line.V0_19_17);
        ChatEngine engine = engine(apiAdapter(hermes));
        RunTicket ticket = start(engine, "parallel-approvals.sse", hermes);

        List<PendingInput> both = awaitPending(engine, ticket.runId(), InputKind.APPROVAL, 2);
        assertThat(both).extracting(PendingInput::inputId)
                .containsExactlyInAnyOrder("approval_3f9a1c2e7b", "approval_c05d84e1a2");
        PendingInput build = both.stream().filter(i -> i.inputId().equals("approval_3f9a1c2e7b")).findFirst().orElseThrow();
        PendingInput dist = both.stream().filter(i -> i != build).findFirst().orElseThrow();
        assertThat(((ApprovalRequest) build.request()).arguments()).contains("rm -rf build/");

        assertCode(ErrorCode.CONFLICT, () -> decide(engine, ticket, dist, ApprovalDecision.DENY));
        assertThat(hermes.decisions()).as("0.19.17 still resolves the oldest: nothing was sent").isEmpty();
        decide(engine, ticket, build, ApprovalDecision.ALLOW_ONCE);
        decide(engine, ticket, dist, ApprovalDecision.DENY);

        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(hermes.decisions()).containsExactly("once", "deny");
        assertThat(hermes.bodies().stream().filter(b -> b.contains("\"choice\"")))
                .containsExactly("{\"choice\":\"once\"}", "{\"choice\":\"deny\"}");
        assertThat(steps(run, ApprovalMessage.class)).extracting(ApprovalMessage::decision)
                .containsExactlyInAnyOrder(ApprovalDecision.ALLOW_ONCE, ApprovalDecision.DENY);
    }
}
