package dev.parley.chat.hermes.internal;

import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.StreamPublisher;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * One run's stream worker: runs on its own thread, emits into a {@link StreamPublisher.Emitter} (blocking
 * when the subscriber is behind) and guarantees the stream contract: exactly one terminal event, then
 * completion; nothing after the terminal event; the HTTP call closed when the subscriber cancels. The
 * worker runs with the logging context (MDC) of the thread that created it, the one that subscribed.
 */
public abstract class RunLoop implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(RunLoop.class);

    final HermesHttp http;
    final RunRequest request;
    final String runId;
    final Redactor redactor;
    private final StreamPublisher.Emitter<AgentStreamEvent> emitter;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final @Nullable Map<String, String> logContext = MDC.getCopyOfContextMap();
    private volatile @Nullable Call current;
    private volatile boolean abandoned;
    private boolean terminal;

    RunLoop(HermesHttp http, RunRequest request, Redactor redactor, StreamPublisher.Emitter<AgentStreamEvent> emitter) {
        this.http = http;
        this.request = request;
        this.runId = request.runId();
        this.redactor = redactor;
        this.emitter = emitter;
        emitter.onCancel(this::stop);
    }

    /** The run's work; returns when the stream is over (a terminal event was emitted, or the subscriber left). */
    abstract void execute();

    @Override
    public final void run() {
        Map<String, String> outer = MDC.getCopyOfContextMap();
        setLogContext(logContext);
        try {
            execute();
            if (!terminal && !isStopped() && !abandoned) {
                emit(new AgentStreamEvent.RunFailed(ErrorCode.INTERNAL.name(), "the Hermes adapter ended a stream without an outcome"));
            }
        } catch (RuntimeException | Error e) {
            log.error("Run {}: the Hermes stream worker failed", runId, e);
            if (!terminal && !abandoned) {
                emit(new AgentStreamEvent.RunFailed(ErrorCode.INTERNAL.name(),
                        "the Hermes adapter failed: " + e.getClass().getSimpleName()));
            }
        } finally {
            Call call = current;
            if (call != null) {
                call.cancel();
            }
            finished();
            if (!abandoned) {
                emitter.complete();
            }
            setLogContext(outer);
        }
    }

    private static void setLogContext(@Nullable Map<String, String> context) {
        if (context == null) {
            MDC.clear();
        } else {
            MDC.setContextMap(context);
        }
    }

    /** Called once when the worker ends, before completion. */
    void finished() {
    }

    /** Emits an event unless the terminal one went out already; false if the stream is over. */
    final boolean emit(AgentStreamEvent event) {
        if (terminal) {
            return false;
        }
        if (event.isTerminal()) {
            terminal = true;
        }
        if (!emitter.emit(event)) {
            stop();
            return false;
        }
        return true;
    }

    final boolean isTerminal() {
        return terminal;
    }

    /**
     * Reports where the stream stands in the runtime, after the events emitted so far (see
     * {@link dev.parley.chat.runtime.ResumableSubscriber}); nothing once the terminal event went out.
     */
    final void resumePoint(String resumeToken) {
        if (!terminal) {
            emitter.resumePoint(resumeToken);
        }
    }

    final String clean(String text) {
        return redactor.redact(text);
    }

    /**
     * Closes the connection without cancelling the run on the runtime and without ending the stream:
     * the adapter is closing with its host, which must not record the run as failed (a restarted host
     * re-attaches to it).
     */
    public final void abandon() {
        abandoned = true;
        stop();
    }

    /** The subscriber left (or the adapter closes): close the connection, stop waiting. */
    final void stop() {
        stopped.countDown();
        Call call = current;
        if (call != null) {
            call.cancel();
        }
    }

    final boolean isStopped() {
        return stopped.getCount() == 0 || emitter.isCancelled();
    }

    /** Waits, unless stopped; returns false if stopped. */
    final boolean pause(Duration duration) {
        try {
            return !stopped.await(duration.toMillis(), TimeUnit.MILLISECONDS) && !isStopped();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop();
            return false;
        }
    }

    /** Starts a streaming call and waits for its response head. */
    final Opened open(Request httpRequest) {
        Call call = http.streamCall(httpRequest);
        current = call;
        if (isStopped()) {
            call.cancel();
            return Opened.STOPPED;
        }
        try {
            Response response = call.execute();
            if (!response.isSuccessful()) {
                ResponseBody body = response.body();
                String text = body == null ? "" : body.string();
                response.close();
                return new Opened(call, null, RemoteError.parse(response.code(), text, http.json(), redactor), null, false);
            }
            return new Opened(call, response, null, null, false);
        } catch (IOException e) {
            if (isStopped()) {
                return Opened.STOPPED;
            }
            boolean unreachable = e instanceof ConnectException || e instanceof UnknownHostException
                    || e instanceof NoRouteToHostException;
            return new Opened(call, null, null, e, unreachable);
        }
    }

    /**
     * Reads an opened stream to its end. The frames of one read from the socket reach the subscriber as one
     * burst (see {@link dev.parley.chat.runtime.BurstAwareSubscriber}).
     */
    final SseReader.Ending read(Opened opened, SseReader.FrameHandler handler) {
        return SseReader.read(opened.call(), opened.response(), handler, emitter);
    }

    static boolean isStall(@Nullable Throwable failure) {
        return failure instanceof InterruptedIOException;
    }

    /** The answer to a streaming request: a response, an error status, an I/O failure, or nothing (stopped). */
    record Opened(@Nullable Call call, @Nullable Response response, @Nullable RemoteError error,
            @Nullable IOException failure, boolean unreachable) {
        static final Opened STOPPED = new Opened(null, null, null, null, false);

        boolean stopped() {
            return response == null && error == null && failure == null;
        }
    }
}
