package dev.parley.chat.testing;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.Feedback;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.ApprovalReply;
import dev.parley.chat.runtime.ModelOption;
import dev.parley.chat.runtime.SkillOption;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.runtime.StreamPublisher;
import dev.parley.chat.runtime.ToolResult;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A {@link RuntimeAdapter} that plays scripted scenarios on its own threads, for tests: thinking, text,
 * tool calls, todos, clarify questions that wait for the answer, host actions that wait for their
 * result, failures, slow and long streams. It records what the engine asked of it.
 *
 * <p>Its capabilities are configurable, so the engine's fallbacks (no cancel, no clarify …) can be tested.
 *
 * <p>Re-attaching: a script may report where its stream stands ({@link Player#resumePoint}). A runtime that
 * carries runs on without the host is modelled by one instance shared by the engines that come and go:
 * {@link #reattach} plays the run's script again with {@link Player#resumedAfter()} set to the token, and a
 * script that honours it plays exactly the items after that point (as a Bridge replays its log), then goes
 * on. A run the runtime no longer knows ({@link #forget}) ends a re-attached stream {@code INTERRUPTED}.
 */
public final class ScriptedRuntime implements RuntimeAdapter {

    /** A scenario for one run. */
    @FunctionalInterface
    public interface Script {
        void play(RunRequest request, Player player) throws Exception;
    }

    /** Thrown inside a script when the run was cancelled; the runtime then ends the run CANCELLED. */
    public static final class Cancelled extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Cancelled() {
            super("cancelled", null, false, false);
        }
    }

    /** What a script uses to act. One per run; used from the script's thread. */
    public final class Player {
        private final RunRequest request;
        private final StreamPublisher.Emitter<AgentStreamEvent> emitter;
        private final @org.jspecify.annotations.Nullable String resumedAfter;
        final BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
        volatile boolean cancelled;

        Player(RunRequest request, StreamPublisher.Emitter<AgentStreamEvent> emitter,
                @org.jspecify.annotations.Nullable String resumedAfter) {
            this.request = request;
            this.emitter = emitter;
            this.resumedAfter = resumedAfter;
        }

        public RunRequest request() {
            return request;
        }

        /** The token this stream was re-attached after, or null for the run's first stream. */
        public @org.jspecify.annotations.Nullable String resumedAfter() {
            return resumedAfter;
        }

        /** Reports where the stream stands: a re-attachment with this token plays what follows. */
        public void resumePoint(String token) {
            if (cancelled) {
                throw new Cancelled();
            }
            emitter.resumePoint(token);
        }

        public void emit(AgentStreamEvent event) {
            if (cancelled) {
                throw new Cancelled();
            }
            if (!emitter.emit(event)) {
                throw new Cancelled();
            }
        }

        /** Opens a burst: the items up to {@link #endBurst()} arrive together. */
        public void beginBurst() {
            emitter.beginBurst();
        }

        /** Closes the burst {@link #beginBurst()} opened. */
        public void endBurst() {
            emitter.endBurst();
        }

        /** Emits a piece of the answer. */
        public void text(String delta) {
            emit(new AgentStreamEvent.TextDelta(request.assistantMessageId(), delta));
        }

        public void thinking(String messageKey, String delta) {
            emit(new AgentStreamEvent.ThinkingDelta(request.runId() + ":thinking:" + messageKey, delta));
        }

        public void finish() {
            emit(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        }

        /** Waits for the answer to a clarify question (or the cancel). */
        public ClarifyReply awaitAnswer(String clarifyId) throws InterruptedException {
            return await(ClarifyReply.class, clarifyId);
        }

        /** Waits for the decision on an approval the script asked for (or the cancel). */
        public ApprovalReply awaitDecision(String inputId) throws InterruptedException {
            return await(ApprovalReply.class, inputId);
        }

        /** Waits until the engine says the input expired (or the cancel). */
        public void awaitExpiry(String inputId) throws InterruptedException {
            await(Expired.class, inputId);
        }

        /** Waits for a host action's result (or the cancel). */
        public ToolResult awaitToolResult(String executionId) throws InterruptedException {
            return await(ToolResult.class, executionId);
        }

        /** Waits until the run is cancelled. */
        public void awaitCancel() throws InterruptedException {
            while (!cancelled) {
                Object item = inbox.poll(10, TimeUnit.SECONDS);
                if (item == null && !cancelled) {
                    throw new IllegalStateException("no cancel arrived");
                }
            }
            throw new Cancelled();
        }

        public void sleep(long millis) throws InterruptedException {
            long end = System.currentTimeMillis() + millis;
            while (!cancelled && System.currentTimeMillis() < end) {
                inbox.poll(Math.max(1, end - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
            }
            if (cancelled) {
                throw new Cancelled();
            }
        }

        private <T> T await(Class<T> type, String key) throws InterruptedException {
            while (true) {
                if (cancelled) {
                    throw new Cancelled();
                }
                Object item = inbox.poll(30, TimeUnit.SECONDS);
                if (item == null) {
                    throw new IllegalStateException("nothing arrived for " + key);
                }
                if (type.isInstance(item)) {
                    String itemKey = item instanceof ClarifyReply reply ? reply.clarifyId()
                            : item instanceof ApprovalReply decision ? decision.inputId()
                            : item instanceof Expired expired ? expired.inputId()
                            : ((ToolResult) item).executionId();
                    if (itemKey.equals(key)) {
                        return type.cast(item);
                    }
                }
            }
        }
    }

    private final Function<RunRequest, Script> scripts;
    private final Set<Capability> capabilities;
    private final Map<String, Player> players = new ConcurrentHashMap<>();
    private final List<RunRequest> requests = new CopyOnWriteArrayList<>();
    private final List<String> retries = new CopyOnWriteArrayList<>();
    private final List<String> reattachTokens = new CopyOnWriteArrayList<>();
    private final List<String> stoppedOrphans = new CopyOnWriteArrayList<>();
    private volatile @org.jspecify.annotations.Nullable Callable<?> orphanStop;
    private final Set<String> forgotten = ConcurrentHashMap.newKeySet();
    private final java.util.concurrent.atomic.AtomicInteger threadDeletesToRefuse =
            new java.util.concurrent.atomic.AtomicInteger();
    private final List<ClarifyReply> answers = new CopyOnWriteArrayList<>();
    private final List<String> cancels = new CopyOnWriteArrayList<>();
    private final List<ToolResult> toolResults = new CopyOnWriteArrayList<>();
    private final List<Feedback> feedback = new CopyOnWriteArrayList<>();
    private final List<ApprovalReply> decisions = new CopyOnWriteArrayList<>();
    private final List<String> expired = new CopyOnWriteArrayList<>();
    private final List<String> deletedConversations = new CopyOnWriteArrayList<>();
    private volatile boolean expiring;
    private volatile java.time.Duration answerDelay = java.time.Duration.ZERO;
    private volatile boolean answersFail;
    private volatile List<ModelOption> models = List.of();
    private volatile List<SkillOption> skills = List.of();
    private volatile boolean listsAll;
    private volatile dev.parley.chat.runtime.AttachmentSupport attachmentSupport =
            dev.parley.chat.runtime.AttachmentSupport.NONE;
    private final Map<String, Flow.Subscriber<?>> streams = new ConcurrentHashMap<>();

    private ScriptedRuntime(Function<RunRequest, Script> scripts, Set<Capability> capabilities) {
        this.scripts = scripts;
        this.capabilities = capabilities;
    }

    /**
     * A runtime that plays the script chosen per request, with every capability but {@link Capability#RESUME}
     * (it carries its runs itself, as a Bridge does).
     */
    public static ScriptedRuntime of(Function<RunRequest, Script> scripts) {
        return new ScriptedRuntime(scripts, EnumSet.complementOf(EnumSet.of(Capability.RESUME)));
    }

    /** A runtime with the capabilities of {@link #of} that plays one script for every run. */
    public static ScriptedRuntime playing(Script script) {
        return of(request -> script);
    }

    /** Makes every clarify answer take {@code delay} to reach the runtime (a slow runtime); returns this. */
    public ScriptedRuntime withAnswerDelay(java.time.Duration delay) {
        this.answerDelay = delay;
        return this;
    }

    /** Makes every clarify answer fail after {@code delay} (the runtime never takes it); returns this. */
    public ScriptedRuntime withFailingAnswers(java.time.Duration delay) {
        this.answerDelay = delay;
        this.answersFail = true;
        return this;
    }

    private static void pause(java.time.Duration delay) {
        if (delay.isZero()) {
            return;
        }
        try {
            Thread.sleep(delay.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Makes the runtime take these attachments; returns this. */
    public ScriptedRuntime withAttachmentSupport(dev.parley.chat.runtime.AttachmentSupport support) {
        this.attachmentSupport = support;
        return this;
    }

    @Override
    public dev.parley.chat.runtime.AttachmentSupport attachmentSupport() {
        return attachmentSupport;
    }

    /** The same scripts with only these capabilities. */
    public ScriptedRuntime withCapabilities(Set<Capability> only) {
        return new ScriptedRuntime(scripts, only.isEmpty() ? EnumSet.noneOf(Capability.class) : EnumSet.copyOf(only));
    }

    @Override
    public Flow.Publisher<AgentStreamEvent> generateResponse(RunRequest request) {
        requests.add(request);
        return play(request, null);
    }

    @Override
    public Flow.Publisher<AgentStreamEvent> retry(RunRequest request) {
        retries.add(request.runId());
        requests.add(request);
        return play(request, null);
    }

    @Override
    public Flow.Publisher<AgentStreamEvent> reattach(RunRequest request, String resumeToken) {
        requireCapability(Capability.REATTACH);
        requests.add(request);
        if (forgotten.contains(request.runId())) {
            reattachTokens.add(request.runId() + "@" + resumeToken);
            return StreamPublisher.create(emitter -> {
                emitter.emit(new AgentStreamEvent.RunFinished(RunStatus.INTERRUPTED,
                        "the runtime no longer knows the run"));
                emitter.complete();
            });
        }
        return play(request, resumeToken);
    }

    /** The runtime no longer knows this run (it forgot it, or restarted): re-attaching ends it INTERRUPTED. */
    public void forget(String runId) {
        forgotten.add(runId);
    }

    /** What a stop of a run nobody follows does before it is recorded (e.g. hang, as an unreachable runtime). */
    public ScriptedRuntime withOrphanStops(Callable<?> howItStops) {
        this.orphanStop = howItStops;
        return this;
    }

    /** Records the stop, and stops the run's script if one plays. */
    @Override
    public void stopOrphan(String runId, @org.jspecify.annotations.Nullable String resumeToken) {
        requireCapability(Capability.CANCEL);
        if (orphanStop != null) {
            try {
                orphanStop.call();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        stoppedOrphans.add(runId + "@" + resumeToken);
        Player player = players.get(runId);
        if (player != null) {
            player.cancelled = true;
            player.inbox.add("cancel");
        }
    }

    /** {@code runId@resumeToken} for every run the engine stopped because it could not follow it. */
    public List<String> stoppedOrphans() {
        return stoppedOrphans;
    }

    private Flow.Publisher<AgentStreamEvent> play(RunRequest request, @org.jspecify.annotations.Nullable String resumedAfter) {
        Script script = scripts.apply(request);
        return StreamPublisher.create(64, emitter -> {
            Player player = new Player(request, emitter, resumedAfter);
            players.put(request.runId(), player);
            if (resumedAfter != null) {
                // recorded once the run can take answers, so a test that waits for it may answer at once
                reattachTokens.add(request.runId() + "@" + resumedAfter);
            }
            emitter.onCancel(() -> {
                player.cancelled = true;
                player.inbox.add("cancel");
            });
            Thread thread = new Thread(() -> {
                try {
                    script.play(request, player);
                    emitter.complete();
                } catch (Cancelled e) {
                    emitter.emit(new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "cancelled by the runtime"));
                    emitter.complete();
                } catch (Exception e) {
                    emitter.fail(e);
                } finally {
                    players.remove(request.runId(), player);
                }
            }, "script-" + request.runId());
            thread.setDaemon(true);
            thread.start();
        });
    }

    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    @Override
    public void answerClarify(ClarifyReply reply) {
        requireCapability(Capability.CLARIFY);
        Player player = players.get(reply.runId());
        if (player == null) {
            throw new ChatException(ErrorCode.NOT_FOUND, "no such run in the runtime: " + reply.runId());
        }
        pause(answerDelay);
        if (answersFail) {
            throw new ChatException(ErrorCode.RUNTIME_UNAVAILABLE, "injected: the runtime did not take the answer");
        }
        answers.add(reply);
        player.inbox.add(reply);
    }

    /** An input the engine said expired. */
    private record Expired(String inputId) {
    }

    @Override
    public void answerApproval(ApprovalReply reply) {
        requireCapability(Capability.APPROVALS);
        Player player = players.get(reply.runId());
        if (player == null) {
            throw new ChatException(ErrorCode.NOT_FOUND, "no such run in the runtime: " + reply.runId());
        }
        decisions.add(reply);
        player.inbox.add(reply);
    }

    @Override
    public void inputExpired(String runId, String inputId) {
        if (!expiring) {
            RuntimeAdapter.super.inputExpired(runId, inputId);
        }
        expired.add(runId + "/" + inputId);
        Player player = players.get(runId);
        if (player != null) {
            player.inbox.add(new Expired(inputId));
        }
    }

    /** The same scripts; told that an input expired, the runtime goes on (by default it cannot be told). */
    public ScriptedRuntime takingExpiries() {
        ScriptedRuntime copy = new ScriptedRuntime(scripts, capabilities);
        copy.expiring = true;
        return copy;
    }

    /**
     * The same scripts, offering exactly these models and skills and no others (empty lists offer none);
     * without this call the runtime lists none and takes any name.
     */
    public ScriptedRuntime offering(List<ModelOption> offeredModels, List<SkillOption> offeredSkills) {
        ScriptedRuntime copy = new ScriptedRuntime(scripts, capabilities);
        copy.models = List.copyOf(offeredModels);
        copy.skills = List.copyOf(offeredSkills);
        copy.listsAll = true;
        return copy;
    }

    @Override
    public List<ModelOption> models() {
        return models;
    }

    @Override
    public List<SkillOption> skills() {
        return skills;
    }

    @Override
    public boolean offersOnlyListedModels() {
        return listsAll;
    }

    @Override
    public boolean offersOnlyListedSkills() {
        return listsAll;
    }

    /** The approval decisions the engine delivered, in order. */
    public List<ApprovalReply> decisions() {
        return List.copyOf(decisions);
    }

    /** The inputs the engine said expired, as {@code runId/inputId}. */
    public List<String> expiries() {
        return List.copyOf(expired);
    }

    @Override
    public void cancel(String runId) {
        requireCapability(Capability.CANCEL);
        cancels.add(runId);
        Player player = players.get(runId);
        if (player != null) {
            player.cancelled = true;
            player.inbox.add("cancel");
        }
    }

    @Override
    public void submitToolResult(ToolResult result) {
        requireCapability(Capability.HOST_TOOLS);
        toolResults.add(result);
        Player player = players.get(result.runId());
        if (player != null) {
            player.inbox.add(result);
        }
    }

    @Override
    public void sendFeedback(Feedback rating) {
        feedback.add(rating);
    }

    private void requireCapability(Capability capability) {
        if (!capabilities.contains(capability)) {
            throw ChatException.unsupported("scripted runtime without " + capability);
        }
    }

    public List<RunRequest> requests() {
        return requests;
    }

    public List<String> retries() {
        return retries;
    }

    /** {@code runId@resumeToken} for every re-attachment. */
    public List<String> reattachments() {
        return reattachTokens;
    }

    public List<ClarifyReply> answers() {
        return answers;
    }

    /** The conversation keys the engine said were deleted ({@link #threadDeleted}), in order. */
    public List<String> deletedConversations() {
        return deletedConversations;
    }

    @Override
    public void threadDeleted(String conversationKey) {
        if (threadDeletesToRefuse.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new ChatException(ErrorCode.RUNTIME_UNAVAILABLE, "scripted: the runtime cannot forget now");
        }
        deletedConversations.add(conversationKey);
    }

    /** Refuses the next {@code times} {@link #threadDeleted} calls (a runtime that is down for a moment). */
    public ScriptedRuntime refusingThreadDeletes(int times) {
        threadDeletesToRefuse.set(times);
        return this;
    }

    public List<String> cancels() {
        return cancels;
    }

    public List<ToolResult> toolResults() {
        return toolResults;
    }

    public List<Feedback> feedback() {
        return feedback;
    }

    /** True while a script is playing for this run. */
    public boolean isPlaying(String runId) {
        return players.containsKey(runId);
    }
}
