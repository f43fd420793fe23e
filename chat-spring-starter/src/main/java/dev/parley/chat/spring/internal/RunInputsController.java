package dev.parley.chat.spring.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.engine.AnswerResult;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.spring.OwnerResolver;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Map;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * What a waiting run asks of the person, under {@code parley.web.base-path}: its state with every pending
 * input, and the answers — to any kind of input, and the older clarify-only {@code resume}. An answer
 * reaches whoever asked once: the same answer again is {@code {"replayed": true}}, a different one (or one
 * to an input that expired or was withdrawn) {@code 409}; a wrong shape is {@code 400} and changes nothing.
 */
@RestController
@RequestMapping("${parley.web.base-path:/api/chat}")
public class RunInputsController extends ParleyEndpoints {
    private final ChatEngine engine;
    private final JsonBodies bodies;

    public RunInputsController(ChatEngine engine, OwnerResolver owners, OriginCheck origins, JsonBodies bodies) {
        super(owners, origins);
        this.engine = engine;
        this.bodies = bodies;
    }

    /** {@code {run, lastSeq, pendingInputs}}, see {@link InputBodies#state}. */
    @GetMapping("/runs/{runId}/state")
    public ResponseEntity<byte[]> state(HttpServletRequest request, @PathVariable("runId") String runId) {
        return JsonBodies.ok(InputBodies.state(engine.state(owner(request), runId)));
    }

    /** Answers a pending input of any kind; the body is the answer, see {@link InputBodies#answer}. */
    @PostMapping("/runs/{runId}/inputs/{inputId}")
    public ResponseEntity<byte[]> answer(HttpServletRequest request, @PathVariable("runId") String runId,
            @PathVariable("inputId") String inputId) {
        String owner = owner(request);
        JsonNode body = bodies.object(request);
        return answered(engine.answer(owner, runId, inputId, InputBodies.answer(body)));
    }

    /** Answers a clarify question: {@code {clarifyId, answer}}, the answer a string or an array of strings. */
    @PostMapping("/runs/{runId}/resume")
    public ResponseEntity<byte[]> resume(HttpServletRequest request, @PathVariable("runId") String runId) {
        String owner = owner(request);
        JsonNode body = bodies.object(request);
        return answered(engine.answer(owner, runId, JsonBodies.requiredText(body, "clarifyId"),
                new ClarifyAnswer(JsonBodies.textOrTextList(body, "answer"))));
    }

    private static ResponseEntity<byte[]> answered(AnswerResult result) {
        return JsonBodies.ok(Map.of("accepted", true, "replayed", result == AnswerResult.REPLAYED));
    }
}
