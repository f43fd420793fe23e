package dev.parley.chat.webhooks;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.outbox.OutboxEntry;
import dev.parley.chat.outbox.OutboxStore;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import dev.parley.chat.testing.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A host that dies while it delivers: two dispatchers on one SQLite file (two stores, as two processes would
 * have). The first claims every entry, sends them, and dies before it can record an outcome; the second may
 * take them only once the first's lease has ended, and then delivers them all. No webhook is lost; one is
 * received twice only where the dead host had sent it already, with the same webhook-id for the receiver to
 * de-duplicate.
 */
class WebhookCrashTest {
    private static final String SECRET = "whsec_" + Base64.getEncoder().encodeToString(
            "another key of thirty-two bytes!".getBytes(StandardCharsets.UTF_8));
    private static final int ENTRIES = 8;
    private static final Instant T0 = Instant.parse("2026-12-03T10:00:00Z");

    @TempDir
    Path folder;
    private final WireMockServer receiver = new WireMockServer(options().dynamicPort());
    private final List<AutoCloseable> closing = new ArrayList<>();

    WebhookCrashTest() {
        receiver.start();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        receiver.stop();
    }

    /** An outbox whose host died: from {@link #kill()} on, every call fails, as with the process's connections. */
    private static final class DyingOutbox implements OutboxStore {
        private final OutboxStore delegate;
        private volatile boolean dead;

        DyingOutbox(OutboxStore delegate) {
            this.delegate = delegate;
        }

        void kill() {
            dead = true;
        }

        private void alive() {
            if (dead) {
                throw new ChatException(ErrorCode.STORE_FAILURE, "the host died");
            }
        }

        @Override
        public List<OutboxEntry> claimOutbox(String instanceId, Instant now, Instant leaseUntil, int limit) {
            alive();
            return delegate.claimOutbox(instanceId, now, leaseUntil, limit);
        }

        @Override
        public boolean completeOutbox(String messageId, String destination, String instanceId) {
            alive();
            return delegate.completeOutbox(messageId, destination, instanceId);
        }

        @Override
        public boolean retryOutbox(String messageId, String destination, String instanceId, int attempts,
                Instant nextAttemptAt) {
            alive();
            return delegate.retryOutbox(messageId, destination, instanceId, attempts, nextAttemptAt);
        }

        @Override
        public boolean failOutbox(String messageId, String destination, String instanceId, int attempts, Instant at) {
            alive();
            return delegate.failOutbox(messageId, destination, instanceId, attempts, at);
        }

        @Override
        public Counts countOutbox() {
            alive();
            return delegate.countOutbox();
        }

        @Override
        public int purgeFailedOutbox(Instant before) {
            alive();
            return delegate.purgeFailedOutbox(before);
        }
    }

    private JdbiChatStore open() {
        JdbiChatStore store = JdbiChatStore.sqlite(folder.resolve("chat.db")).build();
        closing.add(store);
        return store;
    }

    private Webhooks webhooks(String host) {
        OkHttpClient client = new OkHttpClient.Builder().callTimeout(Duration.ofMillis(1500))
                .addInterceptor(chain -> chain.proceed(chain.request().newBuilder().header("x-host", host).build()))
                .build();
        return Webhooks.builder()
                .endpoint(WebhookEndpoint.of("ops", "http://localhost:" + receiver.port() + "/hooks", SECRET, Set.of()))
                .instanceId(host).client(client).callTimeout(Duration.ofMillis(1500))
                .leaseDuration(Duration.ofSeconds(7)).batchSize(ENTRIES).deliveryThreads(ENTRIES)
                .build();
    }

    private Map<String, List<String>> senders() {
        Map<String, List<String>> byId = new HashMap<>();
        for (LoggedRequest request : receiver.findAll(postRequestedFor(urlEqualTo("/hooks")))) {
            assertThat(StandardWebhooksVerifier.verify(SECRET, request.getHeader("webhook-id"),
                    request.getHeader("webhook-timestamp"), request.getBodyAsString(),
                    request.getHeader("webhook-signature"))).isTrue();
            byId.computeIfAbsent(request.getHeader("webhook-id"), id -> new ArrayList<>()).add(request.getHeader("x-host"));
        }
        return byId;
    }

    @Test
    void aDeadHostsClaimsExpireAndTheOtherHostDeliversEveryWebhook() throws Exception {
        receiver.stubFor(post(urlEqualTo("/hooks")).willReturn(aResponse().withStatus(200).withFixedDelay(400)));
        JdbiChatStore first = open();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < ENTRIES; i++) {
            first.createThread(new ChatThread("t" + i, "alice", null, null, null, null, ThreadStatus.ACTIVE, T0, T0));
            Run ended = new Run("r" + i, "t" + i, "alice", RunStatus.SUCCEEDED, null, "a" + i, "hi", null, null, null,
                    Map.of(), T0, T0, T0.plusSeconds(i), null, null, null);
            OutboxEntry entry = OutboxEntry.runEnded(ended, "ops");
            first.write(StoreBatch.builder().run(ended).outbox(entry).build());
            ids.add(entry.messageId());
        }
        JdbiChatStore second = open();

        DyingOutbox dying = new DyingOutbox(first);
        WebhookDispatcher hostA = webhooks("a").dispatcher(dying);
        closing.add(hostA);
        CompletableFuture<Integer> claimed = CompletableFuture.supplyAsync(hostA::deliverDue);
        Await.until(() -> receiver.findAll(postRequestedFor(urlEqualTo("/hooks"))).size(), n -> n > 0,
                "host a to send");
        dying.kill();
        Instant killedAt = Instant.now();
        assertThat(claimed.get()).as("host a had claimed every entry").isEqualTo(ENTRIES);

        WebhookDispatcher hostB = webhooks("b").dispatcher(second);
        closing.add(hostB);
        assertThat(hostB.deliverDue()).as("host a's claims hold until their lease ends").isZero();
        assertThat(second.countOutbox()).as("host a recorded nothing").isEqualTo(new OutboxStore.Counts(ENTRIES, 0));
        Await.until(() -> {
            hostB.deliverDue();
            return second.countOutbox();
        }, counts -> counts.equals(new OutboxStore.Counts(0, 0)), "host b to deliver everything");
        assertThat(Duration.between(killedAt, Instant.now())).as("only after the lease")
                .isGreaterThan(Duration.ofSeconds(4));

        Map<String, List<String>> senders = senders();
        assertThat(senders.keySet()).as("no webhook lost").containsExactlyInAnyOrderElementsOf(ids);
        Set<String> sentByA = senders.entrySet().stream().filter(e -> e.getValue().contains("a")).map(Map.Entry::getKey)
                .collect(Collectors.toSet());
        assertThat(sentByA).isNotEmpty();
        assertThat(senders).allSatisfy((id, hosts) -> {
            assertThat(hosts).as("host b delivers each once").containsOnlyOnce("b");
            assertThat(hosts).as("a second copy only from the dead host").hasSize(sentByA.contains(id) ? 2 : 1);
        });
    }
}
