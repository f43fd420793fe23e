package dev.parley.chat.engine.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.engine.AnswerSuggestions;
import dev.parley.chat.engine.SuggestionProvider;
import dev.parley.chat.engine.SuggestionRequest;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.Suggestions;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.StoreBatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follow-up suggestions: after a run SUCCEEDED, asks the host's {@link SuggestionProvider} for prompts and stores
 * them on the run's answer ({@link AssistantMessage#withSuggestions}).
 *
 * <ul>
 *   <li><b>Never delays a run</b>: {@link #runEnded} only notes the run; the call runs on a worker.</li>
 *   <li><b>One call per conversation thread at a time</b>: a run that ends while its thread's call is in flight
 *       waits for it (only the newest such run: an older waiting one is no longer the last answer) and is asked
 *       for afterwards.</li>
 *   <li><b>Skipped while a run is active</b> on the thread (stored as QUEUED, RUNNING or WAITING_FOR_INPUT),
 *       and a result that comes after a newer run started on the thread — here ({@link #runStarted}) or, as far
 *       as the store shows, on another instance — is dropped: suggestions belong to the last answer only.</li>
 *   <li><b>Bounded</b>: a call that takes longer than the timeout is abandoned (its worker interrupted) and its
 *       thread's slot freed.</li>
 *   <li><b>Failures change nothing</b>: a provider that throws, times out or returns nothing leaves the answer
 *       without suggestions, logged without any text of the conversation.</li>
 * </ul>
 *
 * <p>Thread-safe: the slots are guarded by one monitor, held only for in-memory bookkeeping (never during a
 * provider call or a store access), so {@link #runStarted} on a run's path never waits for the store. A result
 * is checked for staleness right before it is stored (the flag, then the store's active runs); a run stored in
 * the moment between that check and the write can still see it stored on the previous answer, which the page
 * no longer shows as the last. A slot lives only while a call is in flight or waited for.
 */
public final class SuggestionWork {
    private static final Logger log = LoggerFactory.getLogger(SuggestionWork.class);
    /** A prompt longer than this is dropped: a suggestion is a short prompt, not a message. */
    static final int MAX_PROMPT_LENGTH = 500;
    private static final Set<RunStatus> ACTIVE = EnumSet.of(RunStatus.QUEUED, RunStatus.RUNNING,
            RunStatus.WAITING_FOR_INPUT);

    private final ChatStore store;
    private final ExecutorService work;
    private final ScheduledExecutorService timers;
    private final @Nullable SuggestionProvider provider;
    private final int maxSuggestions;
    private final Duration timeout;
    private final Map<String, Slot> slots = new HashMap<>();
    /**
     * The answers of the runs that ended here lately (guarded by {@link #slots}): a run stays in memory a moment
     * after {@link #runEnded}, and an answer of one in this set is not waited for as one still being written.
     */
    private final Set<String> endedLately = java.util.Collections.newSetFromMap(new java.util.LinkedHashMap<>() {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > 1_024;
        }
    });
    /** Who waits for the suggestions of answers still being written, by answer id (guarded by {@link #slots}). */
    private final Map<String, List<CompletableFuture<AnswerSuggestions>>> early = new HashMap<>();
    private volatile boolean closed;

    /** A conversation thread's call in flight, the run waiting for it, and who waits for their results. */
    private static final class Slot {
        @Nullable Run inFlight;
        /** Set when a run started on the thread after {@link #inFlight} ended: its result is stale. */
        volatile boolean newerRunStarted;
        @Nullable Run waiting;
        final Map<String, List<CompletableFuture<AnswerSuggestions>>> waiters = new HashMap<>();
    }

    /**
     * @param provider null for none: nothing is ever asked
     * @param maxSuggestions at least 1
     * @param timeout positive
     */
    public SuggestionWork(ChatStore store, ExecutorService work, ScheduledExecutorService timers,
            @Nullable SuggestionProvider provider, int maxSuggestions, Duration timeout) {
        this.store = store;
        this.work = work;
        this.timers = timers;
        this.provider = provider;
        this.maxSuggestions = maxSuggestions;
        this.timeout = timeout;
    }

    /** A run started on {@code threadId}: a call in flight there makes suggestions for an answer no longer last. */
    public void runStarted(String threadId) {
        if (provider == null) {
            return;
        }
        synchronized (slots) {
            Slot slot = slots.get(threadId);
            if (slot != null) {
                slot.newerRunStarted = true;
                Run dropped = slot.waiting;
                slot.waiting = null;
                if (dropped != null) {
                    answer(slot, dropped.assistantMessageId(), List.of(), false);
                }
            }
        }
    }

    /**
     * A run ended (called once, before its end is shown, so a client that sees the end and asks for the
     * suggestions finds them pending). Only a SUCCEEDED run's answer gets suggestions. Returns at once.
     */
    public void runEnded(Run run) {
        if (provider == null) {
            return;
        }
        synchronized (slots) {
            endedLately.add(run.assistantMessageId());
            List<CompletableFuture<AnswerSuggestions>> waiting = early.remove(run.assistantMessageId());
            if (run.status() != RunStatus.SUCCEEDED || closed) {
                if (waiting != null) {
                    waiting.forEach(f -> f.complete(new AnswerSuggestions(run.assistantMessageId(), List.of(), false)));
                }
                return;
            }
            Slot slot = slots.computeIfAbsent(run.threadId(), id -> new Slot());
            if (waiting != null) {
                slot.waiters.computeIfAbsent(run.assistantMessageId(), id -> new ArrayList<>()).addAll(waiting);
            }
            if (slot.inFlight != null) {
                Run replaced = slot.waiting;
                slot.waiting = run;
                if (replaced != null) {
                    answer(slot, replaced.assistantMessageId(), List.of(), false);
                }
                return;
            }
            slot.inFlight = run;
            slot.newerRunStarted = false;
        }
        launch(run);
    }

    /**
     * The answer's suggestions: at once if they are stored or none are coming; else when this engine has them,
     * or after {@code wait} with {@code pending} true.
     */
    public CompletableFuture<AnswerSuggestions> find(AssistantMessage answer, Duration wait) {
        return find(answer, wait, false);
    }

    /**
     * As {@link #find(AssistantMessage, Duration)}; {@code heldHere} says the answer's run is still in this engine's
     * memory, so it is still being written even where the store already has the answer complete (its end is
     * stored a moment before this engine is told it ended).
     */
    public CompletableFuture<AnswerSuggestions> find(AssistantMessage answer, Duration wait, boolean heldHere) {
        if (answer.suggestions() != null) {
            return CompletableFuture.completedFuture(
                    new AnswerSuggestions(answer.id(), answer.suggestions().prompts(), false));
        }
        CompletableFuture<AnswerSuggestions> result = new CompletableFuture<>();
        synchronized (slots) {
            Slot slot = slots.get(answer.threadId());
            boolean coming = slot != null && (isFor(slot.inFlight, answer) || isFor(slot.waiting, answer));
            // an answer still being written gets suggestions once its run succeeds
            boolean writing = provider != null && !closed && (answer.status() == MessageStatus.IN_PROGRESS
                    || heldHere && !endedLately.contains(answer.id()));
            if (!coming && !writing) {
                return CompletableFuture.completedFuture(new AnswerSuggestions(answer.id(), List.of(), false));
            }
            if (wait.isZero()) {
                return CompletableFuture.completedFuture(new AnswerSuggestions(answer.id(), List.of(), true));
            }
            (coming ? slot.waiters : early).computeIfAbsent(answer.id(), id -> new ArrayList<>()).add(result);
        }
        try {
            timers.schedule(() -> {
                if (result.complete(new AnswerSuggestions(answer.id(), List.of(), true))) {
                    forget(answer.id(), result);
                }
            }, wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            result.complete(new AnswerSuggestions(answer.id(), List.of(), true));
        }
        return result;
    }

    /** Drops a waiter that timed out, so that an answer never ended (its run lost) leaves nothing behind. */
    private void forget(String answerId, CompletableFuture<AnswerSuggestions> waiter) {
        synchronized (slots) {
            List<CompletableFuture<AnswerSuggestions>> waiting = early.get(answerId);
            if (waiting != null && waiting.remove(waiter) && waiting.isEmpty()) {
                early.remove(answerId);
            }
        }
    }

    /** Stops: nothing new is asked, and whoever waits is answered (pending) at once. */
    public void close() {
        closed = true;
        synchronized (slots) {
            early.forEach((id, futures) -> futures.forEach(f -> f.complete(new AnswerSuggestions(id, List.of(), true))));
            early.clear();
            for (Slot slot : slots.values()) {
                slot.waiters.forEach((id, futures) -> futures.forEach(
                        f -> f.complete(new AnswerSuggestions(id, List.of(), true))));
                slot.waiters.clear();
            }
        }
    }

    private static boolean isFor(@Nullable Run run, AssistantMessage answer) {
        return run != null && run.assistantMessageId().equals(answer.id());
    }

    private void launch(Run run) {
        SuggestionProvider asked = provider;
        Call call = new Call(run);
        try {
            call.task = work.submit(() -> call.run(asked));
        } catch (RejectedExecutionException e) {
            log.debug("Run {}: no follow-up suggestions, the engine is closing", run.id());
            done(run, null);
            return;
        }
        try {
            timers.schedule(call::timedOut, timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            log.debug("Run {}: its follow-up suggestions are not timed, the engine is closing", run.id());
        }
    }

    /** One call to the provider; ends once, by its result, its failure or its timeout. */
    private final class Call {
        final Run run;
        volatile @Nullable Future<?> task;
        private boolean ended;

        Call(Run run) {
            this.run = run;
        }

        void run(SuggestionProvider asked) {
            Suggestions made = null;
            try {
                Optional<SuggestionRequest> request = request(run);
                if (request.isPresent()) {
                    made = clean(asked.suggest(request.get()));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                log.debug("Run {}: follow-up suggestions interrupted", run.id());
            } catch (Exception | LinkageError e) {
                log.warn("Run {}: follow-up suggestions failed ({}); the answer has none", run.id(),
                        e.getClass().getName());
            }
            if (end()) {
                done(run, made);
            }
        }

        void timedOut() {
            if (end()) {
                log.warn("Run {}: follow-up suggestions took longer than {}; the answer has none", run.id(), timeout);
                Future<?> running = task;
                if (running != null) {
                    running.cancel(true);
                }
                done(run, null);
            }
        }

        private synchronized boolean end() {
            if (ended) {
                return false;
            }
            ended = true;
            return true;
        }
    }

    /** What the provider is asked, or empty when the answer is not (or no longer) one to make suggestions for. */
    private Optional<SuggestionRequest> request(Run run) {
        if (!store.findThreadRuns(run.threadId(), ACTIVE).isEmpty()) {
            log.debug("Run {}: no follow-up suggestions, a newer run is active on its thread", run.id());
            return Optional.empty();
        }
        Optional<Message> stored = store.findMessage(run.assistantMessageId());
        if (stored.isEmpty() || !(stored.get() instanceof AssistantMessage answer)
                || answer.status() != MessageStatus.COMPLETED || answer.text().isBlank()) {
            log.debug("Run {}: no follow-up suggestions, its answer is not stored complete", run.id());
            return Optional.empty();
        }
        return Optional.of(new SuggestionRequest(run.ownerId(), run.threadId(), run.id(), answer.id(), run.input(),
                answer.text(), maxSuggestions));
    }

    /** At most {@code maxSuggestions} distinct, stripped, non-blank prompts of a sane length; null if none. */
    private @Nullable Suggestions clean(@Nullable Suggestions made) {
        if (made == null) {
            return null;
        }
        Set<String> kept = new LinkedHashSet<>();
        for (String prompt : made.prompts()) {
            String p = prompt.strip();
            if (!p.isEmpty() && p.length() <= MAX_PROMPT_LENGTH && kept.size() < maxSuggestions) {
                kept.add(p);
            }
        }
        return kept.isEmpty() ? null : new Suggestions(List.copyOf(kept), made.usage());
    }

    /** The call for {@code run} ended: stores its result unless stale, then asks for the run waiting, if any. */
    private void done(Run run, @Nullable Suggestions made) {
        Slot slot;
        synchronized (slots) {
            slot = slots.get(run.threadId());
            if (slot == null) {
                return;
            }
        }
        List<String> stored = List.of();
        if (made != null && store(run, made, slot)) {
            stored = made.prompts();
        }
        Run next;
        synchronized (slots) {
            answer(slot, run.assistantMessageId(), stored, false);
            next = slot.waiting;
            slot.waiting = null;
            slot.inFlight = next;
            slot.newerRunStarted = false;
            if (next == null || closed) {
                if (next != null) {
                    answer(slot, next.assistantMessageId(), List.of(), false);
                }
                slot.waiters.forEach((id, futures) -> futures.forEach(
                        f -> f.complete(new AnswerSuggestions(id, List.of(), false))));
                slots.remove(run.threadId());
                return;
            }
        }
        launch(next);
    }

    /** Stores the suggestions on the answer; false if they could not be (the thread is gone, a newer run, a failure). */
    private boolean store(Run run, Suggestions made, Slot slot) {
        try {
            if (slot.newerRunStarted || closed) {
                log.debug("Run {}: follow-up suggestions dropped, a newer run started on its thread", run.id());
                return false;
            }
            if (!store.findThreadRuns(run.threadId(), ACTIVE).isEmpty()) {
                log.debug("Run {}: follow-up suggestions dropped, a newer run is active on its thread", run.id());
                return false;
            }
            Optional<Message> stored = store.findMessage(run.assistantMessageId());
            if (stored.isEmpty() || !(stored.get() instanceof AssistantMessage answer)) {
                return false;
            }
            store.write(StoreBatch.builder().message(answer.withSuggestions(made)).build());
            return true;
        } catch (ChatException e) {
            log.warn("Run {}: storing its follow-up suggestions failed ({}); the answer has none", run.id(), e.code());
            return false;
        } catch (RuntimeException e) {
            log.warn("Run {}: storing its follow-up suggestions failed ({}); the answer has none", run.id(),
                    e.getClass().getName());
            return false;
        }
    }

    private static void answer(Slot slot, String messageId, List<String> prompts, boolean pending) {
        List<CompletableFuture<AnswerSuggestions>> futures = slot.waiters.remove(messageId);
        if (futures != null) {
            futures.forEach(f -> f.complete(new AnswerSuggestions(messageId, prompts, pending)));
        }
    }
}
