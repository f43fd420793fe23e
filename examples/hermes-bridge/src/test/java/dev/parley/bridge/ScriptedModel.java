package dev.parley.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * An OpenAI-compatible chat completions server on loopback, scripted by markers: a request whose last user
 * message contains a marker gets that script's step number <i>n</i>, where <i>n</i> is how many assistant
 * messages follow that user message (each tool round adds one), so one script drives a whole multi-step turn
 * without any state here. Streams as OpenAI does ({@code data:} chunks, {@code [DONE]}), answers plain JSON
 * when {@code stream} is false. Every request is kept, in arrival order, so a test can check exactly what
 * Hermes sent. Thread-safe.
 */
final class ScriptedModel implements AutoCloseable {
    static final String MODEL = "fake-model";

    /** One answer of the model. */
    sealed interface Step {
    }

    /** Text, streamed word by word, after the reasoning (if any). */
    record Say(String reasoning, String text) implements Step {
    }

    /** One tool call, after the reasoning (if any). */
    record Call(String reasoning, String tool, String arguments) implements Step {
    }

    /** An answer naming the user turns the request holds: {@code I see 2 user turns: a | b}. */
    record Recall() implements Step {
    }

    static Step say(String text) {
        return new Say("", text);
    }

    static Step think(String reasoning, String text) {
        return new Say(reasoning, text);
    }

    static Step call(String tool, String arguments) {
        return new Call("", tool, arguments);
    }

    static Step thinkThenCall(String reasoning, String tool, String arguments) {
        return new Call(reasoning, tool, arguments);
    }

    static Step recall() {
        return new Recall();
    }

    private final ObjectMapper json = new ObjectMapper();
    private final Map<String, List<Step>> scripts = new ConcurrentHashMap<>();
    private final List<JsonNode> requests = new ArrayList<>();
    private final AtomicInteger ids = new AtomicInteger();
    private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
        Thread thread = new Thread(r, "scripted-model");
        thread.setDaemon(true);
        return thread;
    });
    private final HttpServer server;

    ScriptedModel() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", this::handle);
        server.setExecutor(executor);
        server.start();
    }

    /** The base URL Hermes is configured with, {@code http://127.0.0.1:<port>/v1}. */
    String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
    }

    /** Scripts the answers to a last user message containing {@code marker}; the longest marker wins. */
    void script(String marker, Step... steps) {
        scripts.put(marker, List.of(steps));
    }

    /** Every request so far, oldest first. */
    synchronized List<JsonNode> requests() {
        return List.copyOf(requests);
    }

    /** The requests whose last user message contains {@code text}, oldest first. */
    List<JsonNode> requestsFor(String text) {
        return requests().stream().filter(r -> lastUserText(r).contains(text)).toList();
    }

    /** A request's messages after the system prompt, as "role: content" (tool calls as "role: name(args)"). */
    static List<String> conversation(JsonNode request) {
        List<String> lines = new ArrayList<>();
        for (JsonNode message : request.path("messages")) {
            String role = message.path("role").asText();
            if (role.equals("system")) {
                continue;
            }
            if (message.path("tool_calls").size() > 0) {
                for (JsonNode call : message.path("tool_calls")) {
                    lines.add(role + ": " + call.path("function").path("name").asText() + "("
                            + call.path("function").path("arguments").asText() + ")");
                }
            } else {
                lines.add(role + ": " + content(message));
            }
        }
        return lines;
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            if (exchange.getRequestMethod().equals("GET") && path.endsWith("/models")) {
                ObjectNode list = json.createObjectNode().put("object", "list");
                list.putArray("data").addObject().put("id", MODEL).put("object", "model").put("owned_by", "parley-tests");
                respond(exchange, 200, list);
                return;
            }
            if (!exchange.getRequestMethod().equals("POST") || !path.endsWith("/chat/completions")) {
                respond(exchange, 404, json.createObjectNode().set("error",
                        json.createObjectNode().put("message", "no route " + path).put("type", "not_found")));
                return;
            }
            JsonNode request = json.readTree(exchange.getRequestBody());
            synchronized (this) {
                requests.add(request);
            }
            Step step = stepFor(request);
            if (request.path("stream").asBoolean(false)) {
                stream(exchange, step, request);
            } else {
                respond(exchange, 200, whole(step, request));
            }
        }
    }

    private Step stepFor(JsonNode request) {
        String last = lastUserText(request);
        List<Step> script = scripts.entrySet().stream().filter(e -> last.contains(e.getKey()))
                .max((a, b) -> Integer.compare(a.getKey().length(), b.getKey().length())).map(Map.Entry::getValue)
                .orElse(List.of(say("(the scripted model has no script for this)")));
        int step = assistantMessagesAfterLastUser(request);
        return step < script.size() ? script.get(step) : say("(the script has no step " + step + ")");
    }

    private Step resolve(Step step, JsonNode request) {
        if (step instanceof Recall) {
            List<String> turns = new ArrayList<>();
            for (JsonNode message : request.path("messages")) {
                if (message.path("role").asText().equals("user")) {
                    turns.add(content(message));
                }
            }
            return say("I see " + turns.size() + " user turns: " + String.join(" | ", turns));
        }
        return step;
    }

    private void stream(HttpExchange exchange, Step scripted, JsonNode request) throws IOException {
        Step step = resolve(scripted, request);
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
        exchange.sendResponseHeaders(200, 0);
        String id = "chatcmpl-" + ids.incrementAndGet();
        OutputStream out = exchange.getResponseBody();
        send(out, chunk(id, delta -> delta.put("role", "assistant").put("content", ""), null));
        String reasoning = step instanceof Say s ? s.reasoning() : ((Call) step).reasoning();
        for (String piece : pieces(reasoning)) {
            send(out, chunk(id, delta -> delta.put("reasoning_content", piece), null));
        }
        String finish;
        if (step instanceof Call call) {
            String callId = "call_" + ids.incrementAndGet();
            send(out, chunk(id, delta -> {
                ObjectNode tool = delta.putArray("tool_calls").addObject().put("index", 0).put("id", callId)
                        .put("type", "function");
                tool.putObject("function").put("name", call.tool()).put("arguments", "");
            }, null));
            String args = call.arguments();
            int half = args.length() / 2;
            for (String part : List.of(args.substring(0, half), args.substring(half))) {
                send(out, chunk(id, delta -> delta.putArray("tool_calls").addObject().put("index", 0)
                        .putObject("function").put("arguments", part), null));
            }
            finish = "tool_calls";
        } else {
            for (String piece : pieces(((Say) step).text())) {
                send(out, chunk(id, delta -> delta.put("content", piece), null));
            }
            finish = "stop";
        }
        send(out, chunk(id, delta -> { }, finish));
        ObjectNode usage = json.createObjectNode().put("id", id).put("object", "chat.completion.chunk")
                .put("created", System.currentTimeMillis() / 1000).put("model", MODEL);
        usage.putArray("choices");
        usage.set("usage", usage(request));
        send(out, usage);
        out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private ObjectNode whole(Step scripted, JsonNode request) {
        Step step = resolve(scripted, request);
        ObjectNode body = json.createObjectNode().put("id", "chatcmpl-" + ids.incrementAndGet())
                .put("object", "chat.completion").put("created", System.currentTimeMillis() / 1000).put("model", MODEL);
        ObjectNode choice = body.putArray("choices").addObject().put("index", 0);
        ObjectNode message = choice.putObject("message").put("role", "assistant");
        if (step instanceof Call call) {
            message.putNull("content");
            ObjectNode tool = message.putArray("tool_calls").addObject().put("id", "call_" + ids.incrementAndGet())
                    .put("type", "function");
            tool.putObject("function").put("name", call.tool()).put("arguments", call.arguments());
            if (!call.reasoning().isEmpty()) {
                message.put("reasoning_content", call.reasoning());
            }
            choice.put("finish_reason", "tool_calls");
        } else {
            Say say = (Say) step;
            message.put("content", say.text());
            if (!say.reasoning().isEmpty()) {
                message.put("reasoning_content", say.reasoning());
            }
            choice.put("finish_reason", "stop");
        }
        body.set("usage", usage(request));
        return body;
    }

    private ObjectNode usage(JsonNode request) {
        int prompt = request.path("messages").size() * 10;
        return json.createObjectNode().put("prompt_tokens", prompt).put("completion_tokens", 5)
                .put("total_tokens", prompt + 5);
    }

    private ObjectNode chunk(String id, java.util.function.Consumer<ObjectNode> delta, String finish) {
        ObjectNode chunk = json.createObjectNode().put("id", id).put("object", "chat.completion.chunk")
                .put("created", System.currentTimeMillis() / 1000).put("model", MODEL);
        ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
        delta.accept(choice.putObject("delta"));
        if (finish == null) {
            choice.putNull("finish_reason");
        } else {
            choice.put("finish_reason", finish);
        }
        return chunk;
    }

    private void send(OutputStream out, JsonNode chunk) throws IOException {
        out.write(("data: " + json.writeValueAsString(chunk) + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private void respond(HttpExchange exchange, int status, JsonNode body) throws IOException {
        byte[] bytes = json.writeValueAsBytes(body);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    /** Text in word-sized pieces (each keeps its trailing space), as a streaming model sends it. */
    private static List<String> pieces(String text) {
        List<String> pieces = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) == ' ') {
                pieces.add(text.substring(start, i + 1));
                start = i + 1;
            }
        }
        if (start < text.length()) {
            pieces.add(text.substring(start));
        }
        return pieces;
    }

    static String lastUserText(JsonNode request) {
        String last = "";
        for (JsonNode message : request.path("messages")) {
            if (message.path("role").asText().equals("user")) {
                last = content(message);
            }
        }
        return last;
    }

    private static int assistantMessagesAfterLastUser(JsonNode request) {
        int count = 0;
        for (JsonNode message : request.path("messages")) {
            String role = message.path("role").asText();
            if (role.equals("user")) {
                count = 0;
            } else if (role.equals("assistant")) {
                count++;
            }
        }
        return count;
    }

    /** A message's text: its string content, or its text parts joined. */
    static String content(JsonNode message) {
        JsonNode content = message.path("content");
        if (content.isArray()) {
            return java.util.stream.StreamSupport.stream(content.spliterator(), false)
                    .map(part -> part.path("text").asText("")).collect(Collectors.joining());
        }
        return content.asText("");
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
