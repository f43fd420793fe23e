package dev.parley.chat.spring;

import dev.parley.chat.ChatException;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import org.springframework.http.codec.ServerSentEvent;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * A run's events as a {@code Flux<ServerSentEvent<String>>}, for WebFlux controllers: each event with
 * {@code id} = seq, {@code event} = type and the run event's JSON as data, heartbeat comments while the
 * run is quiet, completing after the terminal event. Cancelling the flux (the client left) never stops
 * the run. Thread-safe.
 *
 * <p>Each subscription is one engine subscription relayed to the subscriber without a queue, the
 * downstream's demand passed on to the engine; heartbeats come from Reactor's shared parallel scheduler. An
 * idle stream costs a few hundred bytes here, so WebFlux hosts can hold many thousands of open streams; the
 * starter's README shows the host route that costs least per stream (a functional endpoint).
 *
 * <p>For WebFlux: Spring MVC writes a returned {@code Flux} with blocking writes on its task executor, so
 * clients that stop reading would hold its threads; MVC controllers use {@link ParleySse}.
 */
public final class ParleyFlux {
    private static final ServerSentEvent<String> PING = ServerSentEvent.<String>builder().comment("ping").build();

    private final ChatEngine engine;
    private final Duration heartbeat;

    /**
     * @param heartbeat how often a heartbeat comment is sent on every open stream; must be positive
     * @throws ChatException CONFIGURATION for a heartbeat that is not positive
     */
    public ParleyFlux(ChatEngine engine, Duration heartbeat) {
        if (heartbeat.isZero() || heartbeat.isNegative()) {
            throw ChatException.configuration("the heartbeat interval must be positive, got " + heartbeat);
        }
        this.engine = engine;
        this.heartbeat = heartbeat;
    }

    /**
     * The events after {@code lastEventId} (null: from the start). Each subscription to the flux reads
     * the run from that cursor.
     *
     * @throws ChatException NOT_FOUND or INVALID_INPUT at once, before anything is streamed
     */
    public Flux<ServerSentEvent<String>> stream(String ownerId, String runId, @Nullable String lastEventId) {
        Flow.Publisher<RunEvent> publisher = engine.subscribe(ownerId, runId, ParleySse.parseCursor(lastEventId));
        return new RunFlux(publisher, Math.max(1, heartbeat.toMillis()));
    }

    /** A run's events for each subscriber: one engine subscription relayed to it, with no queue between. */
    private static final class RunFlux extends Flux<ServerSentEvent<String>> {
        private final Flow.Publisher<RunEvent> publisher;
        private final long heartbeatMillis;

        RunFlux(Flow.Publisher<RunEvent> publisher, long heartbeatMillis) {
            this.publisher = publisher;
            this.heartbeatMillis = heartbeatMillis;
        }

        @Override
        public void subscribe(CoreSubscriber<? super ServerSentEvent<String>> actual) {
            publisher.subscribe(new Relay(actual, heartbeatMillis));
        }
    }

    /**
     * Relays one engine subscription to one subscriber, plus heartbeats. The downstream's demand goes to the
     * engine, which honours it, so an event is normally passed on at once with nothing queued. A heartbeat is
     * sent while the downstream has demand and takes one unit of it; the engine is then asked for that much
     * less on the next request. An event the engine sends meanwhile beyond what the downstream still wants
     * waits in a queue made only then (at most one per heartbeat since the downstream last asked), and goes
     * first once it asks again. Signals to the downstream are serialised by this object's monitor; the engine
     * delivers on its own threads, never within {@code request}.
     */
    private static final class Relay implements Flow.Subscriber<RunEvent>, Subscription {
        private final CoreSubscriber<? super ServerSentEvent<String>> actual;
        private final long heartbeatMillis;
        private volatile Flow.@Nullable Subscription upstream;
        private volatile @Nullable Disposable heartbeats;
        // guarded by this
        /** What the downstream asked for and did not get yet. */
        private long demand;
        /** Heartbeats sent that the engine's demand has not been reduced by yet. */
        private long owed;
        private @Nullable ArrayDeque<ServerSentEvent<String>> held;
        private @Nullable Throwable heldError;
        private boolean heldComplete;
        private boolean done;

        Relay(CoreSubscriber<? super ServerSentEvent<String>> actual, long heartbeatMillis) {
            this.actual = actual;
            this.heartbeatMillis = heartbeatMillis;
        }

        @Override
        public void onSubscribe(Flow.Subscription subscription) {
            upstream = subscription;
            heartbeats = Schedulers.parallel().schedulePeriodically(this::heartbeat, heartbeatMillis, heartbeatMillis,
                    TimeUnit.MILLISECONDS);
            actual.onSubscribe(this);
        }

        @Override
        public void request(long n) {
            long forward = n;
            synchronized (this) {
                if (done) {
                    return;
                }
                if (n > 0) {
                    demand = demand + n < 0 ? Long.MAX_VALUE : demand + n;
                    long repaid = Math.min(owed, n);
                    owed -= repaid;
                    forward -= repaid;
                    drainHeld();
                }
            }
            Flow.Subscription s = upstream;
            if (s != null && (forward > 0 || n <= 0)) {
                s.request(forward);
            }
        }

        /** Emits held events while there is demand, then a held end once they are all out. */
        private void drainHeld() {
            ArrayDeque<ServerSentEvent<String>> queue = held;
            while (queue != null && !queue.isEmpty() && demand > 0) {
                demand--;
                actual.onNext(queue.poll());
            }
            if (queue != null && queue.isEmpty()) {
                held = null;
                if (heldError != null || heldComplete) {
                    end(heldError);
                }
            }
        }

        private void heartbeat() {
            synchronized (this) {
                if (done || demand == 0 || held != null) {
                    return;
                }
                demand--;
                owed++;
                actual.onNext(PING);
            }
        }

        @Override
        public void onNext(RunEvent event) {
            ServerSentEvent<String> sse = ServerSentEvent.builder(ChatJson.shared().write(event))
                    .id(Long.toString(event.seq()))
                    .event(event.type())
                    .build();
            synchronized (this) {
                if (done) {
                    return;
                }
                if (demand > 0 && held == null) {
                    demand--;
                    actual.onNext(sse);
                } else {
                    if (held == null) {
                        held = new ArrayDeque<>(4);
                    }
                    held.add(sse);
                }
            }
        }

        @Override
        public void onError(Throwable error) {
            synchronized (this) {
                if (held != null) {
                    heldError = error;
                } else {
                    end(error);
                }
            }
        }

        @Override
        public void onComplete() {
            synchronized (this) {
                if (held != null) {
                    heldComplete = true;
                } else {
                    end(null);
                }
            }
        }

        @Override
        public void cancel() {
            synchronized (this) {
                if (!done) {
                    done = true;
                    held = null;
                    stopHeartbeats();
                }
            }
            Flow.Subscription s = upstream;
            if (s != null) {
                s.cancel();
            }
        }

        /** Ends the downstream with {@code error}, or completes it for null; the caller holds the monitor. */
        private void end(@Nullable Throwable error) {
            if (done) {
                return;
            }
            done = true;
            stopHeartbeats();
            if (error != null) {
                actual.onError(error);
            } else {
                actual.onComplete();
            }
        }

        private void stopHeartbeats() {
            Disposable task = heartbeats;
            if (task != null) {
                task.dispose();
            }
        }
    }
}
