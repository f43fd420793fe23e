package dev.parley.simulation;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.ApprovalReply;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.runtime.RunProgress;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.runtime.StreamPublisher;
import dev.parley.chat.runtime.ToolResult;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The runtime the simulated engines drive: the "agent" a run talks to, one per simulated world (it outlives a
 * host's restart, as a Bridge would). A run's message names its script ({@code sim:<kind>}, see
 * {@link Script}); the script plays on the runtime's own thread into the run's {@link Journal}, which every
 * stream of the run reads — the first one and those of hosts that re-attach after a restart
 * ({@link Capability#REATTACH}), from the resume point they name, and those that continue a run from the store
 * ({@link Capability#RESUME}), from its end. As on a Bridge, a host that closes its stream
 * does not stop the run; a cancel does. It records what reached it — every answer and tool result per input,
 * every request with the history it was given, every item a run sent — for the checks, and misbehaves on
 * request of the {@link Faults}: an answer that fails or is slow to arrive. Thread-safe.
 */
final class SimRuntime implements RuntimeAdapter {
    /** What a run does, chosen by its message. */
    enum Script {
        /** Thinks, streams a few words, reports usage, succeeds. */
        STREAM,
        /** Calls the host action {@code lookup} (no approval) and answers with its result. */
        TOOL,
        /** Calls the host action {@code refund}, which a person approves first. */
        APPROVAL,
        /** Asks the person a question (sometimes with a deadline) and answers with the reply. */
        CLARIFY,
        /** Asks the person to approve a command of its own. */
        ASK_APPROVAL,
        /** Calls the tool the person's browser runs ({@code pick_date}). */
        CLIENT_TOOL,
        /** Streams a little, then reports a failure. */
        FAIL,
        /** Streams a little, then its stream breaks. */
        THROW,
        /** Streams a little, then waits until it is cancelled. */
        HANG,
        /** Streams a little, then its stream ends without a final event. */
        ABRUPT;

        String message() {
            return "sim:" + name().toLowerCase(java.util.Locale.ROOT);
        }

        static Script of(String message) {
            if (message.startsWith("sim:")) {
                String kind = message.substring(4).split(" ", 2)[0].toUpperCase(java.util.Locale.ROOT);
                for (Script script : values()) {
                    if (script.name().equals(kind)) {
                        return script;
                    }
                }
            }
            return STREAM;
        }
    }

    /** What the runtime received for one run. */
    record Received(RunRequest request, List<String> historyIds, boolean retry) {
    }

    /**
     * A file a run's question listed, as the runtime read it through the request: the SHA-256 and length of its
     * bytes, or the code it could not be read with and whether a fault was injected meanwhile.
     */
    record ReceivedFile(RunRequest request, MessageAttachment listed, @org.jspecify.annotations.Nullable String sha256,
            long size, @org.jspecify.annotations.Nullable ErrorCode failure, boolean faulted) {
    }

    private final VirtualTime time;
    private final Faults faults;
    private final Map<String, Player> players = new ConcurrentHashMap<>();
    /** Answers and tool results that reached the runtime, per "runId/inputOrExecutionId". */
    private final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private final List<ReceivedFile> files = new CopyOnWriteArrayList<>();
    /** Where each answer was first delivered from, and where a second delivery came from (for the report). */
    private final Map<String, String> firstDeliveries = new ConcurrentHashMap<>();
    private final Map<String, String> duplicates = new ConcurrentHashMap<>();
    private final Set<String> forgotten = ConcurrentHashMap.newKeySet();
    private final Set<String> started = ConcurrentHashMap.newKeySet();
    private final Map<String, Journal> journals = new ConcurrentHashMap<>();

    SimRuntime(VirtualTime time, Faults faults) {
        this.time = time;
        this.faults = faults;
    }

    Map<String, AtomicInteger> deliveries() {
        return deliveries;
    }

    /** How a second delivery of an input came about: both callers' stacks, engine frames only. */
    String duplicateOf(String delivery) {
        return duplicates.getOrDefault(delivery, "");
    }

    private static String where(Throwable trace) {
        StringBuilder frames = new StringBuilder();
        for (StackTraceElement frame : trace.getStackTrace()) {
            if (frame.getClassName().startsWith("dev.parley.chat")) {
                frames.append("\n        at ").append(frame);
            }
        }
        return frames.toString();
    }

    List<Received> received() {
        return received;
    }

    /** Every file a run's question listed, as the runtime read it. */
    List<ReceivedFile> files() {
        return files;
    }

    Set<String> forgottenConversations() {
        return forgotten;
    }

    /** Every item run {@code runId} sent, in order (empty if it never started here). */
    List<AgentStreamEvent> sent(String runId) {
        Journal journal = journals.get(runId);
        return journal == null ? List.of() : journal.items();
    }

    /** Ends every script still playing (the simulation is over). */
    void stopAll() {
        players.values().forEach(Player::cancel);
    }

    @Override
    public Set<Capability> capabilities() {
        return EnumSet.of(Capability.CANCEL, Capability.CLARIFY, Capability.APPROVALS, Capability.HOST_TOOLS,
                Capability.REATTACH, Capability.RESUME);
    }

    /** The types of the files the simulation uploads ({@link FileOps#FILES}). */
    @Override
    public AttachmentSupport attachmentSupport() {
        return AttachmentSupport.of("image/png", "application/pdf", "text/plain");
    }

    @Override
    public Flow.Publisher<AgentStreamEvent> generateResponse(RunRequest request) {
        return play(request, false);
    }

    @Override
    public Flow.Publisher<AgentStreamEvent> retry(RunRequest request) {
        return play(request, true);
    }

    private Flow.Publisher<AgentStreamEvent> play(RunRequest request, boolean retry) {
        faults.runtimeCall("generateResponse");
        if (!started.add(request.runId())) {
            // as a Bridge answers a second POST /run with the same id: a run id is started once (an instance
            // that took a run over may launch one a dead instance had launched already)
            throw new ChatException(ErrorCode.CONFLICT, "simulated: run " + request.runId() + " was started before");
        }
        List<String> history = request.history().messages().stream()
                .filter(m -> m.kind().isTopLevel()).map(Message::id).toList();
        received.add(new Received(request, history, retry));
        readFiles(request);
        Script script = Script.of(request.userMessage());
        Journal journal = new Journal();
        journals.put(request.runId(), journal);
        Player player = new Player(request, journal);
        players.put(request.runId(), player);
        Thread thread = new Thread(() -> {
            try {
                player.play(script);
                journal.end(null);
            } catch (Cancelled e) {
                journal.add(new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "cancelled by the runtime"));
                journal.end(null);
            } catch (Exception e) {
                journal.end(e);
            } finally {
                players.remove(request.runId(), player);
            }
        }, "sim-script-" + request.runId());
        thread.setDaemon(true);
        thread.start();
        return follow(request.runId(), journal, 0);
    }

    /** Reads the bytes of each file the question lists, as a runtime passing them to its model does. */
    private void readFiles(RunRequest request) {
        for (MessageAttachment file : request.attachments()) {
            long faultsBefore = faults.injectedHere();
            try {
                byte[] bytes = request.attachmentContent().readAllBytes(file);
                files.add(new ReceivedFile(request, file, FileOps.sha256(bytes), bytes.length, null, false));
            } catch (ChatException e) {
                files.add(new ReceivedFile(request, file, null, -1, e.code(), faults.injectedHere() > faultsBefore));
            }
        }
    }

    /**
     * Re-attaches as a Bridge does: the run's items after the resume point (the number of items before it),
     * then on to its end; a run this runtime never started ends INTERRUPTED at once.
     */
    @Override
    public Flow.Publisher<AgentStreamEvent> reattach(RunRequest request, String resumeToken) {
        faults.runtimeCall("reattach");
        Journal journal = journals.get(request.runId());
        if (journal == null) {
            return unknownRun();
        }
        return follow(request.runId(), journal, Integer.parseInt(resumeToken));
    }

    /**
     * Continues a run from what the host stored, as the agent loop does after a restart: the engine asks this
     * of a run that waited only for approvals it asked. The script still waits for those results, so nothing
     * it sent is sent again: the stream goes on from the journal's end. A run this runtime never started ends
     * INTERRUPTED at once.
     */
    @Override
    public Flow.Publisher<AgentStreamEvent> resume(RunRequest request, RunProgress progress) {
        faults.runtimeCall("resume");
        Journal journal = journals.get(request.runId());
        if (journal == null) {
            return unknownRun();
        }
        return follow(request.runId(), journal, journal.items().size());
    }

    /** The stream of a run this runtime never started: it ends INTERRUPTED at once, as a Bridge's would. */
    private static Flow.Publisher<AgentStreamEvent> unknownRun() {
        return StreamPublisher.create(emitter -> {
            emitter.emit(new AgentStreamEvent.RunFinished(RunStatus.INTERRUPTED, "the runtime does not know the run"));
            emitter.complete();
        });
    }

    /** A stream of the journal's items from index {@code from}, each followed by its resume point; on its own thread. */
    private Flow.Publisher<AgentStreamEvent> follow(String runId, Journal journal, int from) {
        return StreamPublisher.create(16, emitter -> {
            Thread thread = new Thread(() -> {
                try {
                    emitter.resumePoint(String.valueOf(from));
                    for (int next = from; ; next++) {
                        AgentStreamEvent item = journal.await(next);
                        if (item == null) {
                            if (journal.failure() != null) {
                                emitter.fail(journal.failure());
                            } else {
                                emitter.complete();
                            }
                            return;
                        }
                        if (!emitter.emit(item)) {
                            return;
                        }
                        emitter.resumePoint(String.valueOf(next + 1));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "sim-stream-" + runId);
            thread.setDaemon(true);
            thread.start();
        });
    }

    @Override
    public void cancel(String runId) {
        faults.runtimeCall("cancel");
        Player player = players.get(runId);
        if (player != null) {
            player.cancel();
        }
    }

    @Override
    public void answerClarify(ClarifyReply reply) {
        deliver(reply.runId(), reply.clarifyId(), reply);
    }

    @Override
    public void answerApproval(ApprovalReply reply) {
        deliver(reply.runId(), reply.inputId(), reply);
    }

    @Override
    public void submitToolResult(ToolResult result) {
        deliver(result.runId(), result.executionId(), result);
    }

    @Override
    public void inputExpired(String runId, String inputId) {
        Player player = players.get(runId);
        if (player != null) {
            player.inbox.add(new Expired(inputId));
        }
    }

    @Override
    public void threadDeleted(String conversationKey) {
        forgotten.add(conversationKey);
    }

    private void deliver(String runId, String key, Object answer) {
        faults.slowAnswer();
        if (faults.answerRefused()) {
            throw new ChatException(ErrorCode.RUNTIME_UNAVAILABLE, "simulated: the runtime did not take it");
        }
        Player player = players.get(runId);
        if (player == null) {
            throw new ChatException(ErrorCode.NOT_FOUND, "no such run in the runtime: " + runId);
        }
        String delivery = runId + "/" + key;
        if (deliveries.computeIfAbsent(delivery, k -> new AtomicInteger()).incrementAndGet() > 1) {
            duplicates.put(delivery, where(new Throwable()) + "\n      first:" + firstDeliveries.get(delivery));
        } else {
            firstDeliveries.put(delivery, where(new Throwable()));
        }
        player.inbox.add(answer);
    }

    /** Thrown inside a script when its run was cancelled. */
    private static final class Cancelled extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Cancelled() {
            super("cancelled", null, false, false);
        }
    }

    private record Expired(String inputId) {
    }

    /** One run's script, on its own thread. */
    private final class Player {
        private final RunRequest request;
        private final Journal journal;
        private final BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
        private volatile boolean cancelled;

        Player(RunRequest request, Journal journal) {
            this.request = request;
            this.journal = journal;
        }

        void cancel() {
            cancelled = true;
            inbox.add("cancel");
        }

        /** Sends an item; returns the resume token of the place right after it. */
        String emit(AgentStreamEvent event) {
            if (cancelled) {
                throw new Cancelled();
            }
            return String.valueOf(journal.add(event));
        }

        /** The resume token of the place after the next item (a question carries it, as Hermes' do). */
        String nextToken() {
            return String.valueOf(journal.items().size() + 1);
        }

        void text(String words) {
            for (String word : words.split("(?<= )")) {
                emit(new AgentStreamEvent.TextDelta(request.assistantMessageId(), word));
            }
        }

        void play(Script script) throws Exception {
            String run = request.runId();
            emit(new AgentStreamEvent.ThinkingDelta(run + ":thinking", "Let me see. "));
            switch (script) {
                case STREAM -> text("Here is a short answer for you.");
                case TOOL -> callTool("x1", "lookup", "{\"q\":\"weather\"}");
                case APPROVAL -> callTool("x1", "refund", "{\"order\":7}");
                case CLIENT_TOOL -> callTool("c1", "pick_date", "{}");
                case CLARIFY -> {
                    Instant deadline = faults.deadline() ? Instant.ofEpochMilli(time.millis() + 400) : null;
                    emit(new AgentStreamEvent.InputRequested(run + ":clarify", "ask-1",
                            new ClarifyRequest("Which city?", List.of("Paris", "Rome"), false), deadline, nextToken()));
                    Object reply = await("ask-1");
                    text(reply instanceof ClarifyReply answer ? "You chose " + answer.answer() + "." : "No answer.");
                }
                case ASK_APPROVAL -> {
                    emit(new AgentStreamEvent.InputRequested(run + ":approval", "cmd-1", new ApprovalRequest("terminal",
                            "{\"command\":\"rm -rf /tmp/x\"}", "recursive delete", List.of(ApprovalDecision.ALLOW_ONCE,
                                    ApprovalDecision.DENY), false), null, nextToken()));
                    Object reply = await("cmd-1");
                    text(reply instanceof ApprovalReply decision ? "Decided: " + decision.decision() + "." : "Expired.");
                }
                case FAIL -> {
                    text("Trying. ");
                    emit(new AgentStreamEvent.RunFailed("MODEL_ERROR", "simulated failure"));
                    return;
                }
                case THROW -> {
                    text("Trying. ");
                    throw new IllegalStateException("simulated: the stream broke");
                }
                case HANG -> {
                    text("Working on it. ");
                    while (!cancelled) {
                        Object item = inbox.poll(60, TimeUnit.SECONDS);
                        if (item == null) {
                            return;
                        }
                    }
                    throw new Cancelled();
                }
                case ABRUPT -> {
                    text("Cut off");
                    return;
                }
            }
            emit(new AgentStreamEvent.Usage(5, 7, 12));
            emit(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        }

        private void callTool(String executionId, String name, String arguments) throws InterruptedException {
            emit(new AgentStreamEvent.ToolCallStart(request.runId() + ":tool:" + executionId, executionId, name,
                    arguments));
            emit(new AgentStreamEvent.ToolCallEnd(executionId));
            Object result = await(executionId);
            text(result instanceof ToolResult tool ? "The tool said " + tool.result() + ". " : "No result. ");
        }

        /** The answer, tool result or expiry for {@code key}; cancelled when the run is. */
        private Object await(String key) throws InterruptedException {
            while (true) {
                if (cancelled) {
                    throw new Cancelled();
                }
                Object item = inbox.poll(60, TimeUnit.SECONDS);
                if (item == null) {
                    throw new IllegalStateException("simulated: nothing arrived for " + key + " in a minute");
                }
                String itemKey = item instanceof ClarifyReply reply ? reply.clarifyId()
                        : item instanceof ApprovalReply decision ? decision.inputId()
                        : item instanceof ToolResult tool ? tool.executionId()
                        : item instanceof Expired expired ? expired.inputId() : null;
                if (key.equals(itemKey)) {
                    return item;
                }
            }
        }
    }
}
