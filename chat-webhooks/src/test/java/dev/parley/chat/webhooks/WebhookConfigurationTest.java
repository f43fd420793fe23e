package dev.parley.chat.webhooks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.outbox.OutboxEventType;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.api.Test;

/** A wrong configuration fails at once, naming what is wrong and never the secret. */
class WebhookConfigurationTest {
    private static final String SECRET = WebhookSecret.generate().reveal();

    private static void refused(ThrowableAssert.ThrowingCallable call, String... words) {
        assertThatThrownBy(call).isInstanceOfSatisfying(ChatException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.CONFIGURATION);
            assertThat(e.getMessage()).contains(words).doesNotContain(SECRET.substring(6));
        });
    }

    @Test
    void badEndpointsAreRefusedWithAClearMessage() {
        refused(() -> WebhookEndpoint.of("ops", null, SECRET, Set.of()), "'ops'", "no url");
        refused(() -> WebhookEndpoint.of("ops", "not a url", SECRET, Set.of()), "'ops'", "not an http(s) URL");
        refused(() -> WebhookEndpoint.of("ops", "http://ops.example.com/hooks", SECRET, Set.of()), "must be https",
                "localhost");
        refused(() -> WebhookEndpoint.of("ops", "https://ops.example.com", "secret", Set.of()), "'ops'", "whsec_");
        refused(() -> WebhookEndpoint.of("ops", "https://ops.example.com", "whsec_!!not base64!!", Set.of()),
                "not Base64");
        refused(() -> WebhookEndpoint.of("ops", "https://ops.example.com",
                "whsec_" + Base64.getEncoder().encodeToString(new byte[8]), Set.of()), "16 to 64 bytes");
        refused(() -> WebhookEndpoint.of("ops", "https://ops.example.com", SECRET + "x", Set.of("run.finished")),
                "'ops'");
        refused(() -> WebhookEndpoint.of("ops", "https://ops.example.com", SECRET, Set.of("run.finished")),
                "unknown webhook event 'run.finished'", "run.succeeded", "input.requested");
        refused(() -> WebhookEndpoint.of(" ", "https://ops.example.com", SECRET, Set.of()), "name");
    }

    @Test
    void goodEndpointsTakeEveryEventByDefaultAndHttpOnlyOnLoopback() {
        WebhookEndpoint all = WebhookEndpoint.of("ops", "https://ops.example.com/h?token=t#x", SECRET, Set.of());
        assertThat(all.events()).containsExactlyInAnyOrder(OutboxEventType.values());
        assertThat(all.safeUrl()).isEqualTo("https://ops.example.com/h");
        assertThat(all.secret().toString()).isEqualTo("whsec_***");
        assertThat(all.toString()).doesNotContain(SECRET.substring(6));
        assertThat(WebhookEndpoint.of("local", "http://127.0.0.1:9/h", SECRET, Set.of("run.failed")).events())
                .containsExactly(OutboxEventType.RUN_FAILED);
        assertThat(WebhookSecret.parse(SECRET).reveal()).isEqualTo(SECRET);
    }

    @Test
    void theWebhooksAsAWholeAreChecked() {
        WebhookEndpoint ops = WebhookEndpoint.of("ops", "https://ops.example.com", SECRET, Set.of("run.failed"));
        refused(() -> Webhooks.builder().build(), "at least one endpoint");
        refused(() -> Webhooks.builder().endpoint(ops).endpoint(ops), "two webhook endpoints are named 'ops'");
        refused(() -> Webhooks.builder().endpoint(ops).leaseDuration(Duration.ofSeconds(10))
                .callTimeout(Duration.ofSeconds(5)).build(), "leaseDuration");
        refused(() -> new RetryPolicy(Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ofHours(1), 3),
                "maxDelay");
        refused(() -> new RetryPolicy(Duration.ZERO, Duration.ofSeconds(1), Duration.ofHours(1), 3), "initialDelay");
        refused(() -> new RetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofHours(1), 0),
                "maxAttempts");

        Webhooks webhooks = Webhooks.builder().endpoint(ops)
                .endpoint(WebhookEndpoint.of("audit", "https://audit.example.com", SECRET, Set.of())).build();
        assertThat(webhooks.routing().destinations(OutboxEventType.RUN_FAILED)).containsExactlyInAnyOrder("ops", "audit");
        assertThat(webhooks.routing().destinations(OutboxEventType.INPUT_REQUESTED)).containsExactly("audit");
    }

    @Test
    void theDefaultRetriesDoubleFromFiveSecondsToAnHour() {
        RetryPolicy retry = RetryPolicy.defaults();
        assertThat(List.of(retry.delayAfter(1), retry.delayAfter(2), retry.delayAfter(3), retry.delayAfter(11),
                retry.delayAfter(12), retry.delayAfter(39)))
                .containsExactly(Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(20),
                        Duration.ofHours(1), Duration.ofHours(1), Duration.ofHours(1));
        assertThat(retry.delayAfter(10)).isEqualTo(Duration.ofSeconds(2560));
    }
}
