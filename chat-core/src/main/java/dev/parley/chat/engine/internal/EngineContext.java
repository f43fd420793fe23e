package dev.parley.chat.engine.internal;

import dev.parley.chat.cluster.RunCoordinator;
import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.engine.EngineListener;
import dev.parley.chat.engine.StoreWrite;
import dev.parley.chat.outbox.OutboxRouting;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.StoreBatch;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import org.jspecify.annotations.Nullable;

/** The services every part of the engine shares. Immutable apart from the live maps; thread-safe. */
public final class EngineContext {
    /** How many of a run's newest events stay in memory after they are stored. */
    static final int RING_CAPACITY = 1024;
    /** How many it may keep while a subscriber reading them from memory is behind (see {@link RunLog}). */
    static final int READER_RING_CAPACITY = 8 * RING_CAPACITY;
    /**
     * How far ahead of the newest seq the store's reservation mark is moved. A new run's first block is
     * stored with the run; later, whenever less than a block is left, the next block rides in the batch
     * writer's next batch. So the event path waits for the store only when the writer is a whole block
     * behind (or after a take-over).
     */
    static final int SEQ_RESERVATION_BLOCK = 131_072;

    final ChatStore store;
    final AttachmentWork attachments;
    final RuntimeAdapter runtime;
    final Clock clock;
    final EngineLimits limits;
    final Executor work;
    final Executor delivery;
    final ScheduledExecutorService timers;
    final EngineListener listener;
    final HostActions hostActions;
    final BatchWriter writer;
    final ConcurrentMap<String, ActiveRun> activeRuns = new ConcurrentHashMap<>();
    final ThreadLanes lanes = new ThreadLanes();
    final RunCoordinator coordinator;
    final Duration leaseTimeout;
    final Duration controlTimeout;
    /** Who wants to be told of runs' ends and input requests (outbox entries in the batches); null: nobody. */
    final @Nullable OutboxRouting outbox;
    /** Told when runs start and end, to make follow-up suggestions for their answers. */
    final SuggestionWork suggestions;
    /** Set once the engine closes: a subscription that starts after that is told at once. */
    private volatile boolean closed;
    /** Every subscription still open, to be told when the engine closes. */
    final Set<LiveSubscription> subscriptions = ConcurrentHashMap.newKeySet();
    /** Subscribers waiting for runs held by other instances, woken by progress notices. */
    final ConcurrentMap<String, Set<LiveSubscription>> remoteTails = new ConcurrentHashMap<>();

    public EngineContext(ChatStore store, RuntimeAdapter runtime, Clock clock, EngineLimits limits, Executor work,
            Executor delivery, ScheduledExecutorService timers, EngineListener listener,
            HostActions hostActions, RunCoordinator coordinator, Duration leaseTimeout,
            Duration controlTimeout, AttachmentWork attachments, @Nullable OutboxRouting outbox,
            SuggestionWork suggestions) {
        this.store = store;
        this.attachments = attachments;
        this.outbox = outbox;
        this.suggestions = suggestions;
        this.runtime = runtime;
        this.clock = clock;
        this.limits = limits;
        this.work = work;
        this.delivery = delivery;
        this.timers = timers;
        this.listener = new GuardedListener(listener);
        this.hostActions = hostActions;
        this.coordinator = coordinator;
        this.leaseTimeout = leaseTimeout;
        this.controlTimeout = controlTimeout;
        this.writer = new BatchWriter(this);
    }

    /** Writes {@code batch} to the store, telling the listener when the write starts and ends. */
    void write(StoreBatch batch) {
        EngineListener.WriteEnd end = listener.storeWriteStarted(new StoreWrite(List.copyOf(batch.writtenRunIds()),
                batch.events().size(), batch.messages().size()));
        try {
            store.write(batch);
        } catch (RuntimeException | Error e) {
            end.ended(e);
            throw e;
        }
        end.ended(null);
    }

    /** The clock's time, at millisecond precision (what the model stores). */
    public Instant now() {
        return Instant.ofEpochMilli(clock.millis());
    }

    /** The engine is closing: subscriptions are told (see {@link LiveSubscription#engineClosing()}). */
    void markClosed() {
        closed = true;
    }

    boolean isClosed() {
        return closed;
    }

    /** True when other instances may share the store. */
    boolean clustered() {
        return coordinator.clustered();
    }

    /** The instance whose leases this engine's batches must hold (null when alone on the store). */
    @Nullable String fence() {
        return clustered() ? coordinator.instanceId() : null;
    }

    /** The lease end for a run leased now. */
    Instant leaseEnd() {
        return now().plus(leaseTimeout);
    }

    boolean can(Capability capability) {
        return runtime.capabilities().contains(capability);
    }

    public AttachmentWork attachments() {
        return attachments;
    }

    public ChatStore store() {
        return store;
    }

    public RuntimeAdapter runtime() {
        return runtime;
    }

    public EngineLimits limits() {
        return limits;
    }

    /** The host actions the engine offers: the fixed ones and the sources asked per run. */
    public HostActions hostActions() {
        return hostActions;
    }

    public BatchWriter writer() {
        return writer;
    }
}
