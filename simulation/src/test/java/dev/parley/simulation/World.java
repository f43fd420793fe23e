package dev.parley.simulation;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.attachment.Attachment;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.DoubleTexting;
import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.engine.EngineListener;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionApproval;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Run;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.testing.InProcessCoordinators;
import dev.parley.chat.testing.InterceptedStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * Everything one simulation runs and knows: the engines (one per instance), the store they share, the
 * runtime, virtual time, the faults, and what the operations created — threads, runs, messages,
 * subscriptions, uploads — for the operations to refer to and the checks to verify. The engines keep attachment
 * bytes in the database's blob store, behind the same faults as the store. Thread-safe: the operations of a
 * step run on several callers at once.
 */
final class World implements AutoCloseable {
    static final List<String> OWNERS = List.of("alice", "bob", "carol");
    static final HostToolSpec CLIENT_TOOL = new HostToolSpec("pick_date", "Picks a date in the page", "{}");

    /** A thread the simulation created, as it was when created (a reopened id is another incarnation). */
    record ThreadRef(String id, String owner, Instant createdAt) {
    }

    /** A run the simulation started: {@code sent} for a new message (not an edit or a regeneration). */
    record RunRef(String runId, String threadId, String owner, @Nullable String userMessageId,
            String assistantMessageId, boolean sent) {
    }

    record Subscription(String runId, String owner, long after, Subscriber subscriber) {
    }

    /** An upload that succeeded: the attachment as the engine returned it, which file it holds, its thread. */
    record Upload(Attachment attachment, int file, ThreadRef thread) {
    }

    /** What the store calls of one operation's upload did: the keys its puts returned, its saved rows. */
    record Trace(List<String> puts, AtomicInteger saves) {
        static Trace start() {
            return new Trace(new CopyOnWriteArrayList<>(), new AtomicInteger());
        }
    }

    final Simulation.Settings settings;
    final VirtualTime time;
    final Faults faults;
    final SimRuntime runtime;
    final Stores.Database database;
    /** The store as the checks read it: no faults. */
    /** The one follow-up suggestion the simulation's provider makes for an answer. */
    static String suggestionFor(String answerMessageId) {
        return "more about " + answerMessageId;
    }

    /** The one destination every run end and input request is written to the outbox for (never delivered). */
    static final String OUTBOX_DESTINATION = "sim-hook";

    final ChatStore store;
    private final @Nullable InProcessCoordinators hub;
    private final AtomicReferenceArray<ChatEngine> engines;
    private final AtomicReferenceArray<String> instanceIds;
    /** Per instance, whether its current incarnation is dead (a killed process never comes back). */
    private final java.util.concurrent.atomic.AtomicBoolean[] dead;
    private final AtomicInteger incarnations = new AtomicInteger();

    final List<ThreadRef> threads = new CopyOnWriteArrayList<>();
    /** Threads deleted (or erased) by a call that returned, with the runs and messages they held then. */
    final List<ThreadRef> deleted = new CopyOnWriteArrayList<>();
    final List<RunRef> runs = new CopyOnWriteArrayList<>();
    /** {@code threadId/messageId} of each answer a roll-back or an undo made the end of its thread's branch. */
    final java.util.Set<String> movedBackTo = java.util.concurrent.ConcurrentHashMap.newKeySet();
    final List<Subscription> subscriptions = new CopyOnWriteArrayList<>();
    /** Every run and message id a write stored, with its thread. */
    final Map<String, String> storedRuns = new ConcurrentHashMap<>();
    final Map<String, String> storedMessages = new ConcurrentHashMap<>();
    /** Every attachment row a save stored (also one whose answer was lost), as stored. */
    final Map<String, Attachment> savedAttachments = new ConcurrentHashMap<>();
    /** Blobs of uploads a fault interrupted, with their owners: kept until the owner is erased, as documented. */
    final Map<String, String> interruptedBlobs = new ConcurrentHashMap<>();
    final List<Upload> uploads = new CopyOnWriteArrayList<>();
    /** The upload an operation makes on this caller thread, while it makes it. */
    final ThreadLocal<Trace> trace = new ThreadLocal<>();
    /** Host-action handler runs per "runId/executionId". */
    final Map<String, AtomicInteger> handlerRuns = new ConcurrentHashMap<>();
    final List<String> violations = new CopyOnWriteArrayList<>();

    World(Simulation.Settings settings, Stores.Database database) {
        this.settings = settings;
        this.time = new VirtualTime(Instant.parse("2026-01-01T00:00:00Z"));
        this.faults = new Faults(settings.seed(), settings.faultRate());
        this.runtime = new SimRuntime(time, faults);
        this.database = database;
        this.store = database.open();
        this.hub = settings.instances() > 1 ? new InProcessCoordinators() : null;
        this.engines = new AtomicReferenceArray<>(settings.instances());
        this.instanceIds = new AtomicReferenceArray<>(settings.instances());
        this.dead = new java.util.concurrent.atomic.AtomicBoolean[settings.instances()];
        for (int i = 0; i < settings.instances(); i++) {
            start(i);
        }
    }

    /** Thread deletes and erasures begun and ended, to tell whether one ran beside a call. */
    private final AtomicLong deletionsBegun = new AtomicLong();
    private final AtomicLong deletionsEnded = new AtomicLong();

    /** Runs a thread delete or an erasure, counted. */
    void deleting(Runnable deletion) {
        deletionsBegun.incrementAndGet();
        try {
            deletion.run();
        } finally {
            deletionsEnded.incrementAndGet();
        }
    }

    /** A mark for {@link #noDeletionSince}: -1 while a deletion runs. */
    long deletionMark() {
        long begun = deletionsBegun.get();
        return deletionsEnded.get() == begun ? begun : -1;
    }

    /**
     * True if no deletion ran since the mark: a message refused as NOT_FOUND was refused for its thread being
     * deleted only if one did (the engine refuses it from the moment the delete is called).
     */
    boolean noDeletionSince(long mark) {
        return mark >= 0 && deletionsBegun.get() == mark;
    }

    /** Records a broken promise; the simulation stops at the first. */
    void violated(String invariant, String detail) {
        violations.add(invariant + ": " + detail);
    }

    // ------------------------------------------------------------------ engines

    /** The engine of an instance (dead instances answer as a dead host would: their store fails). */
    ChatEngine engine(int instance) {
        return engines.get(instance % engines.length());
    }

    int instances() {
        return engines.length();
    }

    /** The current incarnation of each instance, as its coordinator names it. */
    synchronized List<String> instanceIds() {
        List<String> ids = new java.util.ArrayList<>();
        for (int i = 0; i < instanceIds.length(); i++) {
            ids.add(instanceIds.get(i) + (dead[i].get() ? " (dead)" : ""));
        }
        return ids;
    }

    synchronized boolean isDead(int instance) {
        return dead[instance % dead.length].get();
    }

    /** (Re)starts an instance: a new engine on the store, as a host restarting or a new instance joining. */
    synchronized void start(int instance) {
        String id = "i" + instance + "-" + incarnations.incrementAndGet();
        java.util.concurrent.atomic.AtomicBoolean killed = new java.util.concurrent.atomic.AtomicBoolean();
        ChatStore real = database.open();
        ChatStore faulty = faultyStore(real, killed);
        ChatEngine.Builder builder = ChatEngine.builder().runtime(runtime).store(faulty)
                .blobStore(new FaultyBlobStore(database.blobStore(real), faults, killed, this))
                .attachmentLimits(FileOps.LIMITS)
                .clock(time.clock()).scheduler(time.scheduler())
                .limits(EngineLimits.defaults().withCancelGracePeriod(Duration.ofMillis(300))
                        .withClientToolTimeout(Duration.ofSeconds(2)))
                .doubleTexting(DoubleTexting.values()[(int) Math.floorMod(settings.seed() + instance, 3L)])
                .outbox(type -> List.of(OUTBOX_DESTINATION))
                .suggestions(request -> {
                    faults.inHostCode("suggestions");
                    return dev.parley.chat.model.Suggestions.of(List.of(suggestionFor(request.answerMessageId())));
                })
                .listener(listener())
                .hostAction(new HostAction(new HostToolSpec("lookup", "Looks something up", "{}"), call -> {
                    handlerRuns.computeIfAbsent(call.runId() + "/" + call.executionId(), k -> new AtomicInteger())
                            .incrementAndGet();
                    faults.inHostCode("host action lookup");
                    return "found";
                }))
                .hostAction(new HostAction(new HostToolSpec("refund", "Refunds an order", "{}"), call -> {
                    handlerRuns.computeIfAbsent(call.runId() + "/" + call.executionId(), k -> new AtomicInteger())
                            .incrementAndGet();
                    faults.inHostCode("host action refund");
                    return "refunded";
                }, HostActionApproval.always(call -> "Refunds order 7")));
        if (hub != null) {
            builder.coordinator(hub.join(id)).leaseTimeout(Duration.ofMillis(900))
                    .controlTimeout(Duration.ofMillis(250));
        }
        engines.set(instance, builder.build());
        instanceIds.set(instance, id);
        dead[instance] = killed;
    }

    /**
     * Closes an instance's engine and starts a new one on the same store; two restarts of one instance at
     * once run one after the other (an instance is one process: it never has two engines at a time).
     */
    synchronized void restart(int instance) {
        ChatEngine old = engines.get(instance);
        if (hub != null) {
            hub.disconnect(instanceIds.get(instance)); // the old process's connection goes with it
        }
        old.close();
        start(instance);
    }

    /** The instance dies: every store call fails, it hears nothing from the others; a restart revives it. */
    synchronized void kill(int instance) {
        if (hub == null || dead[instance].get()) {
            return;
        }
        dead[instance].set(true);
        hub.disconnect(instanceIds.get(instance));
        ChatEngine dying = engines.get(instance);
        Thread closer = new Thread(dying::close, "sim-dying-" + instance);
        closer.setDaemon(true);
        closer.start();
    }

    private ChatStore faultyStore(ChatStore real, java.util.concurrent.atomic.AtomicBoolean killed) {
        return InterceptedStore.keepingEverything(real, (method, args, proceed) -> {
            if (method.equals("close")) {
                return null;
            }
            if (killed.get()) {
                faults.noteHere();
                throw new ChatException(ErrorCode.STORE_FAILURE, "simulated: this instance is dead (" + method + ")");
            }
            faults.beforeStoreCall(method);
            Object result = proceed.call();
            if (method.equals("write")) {
                StoreBatch batch = (StoreBatch) args[0];
                batch.runs().forEach(run -> storedRuns.put(run.id(), run.threadId()));
                batch.messages().forEach(message -> storedMessages.put(message.id(), message.threadId()));
            } else if (method.equals("saveAttachment")) {
                Attachment saved = (Attachment) result;
                savedAttachments.put(saved.id(), saved);
                Trace traced = trace.get();
                if (traced != null) {
                    traced.saves().incrementAndGet();
                }
            }
            faults.afterStoreCall(method);
            return result;
        });
    }

    private EngineListener listener() {
        return new EngineListener() {
            @Override
            public void runStarted(Run run) {
                faults.inHostCode("listener runStarted");
            }

            @Override
            public void runFinished(Run run) {
                faults.inHostCode("listener runFinished");
            }

            @Override
            public void eventAppended(RunEvent event) {
                faults.inHostCode("listener eventAppended");
            }

            @Override
            public void subscriberOpened(String runId) {
                faults.inHostCode("listener subscriberOpened");
            }
        };
    }

    // ------------------------------------------------------------------ what the operations refer to

    @Nullable ThreadRef thread(int n) {
        List<ThreadRef> known = threads;
        return known.isEmpty() ? null : known.get(Math.floorMod(n, known.size()));
    }

    /**
     * The thread as it is now, or null when the id is gone or now names another thread (a client-chosen id
     * reopened after a delete, maybe by another owner): an operation on a thread acts on what it knew.
     */
    @Nullable ThreadRef current(@Nullable ThreadRef ref) {
        if (ref == null) {
            return null;
        }
        return store.findThread(ref.id()).filter(t -> t.createdAt().equals(ref.createdAt()) && t.ownerId().equals(ref.owner()))
                .map(t -> ref).orElse(null);
    }

    @Nullable RunRef run(int n) {
        List<RunRef> known = runs;
        return known.isEmpty() ? null : known.get(Math.floorMod(n, known.size()));
    }

    @Nullable Subscription subscription(int n) {
        List<Subscription> known = subscriptions;
        return known.isEmpty() ? null : known.get(Math.floorMod(n, known.size()));
    }

    String otherOwner(String owner) {
        return OWNERS.get((OWNERS.indexOf(owner) + 1) % OWNERS.size());
    }

    void threadCreated(ChatThread thread) {
        threads.add(new ThreadRef(thread.id(), thread.ownerId(), thread.createdAt()));
    }

    void runStarted(RunTicket ticket, String owner, boolean sent) {
        runs.add(new RunRef(ticket.runId(), ticket.threadId(), owner, ticket.userMessageId(),
                ticket.assistantMessageId(), sent));
    }

    static StartRun message(SimRuntime.Script script) {
        StartRun request = StartRun.of(script.message());
        return script == SimRuntime.Script.CLIENT_TOOL ? request.withClientTools(List.of(CLIENT_TOOL)) : request;
    }

    /** Creates a thread for the caller, through instance 0 (setup and wind-down use it). */
    ChatThread newThread(String owner) {
        ChatThread thread = engine(0).createThread(owner, NewThread.empty());
        threadCreated(thread);
        return thread;
    }

    @Override
    public void close() {
        faults.switchOff();
        runtime.stopAll();
        for (int i = 0; i < engines.length(); i++) {
            try {
                engines.get(i).close();
            } catch (RuntimeException e) {
                // the simulation is over
            }
        }
        if (hub != null) {
            hub.close();
        }
        database.close();
    }
}
