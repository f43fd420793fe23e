package dev.parley.chat.testing.openai;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A streamed chat-completion body as OpenAI, vLLM and Ollama send it: one {@code data:} event per chunk, the
 * usage in a last chunk without choices ({@code stream_options.include_usage}), then {@code data: [DONE]}.
 */
public final class Sse {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final StringBuilder body = new StringBuilder();

    public static Sse stream() {
        return new Sse().delta(JSON.createObjectNode().put("role", "assistant").put("content", ""));
    }

    /** More chunks of a stream already opened, for servers that write one piece at a time. */
    public static Sse more() {
        return new Sse();
    }

    /** Text, one chunk per piece. */
    public Sse text(String... pieces) {
        for (String piece : pieces) {
            delta(JSON.createObjectNode().put("content", piece));
        }
        return this;
    }

    /** Reasoning as DeepSeek, vLLM and Ollama stream it: {@code delta.reasoning_content}. */
    public Sse reasoning(String... pieces) {
        for (String piece : pieces) {
            delta(JSON.createObjectNode().put("reasoning_content", piece));
        }
        return this;
    }

    /** A tool call: its id and name in the first chunk, its arguments in the next ones, one per piece. */
    public Sse toolCall(int index, String id, String name, String... argumentPieces) {
        ObjectNode first = JSON.createObjectNode().put("index", index).put("id", id).put("type", "function");
        first.putObject("function").put("name", name).put("arguments", "");
        delta(toolCalls(first));
        for (String piece : argumentPieces) {
            ObjectNode next = JSON.createObjectNode().put("index", index);
            next.putObject("function").put("arguments", piece);
            delta(toolCalls(next));
        }
        return this;
    }

    public Sse finish(String reason) {
        ObjectNode chunk = chunk();
        ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
        choice.putObject("delta");
        choice.put("finish_reason", reason);
        return event(chunk);
    }

    public Sse usage(int prompt, int completion) {
        ObjectNode chunk = chunk();
        chunk.putArray("choices");
        chunk.putObject("usage").put("prompt_tokens", prompt).put("completion_tokens", completion)
                .put("total_tokens", prompt + completion);
        return event(chunk);
    }

    /** The body, ended as servers end it. */
    public String done() {
        return body + "data: [DONE]\n\n";
    }

    /** The body so far, without an end. */
    public String partial() {
        return body.toString();
    }

    private static ObjectNode toolCalls(ObjectNode call) {
        ObjectNode delta = JSON.createObjectNode();
        ArrayNode calls = delta.putArray("tool_calls");
        calls.add(call);
        return delta;
    }

    private Sse delta(ObjectNode delta) {
        ObjectNode chunk = chunk();
        ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
        choice.set("delta", delta);
        choice.putNull("logprobs");
        choice.putNull("finish_reason");
        chunk.putNull("usage");
        return event(chunk);
    }

    private static ObjectNode chunk() {
        return JSON.createObjectNode().put("id", "chatcmpl-7").put("object", "chat.completion.chunk")
                .put("created", 1767225600).put("model", "gpt-test").put("system_fingerprint", "fp_test");
    }

    private Sse event(ObjectNode chunk) {
        body.append("data: ").append(chunk).append("\n\n");
        return this;
    }
}
