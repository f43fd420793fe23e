package dev.parley.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The checks of {@link ProcessDeathChaosTest} after a restart, and their counts. Counts that must stay zero
 * (lost, duplicated, reused) are counted rather than asserted at once, so the figures line shows them.
 */
final class DeathChecks {
    private static final Duration SETTLE = Duration.ofSeconds(90);

    int runs;
    int kills;
    int streaming;
    int waiting;
    int flushing;
    int ended;
    int reattached;
    int followed;
    int interrupted;
    /** Runs that streamed when the host died and ended INTERRUPTED though nothing kept them from being followed. */
    int streamingInterrupted;
    /** Succeeded runs whose stored text deltas are not exactly their final answer: a gap or a repeat. */
    int textGapsOrRepeats;
    int answered;
    int resolvedClean;
    long eventsChecked;
    long lost;
    long duplicated;
    long reused;
    long unflushed;
    int newMessages;

    void moment(String moment) {
        runs++;
        switch (moment) {
            case "streaming" -> streaming++;
            case "waiting" -> waiting++;
            case "flushing" -> flushing++;
            default -> ended++;
        }
    }

    /**
     * The run after the restart: terminal, or waiting for an input it asked before the kill (re-attached),
     * which is then answered and must lead to success. A run that was streaming is re-attached too and
     * carried on to its end (RUNNING meanwhile, so it is awaited): the Bridge simulator keeps every run's
     * frames and the store its resume point. It may end INTERRUPTED only if an answer was given just before
     * the kill (an answer accepted but not logged leaves the run waiting in the store, and whether the
     * answer reached the Bridge is unknown, so it is stopped there and interrupted).
     */
    void resolve(Rest rest, TrackedRun run) {
        JsonNode state = rest.awaitState(run.runId(), s -> !isActive(s), SETTLE, "a terminal or waiting state");
        String status = state.get("run").get("status").asText();
        boolean streamedAtKill = run.momentAtKill().equals("streaming") || run.momentAtKill().equals("flushing");
        if (streamedAtKill && status.equals("SUCCEEDED")) {
            followed++;
        }
        if (streamedAtKill && status.equals("INTERRUPTED") && !run.hasAnswers()) {
            streamingInterrupted++;
        }
        if (status.equals("WAITING_FOR_INPUT")) {
            reattached++;
            assertThat(state.get("pendingInputs")).as("a waiting run's inputs, after the restart").isNotEmpty();
            for (JsonNode input : state.get("pendingInputs")) {
                Rest.Answer answer = answer(rest, run.runId(), input.get("inputId").asText(), input.get("kind").asText());
                assertThat(answer.status()).as("answering %s after the restart: %s", input, answer.body()).isEqualTo(200);
                run.answered(input.get("inputId").asText());
                answered++;
            }
            state = rest.awaitState(run.runId(), Rest::terminal, SETTLE, "its end after the answer");
            assertThat(state.get("run").get("status").asText()).as("a re-attached run, answered").isEqualTo("SUCCEEDED");
        } else {
            if (status.equals("INTERRUPTED")) {
                interrupted++;
            }
            assertThat(state.get("pendingInputs")).as("a finished run's pending inputs").isEmpty();
        }
    }

    /** Answers one pending input just before the kill (it may or may not reach the runtime). */
    void answerBeforeKill(Rest rest, TrackedRun run, JsonNode input) {
        Rest.Answer answer = answer(rest, run.runId(), input.get("inputId").asText(), input.get("kind").asText());
        if (answer.ok()) {
            run.answered(input.get("inputId").asText());
        }
    }

    /**
     * The replay from seq 0: ordered, no gap but the one the restart leaves above every seq a client held,
     * identical to what the browser saw wherever the store has the seq, one terminal event at the end, and
     * folding into exactly the stored messages. Inputs the run asked and nobody answered are not answerable.
     */
    void verifyReplay(Rest rest, TrackedRun run) {
        List<SseClient.Event> replay = Replays.readAll(rest.base(), run.runId());
        eventsChecked += replay.size();
        Map<Long, String> stored = new HashMap<>();
        long previous = 0;
        int jumps = 0;
        int allowedJumps = run.momentAtKill().equals("ended") ? 0 : 1;
        List<SseClient.Event> seen = run.seen();
        long maxSeen = seen.stream().mapToLong(SseClient.Event::seq).max().orElse(0);
        for (SseClient.Event event : replay) {
            if (event.seq() <= previous) {
                duplicated++;
                continue;
            }
            if (event.seq() != previous + 1) {
                jumps++;
                if (jumps > allowedJumps) {
                    lost += event.seq() - previous - 1;
                } else if (event.seq() <= maxSeen) {
                    reused++;
                }
            }
            stored.put(event.seq(), event.data());
            previous = event.seq();
        }
        for (SseClient.Event event : seen) {
            String data = stored.get(event.seq());
            if (data == null) {
                unflushed++;
            } else if (!data.equals(event.data())) {
                reused++;
            }
        }
        assertThat(replay.stream().filter(SseClient.Event::terminal)).as("terminal events of %s", run.runId()).hasSize(1);
        assertThat(replay.get(replay.size() - 1).terminal()).isTrue();
        checkTextAgainstTheAnswer(replay);
        assertThat(Replays.folded(replay)).as("the stored messages of %s are its events, folded", run.runId())
                .isEqualTo(Replays.stored(rest, run.sessionId(), run.runId()));
        for (String inputId : unresolvedInputs(replay)) {
            if (run.wasAnswered(inputId)) {
                continue;
            }
            Rest.Answer late = answer(rest, run.runId(), inputId, "clarify");
            assertThat(late.status()).as("answering %s of the ended run %s: %s", inputId, run.runId(), late.body())
                    .isEqualTo(409);
            resolvedClean++;
        }
        run.verified(replay);
    }

    /** A finished run reads the same after a later restart. */
    void unchangedSince(Rest rest, TrackedRun run) {
        String now = TrackedRun.digest(Replays.readAll(rest.base(), run.runId()));
        if (!now.equals(run.replayDigest())) {
            reused++;
        }
    }

    /** The thread takes a new message, which succeeds. */
    void newMessageIsTaken(Rest rest, String sessionId) {
        String runId = rest.startRun(sessionId, "and now something plain");
        JsonNode state = rest.awaitState(runId, Rest::terminal, SETTLE, "its end");
        assertThat(state.get("run").get("status").asText()).isEqualTo("SUCCEEDED");
        newMessages++;
    }

    /**
     * A run that succeeded streamed its answer as deltas, then the whole answer: their concatenation must be
     * that answer exactly, also for a run followed across the kill (nothing the Bridge sent is missing from
     * the log, nothing is there twice).
     */
    private void checkTextAgainstTheAnswer(List<SseClient.Event> replay) {
        StringBuilder streamed = new StringBuilder();
        String whole = null;
        boolean succeeded = false;
        for (SseClient.Event event : replay) {
            AgentStreamEvent parsed = Replays.parse(event).event();
            if (parsed instanceof AgentStreamEvent.TextDelta delta) {
                streamed.append(delta.delta());
            } else if (parsed instanceof AgentStreamEvent.TextFinal text) {
                whole = text.text();
            } else if (parsed instanceof AgentStreamEvent.RunFinished end) {
                succeeded = end.status() == dev.parley.chat.model.RunStatus.SUCCEEDED;
            }
        }
        if (succeeded && whole != null && !whole.equals(streamed.toString())) {
            textGapsOrRepeats++;
        }
    }

    private static Set<String> unresolvedInputs(List<SseClient.Event> replay) {
        Set<String> open = new LinkedHashSet<>();
        for (SseClient.Event event : replay) {
            RunEvent parsed = Replays.parse(event);
            if (parsed.event() instanceof AgentStreamEvent.InputRequested asked) {
                open.add(asked.inputId());
            } else if (parsed.event() instanceof AgentStreamEvent.InputResolved resolved) {
                open.remove(resolved.inputId());
            }
        }
        return open;
    }

    private static boolean isActive(JsonNode state) {
        String status = state.get("run").get("status").asText();
        return status.equals("RUNNING") || status.equals("QUEUED");
    }

    private static Rest.Answer answer(Rest rest, String runId, String inputId, String kind) {
        String body = switch (kind) {
            case "approval" -> "{\"decision\":\"allow_once\"}";
            case "client_tool" -> "{\"result\":\"done\"}";
            default -> "{\"answer\":\"Markdown\"}";
        };
        return rest.post("/api/chat/runs/" + runId + "/inputs/" + inputId, body);
    }
}
