package dev.parley.chat.hermes.internal;

import static dev.parley.chat.hermes.internal.BridgeRun.orElse;
import static dev.parley.chat.hermes.internal.BridgeRun.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.runtime.ApprovalReply;
import dev.parley.chat.runtime.ClarifyReply;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One API-server run's pending inputs: Hermes' approval requests and, on servers that have them, clarify
 * questions; what the person answered; what Hermes resolved on its own.
 *
 * <h2>Approvals</h2>
 * Hermes 0.19 gives an approval request no id, and {@code POST /v1/runs/{id}/approval} resolves the run's
 * <em>oldest</em> pending one. Approvals are therefore a queue: a decision is sent only for the oldest
 * approval Hermes may still wait on (answering a later one first is CONFLICT), so it can never land on
 * another command. Later 0.19 releases (0.19.17) name each request ({@code approval_id}, also sent as
 * {@code interaction_id}): the input takes that id, so the person's decision names Hermes' approval, but it is
 * still sent oldest first, since those servers still resolve the oldest. A request that carries a
 * {@code request_id} (newer lines) is answered by that id, in any order, the id in the decision's body.
 *
 * <p>Hermes times an approval out itself ({@code approvals.timeout}) and says nothing on the stream. The
 * adapter knows that timeout ({@code apiServerApprovalTimeout}): Hermes gives up at the latest that long
 * after the request reached the adapter, so the input's deadline is set a margin before it (the engine
 * expires the input there, and nothing is sent afterwards); an approval whose deadline passed still counts
 * as possibly pending at Hermes until Hermes has certainly given up, so no later decision overtakes it.
 *
 * <h2>Clarify</h2>
 * Newer servers also write a clarify question's prompt and its "answered"/"expired" notice as
 * {@code message.delta} text; that text is not the answer and is dropped ({@link #swallows}).
 *
 * <p>Thread-safe: the stream thread reports what the server sent, engine threads answer.
 */
final class ApiServerInputs {
    private static final Logger log = LoggerFactory.getLogger(ApiServerInputs.class);
    private static final Duration MAX_MARGIN = Duration.ofSeconds(2);

    /** PENDING → SENDING → ANSWERED; PENDING → EXPIRED (the engine's deadline) or CLOSED (resolved otherwise). */
    private enum State { PENDING, SENDING, ANSWERED, EXPIRED, CLOSED }

    /** One approval request, in the order asked. */
    private static final class Approval {
        final String inputId;
        final @Nullable String requestId;
        final List<ApprovalDecision> offered;
        final @Nullable Instant deadline;
        final @Nullable Instant hermesGivesUp;
        State state = State.PENDING;
        boolean echoPending;
        boolean goneAtHermes;

        Approval(String inputId, @Nullable String requestId, List<ApprovalDecision> offered, @Nullable Instant deadline,
                @Nullable Instant hermesGivesUp) {
            this.inputId = inputId;
            this.requestId = requestId;
            this.offered = offered;
            this.deadline = deadline;
            this.hermesGivesUp = hermesGivesUp;
        }
    }

    private final HermesHttp http;
    private final String runId;
    private final Redactor redactor;
    private final Duration approvalTimeout;
    private final Clock clock;
    private final List<Approval> approvals = new ArrayList<>();
    private final Map<String, State> clarifies = new LinkedHashMap<>();
    private final Set<String> multiSelect = new HashSet<>();
    private @Nullable String retiredNotice;
    private int asked;

    ApiServerInputs(HermesHttp http, String runId, Redactor redactor, Duration approvalTimeout, Clock clock) {
        this.http = http;
        this.runId = runId;
        this.redactor = redactor;
        this.approvalTimeout = approvalTimeout;
        this.clock = clock;
    }

    // ------------------------------------------------------------------ approvals, from the stream

    /** An {@code approval.request}: the input to ask, for the tool {@code tool} (the one that is running). */
    synchronized AgentStreamEvent.InputRequested approvalRequested(JsonNode e, String tool) {
        String requestId = nonBlank(text(e, "request_id"));
        String hermesId = nonBlank(text(e, "approval_id"));
        if (hermesId == null) {
            hermesId = nonBlank(text(e, "interaction_id"));
        }
        String named = requestId != null ? requestId : hermesId;
        asked++;
        String inputId = named != null && first(a -> a.inputId.equals(named)) == null ? named : "a" + asked;
        Instant now = clock.instant();
        Instant deadline = null;
        Instant givesUp = null;
        if (!approvalTimeout.isZero()) {
            Duration quarter = approvalTimeout.dividedBy(4);
            Duration margin = quarter.compareTo(MAX_MARGIN) < 0 ? quarter : MAX_MARGIN;
            givesUp = now.plus(approvalTimeout);
            deadline = givesUp.minus(margin);
        }
        ApprovalRequest request = approvalRequest(e, tool);
        approvals.add(new Approval(inputId, requestId, request.decisions(), deadline, givesUp));
        return new AgentStreamEvent.InputRequested(runId + ":approval:" + inputId, inputId, request, deadline, null);
    }

    private static @Nullable String nonBlank(@Nullable String value) {
        return value == null || value.isBlank() ? null : value;
    }

    private ApprovalRequest approvalRequest(JsonNode e, String tool) {
        List<ApprovalDecision> decisions = new ArrayList<>();
        JsonNode choices = e.path("choices");
        if (choices.isArray()) {
            for (JsonNode choice : choices) {
                ApprovalDecision decision = choice.isTextual() ? BridgeApprovals.decision(choice.asText()) : null;
                if (decision != null) {
                    decisions.add(decision);
                }
            }
        } else {
            decisions.add(ApprovalDecision.ALLOW_ONCE);
            if (e.path("allow_session").asBoolean(true)) {
                decisions.add(ApprovalDecision.ALLOW_FOR_THREAD);
            }
            if (e.path("allow_permanent").asBoolean(false)) {
                decisions.add(ApprovalDecision.ALWAYS_ALLOW);
            }
        }
        if (!e.path("allow_permanent").asBoolean(true)) {
            decisions.remove(ApprovalDecision.ALWAYS_ALLOW);
        }
        String command = redactor.redact(orElse(text(e, "command"), ""));
        String description = orElse(text(e, "description"), "");
        return new ApprovalRequest(tool, http.json().createObjectNode().put("command", command).toString(),
                redactor.redact(description.isBlank() ? BridgeApprovals.DEFAULT_DESCRIPTION : description), decisions,
                false);
    }

    /**
     * An {@code approval.responded}: Hermes took a decision. The adapter's own decisions need nothing more
     * (the engine logged them); one taken elsewhere (another client, {@code all}) withdraws the input here.
     */
    synchronized List<AgentStreamEvent> approvalResponded(JsonNode e) {
        List<AgentStreamEvent> closed = new ArrayList<>();
        String requestId = text(e, "request_id");
        if (requestId != null) {
            for (Approval a : approvals) {
                if (requestId.equals(a.requestId)) {
                    if (a.echoPending) {
                        a.echoPending = false;
                    } else if (a.state == State.PENDING) {
                        closed.add(withdraw(a));
                    }
                    return closed;
                }
            }
            return closed;
        }
        int resolved = Math.max(1, e.path("resolved").asInt(1));
        for (int i = 0; i < resolved; i++) {
            Approval ours = first(a -> a.echoPending);
            if (ours != null) {
                ours.echoPending = false;
                continue;
            }
            Approval elsewhere = first(a -> a.state == State.PENDING && a.requestId == null);
            if (elsewhere != null) {
                closed.add(withdraw(elsewhere));
            }
        }
        return closed;
    }

    private AgentStreamEvent withdraw(Approval a) {
        log.info("Run {}: approval {} was decided outside this adapter; it is withdrawn here", runId, a.inputId);
        a.state = State.CLOSED;
        return new AgentStreamEvent.InputResolved(a.inputId, AgentStreamEvent.InputOutcome.CANCELLED, null);
    }

    /**
     * Approvals Hermes has given up on while they were still open here (its timeout, when the engine had not
     * expired them first, or a refused decision): EXPIRED. Called on the stream thread with every event.
     */
    synchronized List<AgentStreamEvent> sweep() {
        Instant now = clock.instant();
        List<AgentStreamEvent> expired = new ArrayList<>();
        for (Approval a : approvals) {
            boolean timedOut = a.hermesGivesUp != null && now.isAfter(a.hermesGivesUp);
            if (a.state == State.PENDING && (a.goneAtHermes || timedOut)) {
                a.state = State.CLOSED;
                expired.add(new AgentStreamEvent.InputResolved(a.inputId, AgentStreamEvent.InputOutcome.EXPIRED, null));
            }
        }
        return expired;
    }

    // ------------------------------------------------------------------ approvals, from the person

    /**
     * Sends the person's decision (the adapter refused edited arguments before). A decision not offered is
     * INVALID_INPUT; an approval that is not the oldest Hermes may still wait on (without ids) is CONFLICT, as
     * is one Hermes no longer waits on.
     */
    void answerApproval(String remoteRunId, ApprovalReply reply) {
        Approval a;
        synchronized (this) {
            a = first(x -> x.inputId.equals(reply.inputId()));
            if (a == null) {
                throw ChatException.notFound("approval", reply.inputId());
            }
            if (!a.offered.contains(reply.decision())) {
                throw ChatException.invalidInput("Hermes did not offer " + reply.decision().wireName() + " here");
            }
            if (a.state != State.PENDING || a.goneAtHermes) {
                throw ChatException.conflict("Hermes no longer waits for this approval");
            }
            Instant now = clock.instant();
            if (a.deadline != null && !now.isBefore(a.deadline)) {
                throw ChatException.conflict("the approval is timing out on Hermes' side");
            }
            if (a.requestId == null) {
                Approval oldest = first(x -> x.requestId == null && stillAtHermes(x, now));
                if (oldest != a) {
                    throw ChatException.conflict("this Hermes takes approval decisions oldest first: decide on the "
                            + "earlier approval first" + (oldest != null && oldest.state == State.PENDING ? ""
                            : " (it is timing out; try again in a moment)"));
                }
            }
            a.state = State.SENDING;
            a.echoPending = true;
        }
        ObjectNode body = http.json().createObjectNode().put("choice", BridgeApprovals.choice(reply.decision()));
        if (a.requestId != null) {
            body.put("request_id", a.requestId);
        }
        try {
            http.call(http.request(http.url("v1", "runs", remoteRunId, "approval")).post(http.jsonBody(body)).build(),
                    "handing the approval decision to Hermes");
        } catch (ChatException e) {
            synchronized (this) {
                a.state = State.PENDING;
                a.echoPending = false;
                if (e.code() == ErrorCode.CONFLICT) {
                    goneAtHermes(a);
                }
            }
            throw e;
        }
        synchronized (this) {
            a.state = State.ANSWERED;
        }
    }

    /** Hermes has nothing pending for the run ({@code 409}): without ids, none of the open approvals waits any more. */
    private void goneAtHermes(Approval refused) {
        for (Approval a : approvals) {
            if (a == refused || refused.requestId == null && a.requestId == null && a.state == State.PENDING) {
                a.goneAtHermes = true;
            }
        }
    }

    /** The engine expired the input at its deadline: nothing is sent (Hermes times out on its own). */
    synchronized boolean expired(String inputId) {
        Approval a = first(x -> x.inputId.equals(inputId));
        if (a == null || a.state != State.PENDING) {
            return false;
        }
        a.state = State.EXPIRED;
        return true;
    }

    /** Open at Hermes, as far as the adapter can tell: not decided, and not certainly timed out there. */
    private static boolean stillAtHermes(Approval a, Instant now) {
        if (a.state == State.EXPIRED) {
            return !a.goneAtHermes && a.hermesGivesUp != null && !now.isAfter(a.hermesGivesUp);
        }
        return (a.state == State.PENDING || a.state == State.SENDING) && !a.goneAtHermes;
    }

    private @Nullable Approval first(Predicate<Approval> test) {
        for (Approval a : approvals) {
            if (test.test(a)) {
                return a;
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ clarify

    /** A {@code clarify.request}; null (and ignored) without a {@code clarify_id}. */
    synchronized AgentStreamEvent.@Nullable InputRequested clarifyRequested(JsonNode e) {
        String clarifyId = text(e, "clarify_id");
        if (clarifyId == null || clarifyId.isBlank()) {
            log.warn("Run {}: a clarify request without a clarify_id cannot be answered; ignoring it", runId);
            return null;
        }
        List<String> choices = new ArrayList<>();
        for (JsonNode choice : e.path("choices")) {
            if (choice.isTextual()) {
                choices.add(redactor.redact(choice.asText()));
            }
        }
        clarifies.put(clarifyId, State.PENDING);
        if (e.path("multi_select").asBoolean(false)) {
            multiSelect.add(clarifyId);
        }
        ClarifyRequest question = new ClarifyRequest(redactor.redact(orElse(text(e, "question"), "")), choices,
                e.path("multi_select").asBoolean(false));
        return new AgentStreamEvent.InputRequested(runId + ":clarify:" + clarifyId, clarifyId, question, null, null);
    }

    /**
     * A {@code clarify.retired}: nothing for a question the adapter answered; for another, EXPIRED (Hermes'
     * timeout, or the run stopping) or CANCELLED (answered elsewhere: the notice starts with a check mark).
     */
    synchronized @Nullable AgentStreamEvent clarifyRetired(JsonNode e) {
        String clarifyId = text(e, "clarify_id");
        String notice = text(e, "notice");
        retiredNotice = notice;
        State state = clarifyId == null ? null : clarifies.get(clarifyId);
        if (state == null) {
            return null;
        }
        clarifies.put(clarifyId, State.CLOSED);
        if (state != State.PENDING) {
            return null;
        }
        boolean answeredElsewhere = notice != null && notice.startsWith("\u2705");
        return new AgentStreamEvent.InputResolved(clarifyId, answeredElsewhere ? AgentStreamEvent.InputOutcome.CANCELLED
                : AgentStreamEvent.InputOutcome.EXPIRED, null);
    }

    /** Sends a clarify answer: the single string, or for a multi-select question a JSON array inside the string. */
    void answerClarify(String remoteRunId, ClarifyReply reply) {
        boolean multi;
        synchronized (this) {
            State state = clarifies.get(reply.clarifyId());
            if (state == null) {
                throw ChatException.notFound("clarify", reply.clarifyId());
            }
            if (state != State.PENDING) {
                throw ChatException.conflict("Hermes no longer waits for this question");
            }
            clarifies.put(reply.clarifyId(), State.SENDING);
            multi = multiSelect.contains(reply.clarifyId());
        }
        String response;
        if (multi || reply.answer().size() > 1) {
            response = http.json().createArrayNode().addAll(reply.answer().stream()
                    .map(a -> http.json().getNodeFactory().textNode(a)).toList()).toString();
        } else {
            response = reply.answer().get(0);
        }
        ObjectNode body = http.json().createObjectNode().put("clarify_id", reply.clarifyId()).put("response", response);
        try {
            http.call(http.request(http.url("v1", "runs", remoteRunId, "clarify")).post(http.jsonBody(body)).build(),
                    "answering the Hermes clarify question");
        } catch (ChatException e) {
            synchronized (this) {
                clarifies.put(reply.clarifyId(), State.PENDING);
            }
            throw e;
        }
        synchronized (this) {
            clarifies.computeIfPresent(reply.clarifyId(), (id, s) -> s == State.SENDING ? State.ANSWERED : s);
        }
    }

    /**
     * Whether a {@code message.delta} is a clarify prompt or notice rather than answer text: while a question
     * waits (the agent is blocked in the clarify tool, so nothing else writes text), and the notice that
     * follows a {@code clarify.retired}.
     */
    synchronized boolean swallows(String delta) {
        String notice = retiredNotice;
        retiredNotice = null;
        if (notice != null && notice.strip().equals(delta.strip())) {
            return true;
        }
        return clarifies.containsValue(State.PENDING) || clarifies.containsValue(State.SENDING);
    }
}
