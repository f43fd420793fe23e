package dev.parley.chat.observation;

import static dev.parley.chat.testing.ScriptedModel.Reply.reply;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.agent.ModelRequest;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionApproval;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.ScriptedModel;
import io.micrometer.observation.Observation;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;

/**
 * Exports one run's trace (OpenTelemetry's in-memory exporter) and draws it as a timeline PNG: into
 * {@code target/run-trace.png} on every build; with {@code -Dparley.trace.picture=<path>} also to that path (how
 * {@code docs/images/run-trace.png} is made).
 */
class RunTracePictureTest {
    private static final HostToolSpec LOOKUP = new HostToolSpec("lookup_order", "Finds an order", "{}");
    private static final HostToolSpec REFUND = new HostToolSpec("refund", "Refunds an order", "{}");

    @Test
    void oneRunsTraceBecomesATimeline() throws Exception {
        ExecutorService agentThreads = Executors.newCachedThreadPool();
        ScriptedModel script = ScriptedModel.replying(
                reply().toolCall(0, "c1", "lookup_order", "{\"id\":9}").usage(120, 12),
                reply().toolCall(0, "c2", "refund", "{\"id\":9}").usage(180, 15),
                reply().text("Order 9 is refunded.").usage(240, 20));
        List<SpanData> spans;
        try (OtelCapture otel = new OtelCapture()) {
            RunObservations observations = new RunObservations(otel.registry, ObservationSettings.of("agent-loop"));
            AgentLoopRuntime runtime = AgentLoopRuntime.builder(observations.modelClient(slow(script, 120), "openai"))
                    .executor(observations.executor(agentThreads)).build();
            try (ChatEngine engine = ChatEngine.builder().store(new InMemoryChatStore()).runtime(runtime)
                    .hostAction(new HostAction(LOOKUP, call -> pause(60, "{\"status\":\"delivered\"}")))
                    .hostAction(new HostAction(REFUND, call -> pause(90, "{\"refunded\":true}"),
                            HostActionApproval.always(call -> "Refunds order 9")))
                    .listener(observations.engineListener()).contextPropagator(observations.contextPropagator())
                    .build()) {
                String threadId = engine.createThread("alice", new NewThread(null, "gpt-4o", null)).id();
                Observation request = Observation.createNotStarted("http.server.requests", otel.registry)
                        .contextualName("POST /parley/threads/{id}/runs").start();
                RunTicket ticket;
                try (Observation.Scope scope = request.openScope()) {
                    ticket = engine.startRun("alice", threadId, StartRun.of("refund order 9"));
                }
                request.stop();
                PendingInput asked = Await.until(() -> engine.state("alice", ticket.runId()).pendingInputs(),
                        pending -> !pending.isEmpty(), "the approval").get(0);
                Thread.sleep(400);
                engine.answer("alice", ticket.runId(), asked.inputId(), ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE));
                Await.until(() -> otel.spans().stream().anyMatch(s -> s.getName().equals("invoke_agent parley")),
                        x -> x, "the run's span");
            }
            spans = otel.spans();
        } finally {
            agentThreads.shutdownNow();
        }

        List<TraceTimeline.Row> rows = TraceTimeline.rows(spans);
        assertThat(rows).extracting(r -> r.span().getName() + "@" + r.depth()).contains("store_write@2")
                .filteredOn(row -> !row.startsWith("store_write")).containsExactly(
                "POST /parley/threads/{id}/runs@0", "invoke_agent parley@1", "chat gpt-4o@2",
                "execute_tool lookup_order@2", "chat gpt-4o@2", "execute_tool refund@2", "await_input approval@3",
                "chat gpt-4o@2");
        BufferedImage image = TraceTimeline.render(spans);
        assertThat(image.getHeight()).isGreaterThan(rows.size() * TraceTimeline.ROW);
        Path target = Path.of("target", "run-trace.png");
        Files.createDirectories(target.getParent());
        ImageIO.write(image, "png", target.toFile());
        String docs = System.getProperty("parley.trace.picture");
        if (docs != null && !docs.isBlank()) {
            ImageIO.write(image, "png", Path.of(docs).toFile());
        }
    }

    private static ModelClient slow(ModelClient delegate, long millis) {
        return new ModelClient() {
            @Override
            public dev.parley.chat.agent.ModelCall stream(ModelRequest request, dev.parley.chat.agent.ModelListener listener) {
                pause(millis, null);
                return delegate.stream(request, listener);
            }
        };
    }

    private static <T> T pause(long millis, T value) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return value;
    }
}
