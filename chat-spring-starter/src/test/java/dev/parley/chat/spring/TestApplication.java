package dev.parley.chat.spring;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionApproval;
import dev.parley.chat.engine.HostActionCall;
import dev.parley.chat.engine.SuggestionProvider;
import dev.parley.chat.model.Suggestions;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.ModelOption;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.runtime.SkillOption;
import dev.parley.chat.runtime.ToolResult;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * A host application for the starter's HTTP tests: a scripted runtime that plays by keyword, and host
 * actions that ask for approval and record what they ran with: {@code refund_order} (its arguments
 * editable) and {@code quick_refund} (its approval expires at once). "many tools 300" makes 300 tool calls.
 * A message starting "show context" is
 * answered with the run's context as JSON, as the runtime got it. With {@code test.runtime.tools=false}
 * the runtime cannot call tools; with {@code test.runtime.offering=true} it offers one model and one skill
 * and takes no others. The runtime takes images, PDFs and plain text as attachments. Answers to messages starting
 * "suggest" get follow-up suggestions (see {@link #suggestions()}).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class TestApplication {
    /** The arguments the refunds ran with, in order (one list per JVM: tests look for their own order ids). */
    static final List<String> REFUNDS = new CopyOnWriteArrayList<>();
    /** With {@code test.runtime.offering=true} the runtime offers exactly this model and this skill. */
    static final String OFFERED_MODEL = "small";
    static final String OFFERED_SKILL = "support";

    /** The scenario a message asks for. */
    static ScriptedRuntime.Script scenario(String message) {
        if (message.startsWith("refund ")) {
            return Scripts.callsHostAction("refund_order", message.substring("refund ".length()));
        }
        if (message.startsWith("quick refund ")) {
            return Scripts.callsHostAction("quick_refund", message.substring("quick refund ".length()));
        }
        if (message.startsWith("client tool ")) {
            return callsTool(message.substring("client tool ".length()), "{\"zone\":\"local\"}");
        }
        if (message.startsWith("long tool")) {
            return (request, p) -> {
                p.emit(new AgentStreamEvent.ToolCallStart(request.runId() + ":tool:1", "call-1", "search_web",
                        "{\"q\":\"parley\"}"));
                p.emit(new AgentStreamEvent.ToolCallEnd("call-1"));
                p.awaitCancel();
            };
        }
        if (message.contains("clarify")) {
            return Scripts.clarify("Which city?", List.of("Paris", "Rome"));
        }
        if (message.contains("slow")) {
            return Scripts.slow(40, 25);
        }
        if (message.contains("wait")) {
            return Scripts.streamsUntilCancelled();
        }
        if (message.startsWith("many tools ")) {
            return toolCalls(Integer.parseInt(message.substring("many tools ".length())));
        }
        if (message.contains("tools")) {
            return Scripts.toolsAndTodos();
        }
        if (message.contains("flood")) {
            return flood(2_000, 2_048);
        }
        if (message.contains("fail")) {
            return Scripts.failsWith("RUNTIME_FAILED", "the model provider answered 500");
        }
        return Scripts.answer("Hello from the scripted runtime.");
    }

    /** Streams {@code deltas} text deltas of {@code size} characters each as fast as it can, then succeeds. */
    static ScriptedRuntime.Script flood(int deltas, int size) {
        return (request, p) -> {
            String chunk = "x".repeat(size - 1) + " ";
            for (int i = 0; i < deltas; i++) {
                p.text(chunk);
            }
            p.finish();
        };
    }

    /** Makes {@code calls} tool calls, each with its result (two steps each), then answers. */
    static ScriptedRuntime.Script toolCalls(int calls) {
        return (request, p) -> {
            for (int i = 0; i < calls; i++) {
                p.emit(new AgentStreamEvent.ToolCallStart(request.runId() + ":tool:" + i, "call-" + i, "lookup", "{}"));
                p.emit(new AgentStreamEvent.ToolCallEnd("call-" + i));
                p.emit(new AgentStreamEvent.ToolCallResult(request.runId() + ":result:" + i, "call-" + i, "found", false));
            }
            p.text("Looked it all up.");
            p.finish();
        };
    }

    /** Calls the tool {@code name} (a client tool, say) with {@code arguments} and answers with its result. */
    static ScriptedRuntime.Script callsTool(String name, String arguments) {
        return (request, p) -> {
            p.emit(new AgentStreamEvent.ToolCallStart(request.runId() + ":tool:1", "call-1", name, arguments));
            p.emit(new AgentStreamEvent.ToolCallEnd("call-1"));
            ToolResult result = p.awaitToolResult("call-1");
            p.text((result.error() ? "The page failed: " : "The page said: ") + result.result());
            p.finish();
        };
    }

    @Bean
    RuntimeAdapter scriptedRuntime(@Value("${test.runtime.tools:true}") boolean tools,
            @Value("${test.runtime.offering:false}") boolean offering) {
        ScriptedRuntime runtime = ScriptedRuntime.of(request -> request.userMessage().startsWith("show context")
                ? Scripts.answer(ChatJson.shared().write(request.context())) : scenario(request.userMessage()));
        if (!tools) {
            runtime = runtime.withCapabilities(EnumSet.of(Capability.CLARIFY, Capability.CANCEL));
        }
        runtime.withAttachmentSupport(AttachmentSupport.of("image/*", "application/pdf", "text/plain"));
        return offering ? runtime.offering(List.of(new ModelOption(OFFERED_MODEL, "Small", null)),
                List.of(new SkillOption(OFFERED_SKILL, "Support", "answers customers"))) : runtime;
    }

    @Bean
    HostAction refundOrder() {
        return new HostAction(new HostToolSpec("refund_order", "Refunds an order to the customer's card",
                "{\"type\":\"object\",\"properties\":{\"order\":{\"type\":\"integer\"}}}"), TestApplication::refund,
                HostActionApproval.always(call -> "Refunds " + call.arguments() + "; this cannot be undone")
                        .withEditableArguments());
    }

    /** Like {@code refund_order}, but its approval expires after 300 ms. */
    @Bean
    HostAction quickRefund() {
        return new HostAction(new HostToolSpec("quick_refund", "Refunds an order, if approved at once",
                "{\"type\":\"object\"}"), TestApplication::refund,
                HostActionApproval.always(call -> "Refunds " + call.arguments()).withTimeout(Duration.ofMillis(300)));
    }

    /**
     * Follow-up suggestions for messages starting "suggest" (none for others, so other tests see no change after
     * a run): "suggest broken" throws, "suggest slow" takes 1.5 s.
     */
    @Bean
    SuggestionProvider suggestions() {
        return request -> {
            if (!request.question().startsWith("suggest")) {
                return null;
            }
            if (request.question().startsWith("suggest broken")) {
                throw new IllegalStateException("the suggestion service is down");
            }
            if (request.question().startsWith("suggest slow")) {
                Thread.sleep(1_500);
            }
            return Suggestions.of(List.of("Tell me more", "What next after " + request.question() + "?"));
        };
    }

    private static String refund(HostActionCall call) {
        REFUNDS.add(call.arguments());
        return "refunded " + call.arguments();
    }
}
