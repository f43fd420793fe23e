package dev.parley.example.plain;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import dev.parley.chat.ChatException;
import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionApproval;
import dev.parley.chat.engine.HostActionCall;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.engine.ThreadView;
import dev.parley.chat.event.AgentStreamEvent.InputRequested;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.langchain4j.LangChain4jModelClient;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * Parley in a plain Java program, without Spring: a {@link ChatEngine} on a SQLite file and a LangChain4j model on
 * any OpenAI-compatible server (Ollama, vLLM, llama.cpp, OpenAI). It asks for a refund, streams the run to the
 * console, asks the person at the console before the refund (a host action) runs, then closes everything, opens a
 * new engine on the same file (a restart), shows the stored conversation and continues it.
 *
 * <p>{@code java -jar parley-plain-java.jar --help} lists the options ({@link Options}).
 */
public final class ConsoleChat {
    /** Who is chatting: every engine call names its caller, and only the caller sees their threads. */
    static final String OWNER = "console-user";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Options options;
    private final BufferedReader console;
    private final PrintStream out;

    private ConsoleChat(Options options, InputStream in, PrintStream out) {
        this.options = options;
        this.console = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        this.out = out;
    }

    public static void main(String[] args) {
        System.exit(run(args, System.in, System.out));
    }

    /**
     * Runs the example with {@code args}, reading approvals from {@code in} and writing to {@code out}.
     *
     * @return the exit status: 0 when both turns succeeded, 1 when a run did not or Parley refused a call, 2 for bad
     *     arguments
     */
    public static int run(String[] args, InputStream in, PrintStream out) {
        Options options;
        try {
            options = Options.parse(args, System.getenv());
        } catch (IllegalArgumentException e) {
            out.println(e.getMessage());
            out.println(Options.USAGE);
            return 2;
        }
        if (options.help()) {
            out.println(Options.USAGE);
            return 0;
        }
        try {
            return new ConsoleChat(options, in, out).chat() ? 0 : 1;
        } catch (ChatException e) {
            // every refusal of Parley's API is a ChatException; its code says what kind (INVALID_INPUT, NOT_FOUND, ...)
            out.println("Parley refused: " + e.code() + " " + e.getMessage());
            return 1;
        }
    }

    private boolean chat() {
        out.printf("Model %s at %s; the conversation is stored in %s%n",
                options.model(), options.baseUrl(), options.database());

        // 1. First start: a new thread, one turn with a refund the person approves at the console.
        String threadId;
        try (ChatStore store = JdbiChatStore.sqlite(options.database()).build();
                ChatEngine engine = engine(store)) {
            threadId = engine.createThread(OWNER, NewThread.empty()).id();
            out.printf("%n== New thread %s%n", threadId);
            if (!turn(engine, threadId, options.message())) {
                return false;
            }
        }
        // Both are closed here: the engine first (try-with-resources closes in reverse), then the store.

        // 2. After a restart: a new engine on the same file finds the thread and continues it.
        try (ChatStore store = JdbiChatStore.sqlite(options.database()).build();
                ChatEngine engine = engine(store)) {
            ThreadView stored = engine.getThread(OWNER, threadId);
            out.printf("%n== Restarted; thread %s (\"%s\") as stored:%n", threadId, stored.thread().title());
            for (Message message : stored.messages()) {
                out.println("  " + RunPrinter.describe(message).replace("\n", "\n  "));
            }
            return turn(engine, threadId, options.followUp());
        }
    }

    /** The engine: the store, the agent loop on the model, and the host actions the model may call. */
    private ChatEngine engine(ChatStore store) {
        StreamingChatModel model = OpenAiStreamingChatModel.builder()
                .baseUrl(options.baseUrl())
                .apiKey(options.apiKey())
                .modelName(options.model())
                .returnThinking(true)                   // relay reasoning_content as thinking
                .timeout(Duration.ofMinutes(5))
                .build();
        RuntimeAdapter runtime = AgentLoopRuntime.builder(LangChain4jModelClient.of(model))
                .systemPrompt("You are the support desk of a small web shop. When a customer asks for a refund,"
                        + " call refund_order with the order number, then tell them what was done.")
                .build();
        return ChatEngine.builder()
                .store(store)
                .runtime(runtime)
                .hostAction(refundOrder())
                .build();
    }

    /**
     * A host action: a tool the model may call, run here in the host. {@code HostActionApproval.always} makes every
     * call wait for the person's approval; the handler runs only once it is allowed.
     */
    private HostAction refundOrder() {
        HostToolSpec spec = new HostToolSpec("refund_order", "Refunds a customer's order to their card",
                "{\"type\":\"object\",\"properties\":{\"order\":{\"type\":\"integer\",\"description\":\"the order"
                        + " number\"}},\"required\":[\"order\"]}");
        HostActionApproval approval = HostActionApproval.always(
                call -> "Refund order " + orderOf(call).asText("?") + " to the customer's card");
        return new HostAction(spec, this::refund, approval);
    }

    /** The refund itself: a real host would call its payment service. Its return value goes back to the model. */
    private String refund(HostActionCall call) {
        JsonNode order = orderOf(call);
        out.println("[host] refunding order " + order.asText());
        ObjectNode result = JSON.createObjectNode();
        result.set("order", order);
        return result.put("refunded", true).toString();
    }

    /** The call's {@code order} argument; a missing node when the model sent none (or no JSON). */
    private static JsonNode orderOf(HostActionCall call) {
        try {
            return JSON.readTree(call.arguments()).path("order");
        } catch (IOException e) {
            return MissingNode.getInstance();
        }
    }

    /**
     * One turn: sends {@code message}, prints the run's events as they stream, answers its approvals, and waits
     * for its end.
     *
     * @return whether the run succeeded
     */
    private boolean turn(ChatEngine engine, String threadId, String message) {
        out.printf("%nyou> %s%n", message);
        RunTicket ticket = engine.startRun(OWNER, threadId, StartRun.of(message));

        RunPrinter printer = new RunPrinter(out);
        engine.subscribe(OWNER, ticket.runId(), 0).subscribe(printer);
        for (InputRequested asked = printer.nextApproval(); asked != null; asked = printer.nextApproval()) {
            ApprovalDecision decision = decide();
            engine.answer(OWNER, ticket.runId(), asked.inputId(), ApprovalAnswer.of(decision));
        }

        // the printer has shown the end; the run as stored says how it went
        return engine.state(OWNER, ticket.runId()).run().status() == RunStatus.SUCCEEDED;
    }

    /** The person's decision: from the console, or the one {@code --approve} gave. No answer at all denies. */
    private ApprovalDecision decide() {
        if (options.approve() != null) {
            out.printf("Allow? %s (--approve)%n", options.approve() ? "yes" : "no");
            return options.approve() ? ApprovalDecision.ALLOW_ONCE : ApprovalDecision.DENY;
        }
        out.print("Allow? [y/N] ");
        out.flush();
        String line;
        try {
            line = console.readLine();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (line == null) {
            out.println("(the console is closed: no)");
            return ApprovalDecision.DENY;
        }
        boolean allowed = line.trim().toLowerCase(Locale.ROOT).startsWith("y");
        return allowed ? ApprovalDecision.ALLOW_ONCE : ApprovalDecision.DENY;
    }
}
