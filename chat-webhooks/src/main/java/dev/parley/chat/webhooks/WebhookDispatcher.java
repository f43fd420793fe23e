package dev.parley.chat.webhooks;

import dev.parley.chat.outbox.OutboxEntry;
import dev.parley.chat.outbox.OutboxStore;
import dev.parley.chat.webhooks.internal.Payloads;
import dev.parley.chat.webhooks.internal.StandardWebhooksSigner;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers an {@link OutboxStore}'s entries to the {@link Webhooks}' endpoints. Once {@link #start() started},
 * one thread ({@code parley-webhooks}) polls every {@link Webhooks#pollInterval()}: it claims up to
 * {@link Webhooks#batchSize()} due entries for {@link Webhooks#leaseDuration()}, has them POSTed by the delivery
 * threads ({@code parley-webhooks-delivery-N}) and records each outcome: a 2xx removes the entry; anything else
 * (another status, a timeout, a refused connection) schedules the next attempt by the {@link RetryPolicy}, or gives
 * up — once its bound is reached, or at once on 410 Gone — leaving the entry counted as failed and logging one
 * WARN line (the event, its id, the URL without its query, the attempts and the last error; never the secret).
 * Nothing here runs on a run's threads: an endpoint that is down delays only its own deliveries.
 *
 * <p>Each request carries the Standard Webhooks headers {@code webhook-id} (the entry's stable message id, the
 * same on every attempt), {@code webhook-timestamp} (the attempt's time, Unix seconds) and
 * {@code webhook-signature} ({@code v1,} Base64 of HMAC-SHA256 over {@code id.timestamp.body}), and the JSON body
 * {@code {"type", "timestamp", "data": {"threadId", "runId", "status"[, "inputId", "inputKind"]}}}.
 *
 * <p>At least once: an entry delivered whose outcome could not be recorded (the instance died, the store failed)
 * is claimed again when its lease ends and delivered again with the same {@code webhook-id}.
 *
 * <p>Thread-safe. {@link #close()} stops polling and waits up to {@link Webhooks#callTimeout()} for deliveries in
 * progress; what it cuts short is delivered again after the lease.
 */
public final class WebhookDispatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WebhookDispatcher.class);
    private static final MediaType JSON = MediaType.get("application/json");
    /** How often the counts for {@link #counts()} are read anew at most (or every 10 polls, if sooner). */
    private static final Duration COUNTS_INTERVAL = Duration.ofSeconds(10);
    /** How often the failed entries past their retention are removed. */
    private static final Duration PURGE_INTERVAL = Duration.ofHours(1);

    private final Webhooks webhooks;
    private final OutboxStore store;
    private final OkHttpClient client;
    private final ScheduledExecutorService poller;
    private final ExecutorService deliveries;
    private volatile OutboxStore.Counts counts = new OutboxStore.Counts(0, 0);
    private volatile Instant countedAt = Instant.EPOCH;
    private volatile Instant purgedAt = Instant.EPOCH;
    private volatile boolean started;
    /** Set when {@link #close()} starts: no more claims. */
    private volatile boolean stopping;
    /** Set once deliveries may no longer record their outcome. */
    private volatile boolean closed;

    WebhookDispatcher(Webhooks webhooks, OutboxStore store) {
        this.webhooks = webhooks;
        this.store = store;
        OkHttpClient given = webhooks.client();
        this.client = given != null ? given : new OkHttpClient.Builder()
                .connectTimeout(webhooks.connectTimeout())
                .readTimeout(webhooks.callTimeout())
                .writeTimeout(webhooks.callTimeout())
                .callTimeout(webhooks.callTimeout())
                .followRedirects(false)
                .followSslRedirects(false)
                .build();
        this.poller = Executors.newSingleThreadScheduledExecutor(threads("parley-webhooks", false));
        this.deliveries = Executors.newFixedThreadPool(webhooks.deliveryThreads(),
                threads("parley-webhooks-delivery-", true));
    }

    /** Starts polling; a second call does nothing. */
    public synchronized void start() {
        if (started || stopping) {
            return;
        }
        started = true;
        poller.scheduleWithFixedDelay(this::pollQuietly, 0, webhooks.pollInterval().toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * One poll, on the calling thread: claims the due entries (one batch) and delivers them, waiting for every
     * outcome. For tests and hosts that schedule delivery themselves; {@link #start()} does this on its own
     * thread.
     *
     * @return how many entries were claimed
     * @throws dev.parley.chat.ChatException STORE_FAILURE if the claim failed
     */
    public int deliverDue() {
        if (stopping) {
            return 0;
        }
        Instant now = webhooks.clock().instant();
        List<OutboxEntry> claimed = store.claimOutbox(webhooks.instanceId(), now, now.plus(webhooks.leaseDuration()),
                webhooks.batchSize());
        if (claimed.isEmpty()) {
            return 0;
        }
        List<Callable<Void>> work = new ArrayList<>();
        for (OutboxEntry entry : claimed) {
            work.add(() -> {
                deliverQuietly(entry);
                return null;
            });
        }
        try {
            deliveries.invokeAll(work);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return claimed.size();
    }

    /**
     * How many deliveries are pending and how many were given up on (kept for
     * {@link Webhooks#failedRetention()}), as read at most 10 s (or 10 polls) ago by the polling thread
     * (zeros before the first poll). Cheap: for gauges.
     */
    public OutboxStore.Counts counts() {
        return counts;
    }

    private void pollQuietly() {
        try {
            while (!stopping && deliverDue() == webhooks.batchSize()) {
                // a backlog: the next batch at once
            }
            Instant now = webhooks.clock().instant();
            Duration countEvery = webhooks.pollInterval().multipliedBy(10);
            if (!now.isBefore(countedAt.plus(countEvery.compareTo(COUNTS_INTERVAL) < 0 ? countEvery : COUNTS_INTERVAL))) {
                counts = store.countOutbox();
                countedAt = now;
            }
            if (!now.isBefore(purgedAt.plus(PURGE_INTERVAL))) {
                purgedAt = now;
                int purged = store.purgeFailedOutbox(now.minus(webhooks.failedRetention()));
                if (purged > 0) {
                    log.info("Removed {} webhook deliveries given up on more than {} ago", purged,
                            webhooks.failedRetention());
                }
            }
        } catch (RuntimeException e) {
            log.warn("Polling the webhook outbox failed; trying again in {}", webhooks.pollInterval(), e);
        }
    }

    private void deliverQuietly(OutboxEntry entry) {
        try {
            deliver(entry);
        } catch (RuntimeException e) {
            log.warn("Recording the outcome of webhook {} ({}) failed; it is delivered again after its lease",
                    entry.type().wireName(), entry.messageId(), e);
        }
    }

    private void deliver(OutboxEntry entry) {
        int attempt = entry.attempts() + 1;
        WebhookEndpoint endpoint = webhooks.endpoint(entry.destination());
        if (endpoint == null) {
            String error = "no webhook endpoint named '" + entry.destination() + "' is configured";
            if (!closed && store.failOutbox(entry.messageId(), entry.destination(), webhooks.instanceId(),
                    entry.attempts(), webhooks.clock().instant())) {
                log.warn("Webhook {} ({}) given up: {}", entry.type().wireName(), entry.messageId(), error);
                tell(() -> webhooks.listener().failed(null, entry, entry.attempts(), error));
            }
            return;
        }
        String body = Payloads.body(entry);
        long timestamp = webhooks.clock().instant().getEpochSecond();
        Request request = new Request.Builder().url(endpoint.url())
                .header("webhook-id", entry.messageId())
                .header("webhook-timestamp", Long.toString(timestamp))
                .header("webhook-signature", StandardWebhooksSigner.sign(endpoint.secret().key(), entry.messageId(),
                        timestamp, body))
                .header("User-Agent", "Parley-Webhooks")
                .post(RequestBody.create(body, JSON))
                .build();
        int status = -1;
        String error;
        try (Response response = client.newCall(request).execute()) {
            status = response.code();
            if (response.isSuccessful()) {
                if (!closed && store.completeOutbox(entry.messageId(), entry.destination(), webhooks.instanceId())) {
                    tell(() -> webhooks.listener().delivered(endpoint, entry, attempt));
                }
                return;
            }
            error = "HTTP " + status;
        } catch (IOException e) {
            error = describe(e, endpoint);
        }
        if (closed) {
            return;
        }
        Instant now = webhooks.clock().instant();
        Instant next = now.plus(webhooks.retry().delayAfter(attempt));
        boolean gone = status == 410;
        if (gone || attempt >= webhooks.retry().maxAttempts()
                || next.isAfter(entry.occurredAt().plus(webhooks.retry().maxAge()))) {
            String why = error + (gone ? " (Gone: not tried again)" : "");
            if (store.failOutbox(entry.messageId(), entry.destination(), webhooks.instanceId(), attempt, now)) {
                log.warn("Webhook {} ({}) to {} failed for good after {} attempt(s): {}", entry.type().wireName(),
                        entry.messageId(), endpoint.safeUrl(), attempt, why);
                tell(() -> webhooks.listener().failed(endpoint, entry, attempt, why));
            }
        } else if (store.retryOutbox(entry.messageId(), entry.destination(), webhooks.instanceId(), attempt, next)) {
            String why = error;
            log.debug("Webhook {} ({}) to {}: attempt {} failed ({}); next at {}", entry.type().wireName(),
                    entry.messageId(), endpoint.safeUrl(), attempt, why, next);
            tell(() -> webhooks.listener().retrying(endpoint, entry, attempt, why, next));
        }
    }

    /** What went wrong, without the URL's query (the exception's message may name the URL). */
    private static String describe(IOException e, WebhookEndpoint endpoint) {
        String message = e.getMessage() == null ? "" : ": " + e.getMessage().replace(endpoint.url(), endpoint.safeUrl());
        return e.getClass().getSimpleName() + message;
    }

    private static void tell(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            log.warn("A webhook listener failed", e);
        }
    }

    /**
     * Stops claiming; waits up to the call timeout for deliveries in progress (their outcomes are recorded), then
     * cuts them short (delivered again after their lease).
     */
    @Override
    public void close() {
        synchronized (this) {
            if (stopping) {
                return;
            }
            stopping = true;
        }
        poller.shutdown();
        deliveries.shutdown();
        try {
            if (!poller.awaitTermination(webhooks.callTimeout().toMillis() + 1000, TimeUnit.MILLISECONDS)) {
                poller.shutdownNow();
            }
            closed = true;
            if (!deliveries.awaitTermination(1, TimeUnit.SECONDS)) {
                deliveries.shutdownNow();
            }
        } catch (InterruptedException e) {
            closed = true;
            poller.shutdownNow();
            deliveries.shutdownNow();
            Thread.currentThread().interrupt();
        }
        if (webhooks.client() == null) {
            client.dispatcher().executorService().shutdown();
            client.connectionPool().evictAll();
        }
    }

    private static ThreadFactory threads(String name, boolean numbered) {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, numbered ? name + count.incrementAndGet() : name);
            thread.setDaemon(true);
            return thread;
        };
    }
}
