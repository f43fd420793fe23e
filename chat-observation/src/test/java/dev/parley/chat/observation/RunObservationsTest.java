package dev.parley.chat.observation;

import static dev.parley.chat.observation.ParleyObservations.*;
import static dev.parley.chat.testing.ScriptedModel.Reply.reply;
import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionApproval;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.ScriptedModel;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A run of the agent loop that calls a host action needing approval, observed through Micrometer: the
 * observations and their keys (test registry), and the spans and their parents as OpenTelemetry exports them.
 */
class RunObservationsTest {
    private static final String ALICE = "alice";
    private static final HostToolSpec REFUND = new HostToolSpec("refund", "Refunds an order", "{}");

    private final ExecutorService agentThreads = Executors.newCachedThreadPool();

    @AfterEach
    void stopThreads() {
        agentThreads.shutdownNow();
    }

    /** The scripted model: a tool call, then an answer, each with usage. */
    private static ScriptedModel model() {
        return ScriptedModel.replying(reply().toolCall(0, "call_1", "refund", "{\"order\":9}").usage(20, 5),
                reply().text("Refunded.").usage(30, 4));
    }

    private ChatEngine engine(ObservationRegistry registry, ObservationSettings settings) {
        return engine(registry, settings, new InMemoryChatStore(), model());
    }

    private ChatEngine engine(ObservationRegistry registry, ObservationSettings settings, InMemoryChatStore store,
            ScriptedModel model) {
        return engine(new RunObservations(registry, settings), store, model);
    }

    private ChatEngine engine(RunObservations observations, InMemoryChatStore store, ScriptedModel model) {
        AgentLoopRuntime runtime = AgentLoopRuntime.builder(observations.modelClient(model, "openai"))
                .executor(observations.executor(agentThreads)).build();
        return ChatEngine.builder().store(store).runtime(runtime)
                .hostAction(new HostAction(REFUND, call -> "{\"refunded\":true}",
                        HostActionApproval.always(call -> "Refunds order 9")))
                .listener(observations.engineListener())
                .contextPropagator(observations.contextPropagator())
                .build();
    }

    /** Starts a run, allows its refund, and waits for its end. */
    private static Run runWithApproval(ChatEngine engine) {
        String threadId = engine.createThread(ALICE, new NewThread(null, "gpt-test", null)).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("please refund order 9"));
        PendingInput asked = Await.until(() -> engine.state(ALICE, ticket.runId()).pendingInputs(),
                pending -> !pending.isEmpty(), "the approval").get(0);
        engine.answer(ALICE, ticket.runId(), asked.inputId(), ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE));
        return Await.until(() -> engine.state(ALICE, ticket.runId()).run(), r -> r.status().isTerminal(), "the end");
    }

    /** Every observation the registry stops, in order. */
    private static List<Observation.Context> stoppedContexts(ObservationRegistry registry) {
        List<Observation.Context> stopped = new CopyOnWriteArrayList<>();
        registry.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public void onStop(Observation.Context context) {
                stopped.add(context);
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }
        });
        return stopped;
    }

    /** The run's observation ends as the engine ends the run, which may be just after its end is visible. */
    private static void awaitRunStopped(List<Observation.Context> stopped) {
        Await.until(() -> stopped.stream().anyMatch(c -> RUN.equals(c.getName())), x -> x, "the run's observation");
    }

    @Test
    void aRunItsModelCallsItsToolCallAndItsWaitAreObservedWithOwnerSafeKeys() {
        TestObservationRegistry registry = TestObservationRegistry.create();
        List<Observation.Context> stopped = stoppedContexts(registry);
        ObservationSettings settings = ObservationSettings.of("agent-loop").withHostActions(Set.of("refund"));
        Run run;
        try (ChatEngine engine = engine(registry, settings)) {
            run = runWithApproval(engine);
            awaitRunStopped(stopped);
        }
        assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);

        assertThat(registry).hasObservationWithNameEqualTo(RUN).that()
                .hasContextualNameEqualTo("invoke_agent parley")
                .hasLowCardinalityKeyValue(OPERATION, "invoke_agent")
                .hasLowCardinalityKeyValue(RUNTIME, "agent-loop")
                .hasLowCardinalityKeyValue(REQUEST_MODEL, "gpt-test")
                .hasLowCardinalityKeyValue(STATUS, "SUCCEEDED")
                .hasHighCardinalityKeyValue(RUN_ID, run.id())
                .hasHighCardinalityKeyValue(THREAD_ID, run.threadId())
                .hasHighCardinalityKeyValue(INPUT_TOKENS, "50")
                .hasHighCardinalityKeyValue(OUTPUT_TOKENS, "9")
                .doesNotHaveHighCardinalityKeyValueWithKey(RUN_INPUT)
                .doesNotHaveParentObservation()
                .hasBeenStarted().hasBeenStopped();
        assertThat(registry).hasNumberOfObservationsWithNameEqualTo(MODEL_CALL, 2);
        assertThat(registry).hasObservationWithNameEqualTo(MODEL_CALL).that()
                .hasContextualNameEqualTo("chat gpt-test")
                .hasLowCardinalityKeyValue(PROVIDER, "openai")
                .hasParentObservationContextMatching(parent -> RUN.equals(parent.getName()))
                .hasBeenStopped();
        assertThat(registry).hasObservationWithNameEqualTo(TOOL_CALL).that()
                .hasContextualNameEqualTo("execute_tool refund")
                .hasLowCardinalityKeyValue(TOOL_NAME, "refund")
                .hasLowCardinalityKeyValue(TOOL_KIND, "host")
                .hasLowCardinalityKeyValue(OUTCOME, "success")
                .doesNotHaveHighCardinalityKeyValueWithKey(TOOL_ARGUMENTS)
                .hasParentObservationContextMatching(parent -> RUN.equals(parent.getName()))
                .hasBeenStopped();
        assertThat(registry).hasObservationWithNameEqualTo(INPUT_WAIT).that()
                .hasLowCardinalityKeyValue(INPUT_KIND, "approval")
                .hasLowCardinalityKeyValue(OUTCOME, "answered")
                .hasParentObservationContextMatching(parent -> TOOL_CALL.equals(parent.getName()))
                .hasBeenStopped();
        assertThat(stopped).filteredOn(c -> !STORE_WRITE.equals(c.getName())).hasSize(5);
        assertThat(stopped).filteredOn(c -> STORE_WRITE.equals(c.getName()))
                .anyMatch(c -> c.getParentObservation() != null
                        && RUN.equals(c.getParentObservation().getContextView().getName()))
                .allMatch(c -> "success".equals(c.getLowCardinalityKeyValue(OUTCOME).getValue()));
        List<String> keys = stopped.stream().flatMap(c -> c.getAllKeyValues().stream())
                .map(kv -> kv.getKey() + "=" + kv.getValue()).toList();
        assertThat(keys).noneMatch(kv -> kv.contains(ALICE)).noneMatch(kv -> kv.contains("refund order 9"));
    }

    @Test
    void contentIsRecordedOnlyWhenAskedFor() {
        TestObservationRegistry registry = TestObservationRegistry.create();
        List<Observation.Context> stopped = stoppedContexts(registry);
        try (ChatEngine engine = engine(registry, ObservationSettings.of("agent-loop").withIncludeContent(true))) {
            runWithApproval(engine);
            awaitRunStopped(stopped);
        }
        assertThat(registry).hasObservationWithNameEqualTo(RUN).that()
                .hasHighCardinalityKeyValue(RUN_INPUT, "please refund order 9");
        assertThat(registry).hasObservationWithNameEqualTo(TOOL_CALL).that()
                .hasLowCardinalityKeyValue(TOOL_KIND, "runtime")
                .hasHighCardinalityKeyValue(TOOL_ARGUMENTS, "{\"order\":9}")
                .hasHighCardinalityKeyValue(TOOL_RESULT, "{\"refunded\":true}");
    }

    @Test
    void spansNestUnderTheRequestThatStartedTheRun() {
        try (OtelCapture otel = new OtelCapture(); ChatEngine engine = engine(otel.registry, ObservationSettings.of("agent-loop"))) {
            Observation request = Observation.start("http.server.requests", otel.registry);
            String threadId = engine.createThread(ALICE, new NewThread(null, "gpt-test", null)).id();
            RunTicket ticket;
            try (Observation.Scope scope = request.openScope()) {
                ticket = engine.startRun(ALICE, threadId, StartRun.of("please refund order 9"));
            }
            request.stop();
            PendingInput asked = Await.until(() -> engine.state(ALICE, ticket.runId()).pendingInputs(),
                    pending -> !pending.isEmpty(), "the approval").get(0);
            engine.answer(ALICE, ticket.runId(), asked.inputId(), ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE));
            Await.until(() -> otel.spans().stream().anyMatch(s -> s.getName().equals("invoke_agent parley")), x -> x,
                    "the run's span");

            SpanData http = otel.span("http.server.requests");
            SpanData run = otel.span("invoke_agent parley");
            SpanData tool = otel.span("execute_tool refund");
            SpanData wait = otel.span("await_input approval");
            List<SpanData> models = otel.spans().stream().filter(s -> s.getName().equals("chat gpt-test")).toList();

            assertThat(otel.spans()).extracting(SpanData::getTraceId).containsOnly(http.getTraceId());
            assertThat(run.getParentSpanId()).isEqualTo(http.getSpanId());
            assertThat(models).hasSize(2).allSatisfy(m -> assertThat(m.getParentSpanId()).isEqualTo(run.getSpanId()));
            assertThat(tool.getParentSpanId()).isEqualTo(run.getSpanId());
            assertThat(wait.getParentSpanId()).isEqualTo(tool.getSpanId());
            assertThat(run.getKind()).isEqualTo(SpanKind.INTERNAL);
            assertThat(run.getStatus().getStatusCode()).isNotEqualTo(StatusCode.ERROR);
            assertThat(run.getAttributes().get(AttributeKey.stringKey(INPUT_TOKENS))).isEqualTo("50");
            assertThat(run.getAttributes().get(AttributeKey.stringKey(OPERATION))).isEqualTo("invoke_agent");
            assertThat(wait.getStartEpochNanos()).isGreaterThanOrEqualTo(tool.getStartEpochNanos());
            assertThat(wait.getEndEpochNanos()).isLessThanOrEqualTo(tool.getEndEpochNanos());
            assertThat(run.getEndEpochNanos()).isGreaterThanOrEqualTo(tool.getEndEpochNanos());
        }
    }

    /**
     * A run this engine follows again after a restart (here one waiting for an approval, continued from the store)
     * is traced too, in a trace of its own: the engine tells the listener it starts working here.
     */
    @Test
    void aRunFollowedAgainAfterARestartIsTracedInATraceOfItsOwn() {
        InMemoryChatStore store = new InMemoryChatStore();
        ScriptedModel model = model();
        String runId;
        try (OtelCapture before = new OtelCapture(); ChatEngine first = engine(before.registry,
                ObservationSettings.of("agent-loop"), store, model)) {
            String threadId = first.createThread(ALICE, new NewThread(null, "gpt-test", null)).id();
            RunTicket ticket = first.startRun(ALICE, threadId, StartRun.of("please refund order 9"));
            runId = ticket.runId();
            Await.until(() -> first.state(ALICE, ticket.runId()).pendingInputs(), pending -> !pending.isEmpty(),
                    "the approval");
        }
        try (OtelCapture otel = new OtelCapture(); ChatEngine second = engine(otel.registry,
                ObservationSettings.of("agent-loop"), store, model)) {
            PendingInput asked = Await.until(() -> second.state(ALICE, runId).pendingInputs(),
                    pending -> !pending.isEmpty(), "the approval, waited for again").get(0);
            second.answer(ALICE, runId, asked.inputId(), ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE));
            Await.until(() -> second.state(ALICE, runId).run().status(), RunStatus::isTerminal, "the end");
            Await.until(() -> otel.spans().stream().anyMatch(s -> s.getName().equals("invoke_agent parley")), x -> x,
                    "the recovered run's span");

            SpanData run = otel.span("invoke_agent parley");
            assertThat(run.getAttributes().get(AttributeKey.stringKey(RUN_ID))).isEqualTo(runId);
            assertThat(run.getAttributes().get(AttributeKey.stringKey(STATUS))).isEqualTo("SUCCEEDED");
            assertThat(run.getParentSpanContext().isValid()).as("a trace of its own").isFalse();
            SpanData answer = otel.span("chat gpt-test");
            assertThat(answer.getParentSpanId()).as("the model call after the restart").isEqualTo(run.getSpanId());
        }
    }

    /**
     * With the start's trace headers kept ({@link TraceHeaders}), a run followed again after a restart continues
     * the trace of the request that started it: its span is a child of that request's span.
     */
    @Test
    void aRunFollowedAgainAfterARestartContinuesTheTraceOfTheRequestThatStartedIt() {
        InMemoryChatStore store = new InMemoryChatStore();
        ScriptedModel model = model();
        String runId;
        SpanData request;
        try (OtelCapture before = new OtelCapture(); ChatEngine first = engine(new RunObservations(before.registry,
                ObservationSettings.of("agent-loop"), TraceHeaders.of(before.tracer, before.propagator)), store, model)) {
            String threadId = first.createThread(ALICE, new NewThread(null, "gpt-test", null)).id();
            Observation http = Observation.start("http.server.requests", before.registry);
            try (Observation.Scope scope = http.openScope()) {
                runId = first.startRun(ALICE, threadId, StartRun.of("please refund order 9")).runId();
            }
            http.stop();
            String started = runId;
            Await.until(() -> first.state(ALICE, started).pendingInputs(), pending -> !pending.isEmpty(), "the approval");
            request = before.span("http.server.requests");
        }
        assertThat(store.findStartContext(runId)).containsOnlyKeys("traceparent");

        try (OtelCapture otel = new OtelCapture(); ChatEngine second = engine(new RunObservations(otel.registry,
                ObservationSettings.of("agent-loop"), TraceHeaders.of(otel.tracer, otel.propagator)), store, model)) {
            String resumed = runId;
            PendingInput asked = Await.until(() -> second.state(ALICE, resumed).pendingInputs(),
                    pending -> !pending.isEmpty(), "the approval, waited for again").get(0);
            second.answer(ALICE, runId, asked.inputId(), ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE));
            Await.until(() -> second.state(ALICE, resumed).run().status(), RunStatus::isTerminal, "the end");
            Await.until(() -> otel.spans().stream().anyMatch(s -> s.getName().equals("invoke_agent parley")), x -> x,
                    "the recovered run's span");

            SpanData run = otel.span("invoke_agent parley");
            assertThat(run.getTraceId()).as("the original request's trace").isEqualTo(request.getTraceId());
            assertThat(run.getParentSpanId()).isEqualTo(request.getSpanId());
            assertThat(run.getKind()).isEqualTo(SpanKind.CONSUMER);
            assertThat(otel.span("chat gpt-test").getParentSpanId()).isEqualTo(run.getSpanId());
        }
    }
}
