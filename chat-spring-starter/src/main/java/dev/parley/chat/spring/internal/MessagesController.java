package dev.parley.chat.spring.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.model.FeedbackRating;
import dev.parley.chat.spring.OwnerResolver;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * What can be done to one message, under {@code parley.web.base-path}: answer it again (regenerate), edit and
 * resend it (a new branch), make its branch the active one, roll the conversation back to it, continue it,
 * rate it, read its follow-up suggestions; and
 * taking a session's last exchange back (undo). Another owner's message or session is {@code 404}.
 */
@RestController
@RequestMapping("${parley.web.base-path:/api/chat}")
public class MessagesController extends ParleyEndpoints {
    private final ChatEngine engine;
    private final JsonBodies bodies;
    private final ClientContexts contexts;

    public MessagesController(ChatEngine engine, OwnerResolver owners, OriginCheck origins, JsonBodies bodies,
            ClientContexts contexts) {
        super(owners, origins);
        this.engine = engine;
        this.bodies = bodies;
        this.contexts = contexts;
    }

    /** The body is optional ({@code {clientTools?}}); without one no client tools go with the new run. */
    @PostMapping("/messages/{id}/regenerate")
    public ResponseEntity<byte[]> regenerate(HttpServletRequest request, @PathVariable("id") String id) {
        String owner = owner(request);
        JsonNode body = bodies.objectIfAny(request);
        return JsonBodies.json(HttpStatus.ACCEPTED, engine.regenerate(owner, id, InputBodies.clientTools(body)));
    }

    /**
     * Edits a user message: {@code {text, modelId?, skill?, maxIterations?, context?, clientTools?,
     * clientMessageId?}} (or the id in an {@code Idempotency-Key} header). A new user message beside the edited
     * one, answered by a new run: {@code 202} with its ticket, {@code 200} for a replay of the same edit.
     */
    @PostMapping("/messages/{id}/edit")
    public ResponseEntity<byte[]> edit(HttpServletRequest request, @PathVariable("id") String id,
            @RequestHeader(name = RunBodies.IDEMPOTENCY_KEY, required = false) @Nullable String idempotencyKey) {
        String owner = owner(request);
        JsonNode body = bodies.object(request);
        return ChatController.ticket(engine.editMessage(owner, id,
                RunBodies.startRun(body, "text", idempotencyKey, owner, contexts)));
    }

    /** Makes the branch through this user or assistant message the active one; the thread view, as {@code GET /sessions/{id}}. */
    @PostMapping("/messages/{id}/activate")
    public ResponseEntity<byte[]> activate(HttpServletRequest request, @PathVariable("id") String id) {
        String owner = owner(request);
        return JsonBodies.ok(engine.switchBranch(owner, id));
    }

    /**
     * Rolls the conversation back to this answer ("continue from here"): the active branch ends there and the next
     * message starts a new branch after it; what came after stays on its own branch. The thread view, as
     * {@code GET /sessions/{id}}. A user message is {@code 400}; while the session has a run {@code 409}.
     */
    @PostMapping("/messages/{id}/rollback")
    public ResponseEntity<byte[]> rollBack(HttpServletRequest request, @PathVariable("id") String id) {
        String owner = owner(request);
        return JsonBodies.ok(engine.rollBack(owner, id));
    }

    /**
     * Continues this answer (one that was stopped, failed, was interrupted or cut off): a new run on the same
     * branch asking the runtime to go on, {@code 202} with its ticket. Not the branch's last answer, or while the
     * session has a run: {@code 409}.
     */
    @PostMapping("/messages/{id}/continue")
    public ResponseEntity<byte[]> continueAnswer(HttpServletRequest request, @PathVariable("id") String id) {
        String owner = owner(request);
        return JsonBodies.json(HttpStatus.ACCEPTED, engine.continueAnswer(owner, id));
    }

    /**
     * Takes the session's last exchange back (its last user message and what followed, kept on their own
     * branch). The thread view. {@code 409} while the session has a run, or when the last exchange is its first.
     */
    @PostMapping("/sessions/{id}/undo")
    public ResponseEntity<byte[]> undo(HttpServletRequest request, @PathVariable("id") String id) {
        String owner = owner(request);
        return JsonBodies.ok(engine.undo(owner, id));
    }

    /** The longest {@code wait} a suggestions request may ask for, in seconds. */
    static final int MAX_SUGGESTION_WAIT_SECONDS = 30;

    /**
     * An answer's follow-up suggestions, {@code {messageId, prompts, pending}}. With {@code wait} (seconds, 0 to
     * {@value #MAX_SUGGESTION_WAIT_SECONDS}, default 0) a request for suggestions still being made is held until
     * they are stored or the wait is over (then {@code pending} is true: ask again). The page asks once a run's
     * stream ended, since a run's stream ends at its terminal event and suggestions come after it; a reload reads
     * them from the session view, where each answer carries its {@code suggestions}. A user message is
     * {@code 400}; another owner's message {@code 404}.
     */
    @GetMapping("/messages/{id}/suggestions")
    public CompletableFuture<ResponseEntity<byte[]>> suggestions(HttpServletRequest request, @PathVariable("id") String id,
            @RequestParam(name = "wait", required = false) @Nullable String wait) {
        String owner = owner(request);
        int seconds = 0;
        if (wait != null) {
            try {
                seconds = Integer.parseInt(wait.strip());
            } catch (NumberFormatException e) {
                seconds = -1;
            }
            if (seconds < 0 || seconds > MAX_SUGGESTION_WAIT_SECONDS) {
                throw ChatException.invalidInput("\"wait\" must be a whole number of seconds from 0 to "
                        + MAX_SUGGESTION_WAIT_SECONDS);
            }
        }
        return engine.suggestions(owner, id, Duration.ofSeconds(seconds)).thenApply(JsonBodies::ok);
    }

    @PostMapping("/messages/{id}/feedback")
    public ResponseEntity<byte[]> feedback(HttpServletRequest request, @PathVariable("id") String id) {
        String owner = owner(request);
        JsonNode body = bodies.object(request);
        String rating = JsonBodies.requiredText(body, "rating");
        FeedbackRating parsed;
        try {
            parsed = FeedbackRating.valueOf(rating.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw ChatException.invalidInput("\"rating\" must be \"up\" or \"down\"");
        }
        return JsonBodies.ok(engine.feedback(owner, id, parsed, JsonBodies.optionalText(body, "comment")));
    }
}
