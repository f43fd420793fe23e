package dev.parley.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import dev.langchain4j.data.message.UserMessage;
import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.langchain4j.LangChain4jModelClient;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.springai.SpringAiModelClient;
import dev.parley.chat.store.InMemoryChatStore;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.sse.EventSource;
import okhttp3.sse.EventSourceListener;
import okhttp3.sse.EventSources;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;

/**
 * Section 8, a model's stream through each model adapter: a fast OpenAI-compatible stub on loopback streams one
 * completion of N content chunks; each configuration is timed from the request (or {@code startRun}) until its
 * consumer saw the end, and compared with the raw SSE parse of the same stream, as section 1 compares with its
 * limit. Configurations run round-robin after a warm-up round; medians with min and max.
 */
final class ModelRelayBench {
    private static final int LIMIT_REPEATS = 5;
    private final Env env;
    private final int n;
    private final Map<String, Stats> results = new LinkedHashMap<>();
    private final Map<String, Stats> cpuMicros = new LinkedHashMap<>();

    ModelRelayBench(Env env) {
        this.env = env;
        this.n = env.options.events;
    }

    private interface Config {
        long run(CpuMeter meter) throws Exception;
    }

    void run() throws Exception {
        System.out.println("== 8. A model's stream through the model adapters: N = " + n + " content chunks per completion");
        try (CompletionStub stub = CompletionStub.start(n)) {
            StreamingChatModel langChain4j = OpenAiStreamingChatModel.builder().baseUrl(stub.baseUrl()).apiKey("bench")
                    .modelName("bench-model").timeout(Duration.ofMinutes(10)).build();
            ChatModel springAi = OpenAiChatModel.builder().options(OpenAiChatOptions.builder().baseUrl(stub.baseUrl())
                    .apiKey("bench").model("bench-model").maxRetries(0).timeout(Duration.ofMinutes(10)).build()).build();
            Map<String, Config> configs = new LinkedHashMap<>();
            configs.put("a", m -> limit(stub, false, m));
            configs.put("a2", m -> limit(stub, true, m));
            configs.put("lc4j", m -> langChain4jAlone(langChain4j, m));
            configs.put("b", m -> engine(LangChain4jModelClient.of(langChain4j), m));
            configs.put("springai", m -> springAiAlone(springAi, m));
            configs.put("c", m -> engine(SpringAiModelClient.of(springAi), m));
            int rounds = env.options.warmupRounds + env.options.rounds;
            for (int round = 0; round < rounds; round++) {
                boolean warm = round < env.options.warmupRounds;
                for (Map.Entry<String, Config> c : configs.entrySet()) {
                    int times = c.getKey().startsWith("a") ? LIMIT_REPEATS : 1;
                    for (int t = 0; t < times; t++) {
                        Env.settle();
                        CpuMeter meter = new CpuMeter();
                        long nanos = c.getValue().run(meter);
                        double rate = n / (nanos / 1e9);
                        System.out.printf("   %s round %d%s: %.3f s, %,.0f chunks/s%n", c.getKey(), round + 1,
                                warm ? " (warm-up)" : "", nanos / 1e9, rate);
                        if (!warm) {
                            results.computeIfAbsent(c.getKey(), k -> new Stats()).add(rate);
                            cpuMicros.computeIfAbsent(c.getKey(), k -> new Stats()).add(meter.totalMicrosPerEvent(n));
                        }
                    }
                }
            }
            env.report.note("8: one completion is " + Fmt.mb(stub.size()) + " of SSE (" + n + " chunks)");
        }
        report();
    }

    private void report() {
        Report r = env.report;
        double a = results.get("a").median();
        r.row("8a", "model stream limit: OkHttp EventSource parses the stub's completion, nothing else",
                results.get("a").describe("chunks/s"), "the limit", "1.00", Report.Verdict.INFO);
        row("8a2", "(diagnostic) (a) + Jackson readTree of every chunk (what any client of the wire must do)", "a2", a);
        row("8lc", "(diagnostic) LangChain4j's OpenAiStreamingChatModel alone, counting partial responses", "lc4j", a);
        row("8b", "LangChain4j model → LangChain4jModelClient → agent loop → engine → in-memory store → 1 subscriber", "b", a);
        row("8sa", "(diagnostic) Spring AI's OpenAiChatModel.stream alone, counting chunks", "springai", a);
        row("8c", "Spring AI model → SpringAiModelClient → agent loop → engine → in-memory store → 1 subscriber", "c", a);
        if (results.containsKey("lc4j") && results.containsKey("b")) {
            r.note("8: Parley's share over LangChain4j alone: (b) runs at " + Fmt.ratio(results.get("b").median()
                    / results.get("lc4j").median()) + " of the library's own rate; over Spring AI alone, (c) at "
                    + Fmt.ratio(results.get("c").median() / results.get("springai").median()));
        }
        StringBuilder cpu = new StringBuilder();
        for (Map.Entry<String, Stats> e : cpuMicros.entrySet()) {
            cpu.append(cpu.length() == 0 ? "" : "; ").append('(').append(e.getKey()).append(") ")
                    .append(Fmt.num(e.getValue().median())).append(" µs");
        }
        r.note("8: JVM CPU time per chunk (median of the measured reps): " + cpu);
    }

    private void row(String id, String what, String key, double limit) {
        Stats s = results.get(key);
        env.report.row(id, what, s.describe("chunks/s"), "ratio to (a)", Fmt.ratio(s.median() / limit),
                Report.Verdict.INFO);
    }

    // ------------------------------------------------------------------ (a) the raw parse

    private long limit(CompletionStub stub, boolean parseJson, CpuMeter meter) throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        Request request = new Request.Builder().url(stub.baseUrl() + "/chat/completions")
                .header("Accept", "text/event-stream")
                .post(RequestBody.create("{\"model\":\"bench-model\",\"stream\":true}", Env.JSON_TYPE)).build();
        long[] counts = new long[2];
        meter.start();
        long start = System.nanoTime();
        try (Response response = env.http.newCall(request).execute()) {
            EventSources.processResponse(response, new EventSourceListener() {
                @Override
                public void onEvent(EventSource source, String id, String type, String data) {
                    if (data.equals("[DONE]")) {
                        counts[1] = System.nanoTime();
                        return;
                    }
                    if (parseJson) {
                        try {
                            JsonNode chunk = mapper.readTree(data);
                            if (chunk.path("choices").path(0).path("delta").has("content")) {
                                counts[0]++;
                            }
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    } else if (data.contains("\"content\":\"t")) {
                        counts[0]++;
                    }
                }
            });
        }
        meter.stop();
        long expected = parseJson ? n + 1 : n;
        if (counts[0] != expected || counts[1] == 0) {
            throw new IllegalStateException("the limit reader saw " + counts[0] + " content chunks of " + expected);
        }
        return counts[1] - start;
    }

    // ------------------------------------------------------------------ the libraries alone

    private long langChain4jAlone(StreamingChatModel model, CpuMeter meter) throws Exception {
        AtomicLong partials = new AtomicLong();
        CompletableFuture<Long> done = new CompletableFuture<>();
        meter.start();
        long start = System.nanoTime();
        model.chat(ChatRequest.builder().messages(UserMessage.from("long")).build(), new StreamingChatResponseHandler() {
            @Override
            public void onPartialResponse(String partial) {
                partials.incrementAndGet();
            }

            @Override
            public void onCompleteResponse(ChatResponse response) {
                done.complete(System.nanoTime());
            }

            @Override
            public void onError(Throwable error) {
                done.completeExceptionally(error);
            }
        });
        long end = done.get(600, TimeUnit.SECONDS);
        meter.stop();
        if (partials.get() != n) {
            throw new IllegalStateException("LangChain4j relayed " + partials.get() + " partial responses of " + n);
        }
        return end - start;
    }

    private long springAiAlone(ChatModel model, CpuMeter meter) {
        AtomicLong texts = new AtomicLong();
        meter.start();
        long start = System.nanoTime();
        model.stream(new Prompt("long")).doOnNext(response -> {
            if (response.getResult() != null && response.getResult().getOutput().getText() != null
                    && !response.getResult().getOutput().getText().isEmpty()) {
                texts.incrementAndGet();
            }
        }).blockLast(Duration.ofMinutes(10));
        long end = System.nanoTime();
        meter.stop();
        if (texts.get() != n) {
            throw new IllegalStateException("Spring AI relayed " + texts.get() + " text chunks of " + n);
        }
        return end - start;
    }

    // ------------------------------------------------------------------ (b), (c) through the engine

    private long engine(ModelClient client, CpuMeter meter) throws Exception {
        AgentLoopRuntime runtime = AgentLoopRuntime.builder(client).build();
        ChatEngine engine = ChatEngine.builder().runtime(runtime).store(new InMemoryChatStore()).build();
        try {
            String thread = engine.createThread(Env.OWNER, NewThread.empty()).id();
            meter.start();
            long start = System.nanoTime();
            RunTicket ticket = engine.startRun(Env.OWNER, thread, StartRun.of("long"));
            EngineSubscriber subscriber = new EngineSubscriber(engine, ticket.runId(), null).start();
            long end = subscriber.await(600);
            meter.stop();
            AgentStreamEvent terminal = subscriber.terminal();
            if (!(terminal instanceof AgentStreamEvent.RunFinished finished) || finished.status() != RunStatus.SUCCEEDED) {
                throw new IllegalStateException("the run did not succeed: " + terminal);
            }
            if (subscriber.textDeltas() != n) {
                throw new IllegalStateException("the subscriber saw " + subscriber.textDeltas() + " text deltas of " + n);
            }
            return end - start;
        } finally {
            engine.close();
        }
    }
}
