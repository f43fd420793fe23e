package dev.parley.chat.spring;

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
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.outbox.OutboxRouting;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.InterceptedStore;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.webhooks.WebhookDispatcher;
import dev.parley.chat.webhooks.Webhooks;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code parley.webhooks[…]}: runs' ends reach the configured URL signed; a wrong configuration stops the start. */
class ParleyWebhooksAutoConfigurationTest {
    private static final String SECRET = "whsec_" + Base64.getEncoder().encodeToString(
            "thirty-two bytes of starter key!".getBytes(StandardCharsets.UTF_8));

    private final WireMockServer receiver = new WireMockServer(options().dynamicPort());
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ParleyWebhooksAutoConfiguration.class, ParleyAutoConfiguration.class))
            .withBean(RuntimeAdapter.class, () -> ScriptedRuntime.playing(Scripts.answer("hello")))
            .withPropertyValues("parley.webhook-delivery.poll-interval=50ms");

    ParleyWebhooksAutoConfigurationTest() {
        receiver.start();
    }

    @AfterEach
    void stop() {
        receiver.stop();
    }

    /** The receiver's check, from the Standard Webhooks specification (not the module's signer). */
    private static boolean verified(LoggedRequest request) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(Base64.getDecoder().decode(SECRET.substring(6)), "HmacSHA256"));
        byte[] expected = mac.doFinal((request.getHeader("webhook-id") + "." + request.getHeader("webhook-timestamp")
                + "." + request.getBodyAsString()).getBytes(StandardCharsets.UTF_8));
        String signature = request.getHeader("webhook-signature");
        return signature.startsWith("v1,")
                && MessageDigest.isEqual(expected, Base64.getDecoder().decode(signature.substring(3)));
    }

    @Test
    void aConfiguredWebhookReceivesTheRunsEndSignedAndIsMetered() {
        receiver.stubFor(post(urlEqualTo("/parley")).willReturn(aResponse().withStatus(200)));
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("parley.webhooks[0].url=http://localhost:" + receiver.port() + "/parley",
                        "parley.webhooks[0].secret=" + SECRET, "parley.webhooks[0].events=run.succeeded,run.failed")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(WebhookDispatcher.class)
                            .hasSingleBean(OutboxRouting.class);
                    ChatEngine engine = context.getBean(ChatEngine.class);
                    String thread = engine.createThread("alice", NewThread.empty()).id();
                    String runId = engine.startRun("alice", thread, StartRun.of("hi")).runId();
                    List<LoggedRequest> received = Await.until(() -> receiver.findAll(postRequestedFor(
                            urlEqualTo("/parley"))), requests -> !requests.isEmpty(), "the webhook");
                    assertThat(received).singleElement().satisfies(request -> {
                        assertThat(verified(request)).isTrue();
                        assertThat(request.getBodyAsString()).contains("\"type\":\"run.succeeded\"",
                                "\"runId\":\"" + runId + "\"");
                    });
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    Await.until(() -> registry.get("parley.webhooks.deliveries").tag("outcome", "delivered").counter()
                            .count(), count -> count == 1.0, "the delivery to be counted");
                    assertThat(registry.get("parley.webhooks.pending").gauge().value()).isZero();
                    assertThat(registry.get("parley.webhooks.failed").gauge().value()).isZero();
                });
    }

    @Test
    void withoutWebhooksOrWithoutTheModuleNothingIsWired() {
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(Webhooks.class)
                .doesNotHaveBean(OutboxRouting.class).hasSingleBean(ChatEngine.class));
        runner.withClassLoader(new FilteredClassLoader(Webhooks.class))
                .withPropertyValues("parley.webhooks[0].url=https://example.com/h", "parley.webhooks[0].secret=" + SECRET)
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(OutboxRouting.class)
                        .hasSingleBean(ChatEngine.class));
    }

    @Test
    void aWrongConfigurationStopsTheStartNamingTheProperty() {
        failsWith("parley.webhooks[0].url is not set", "parley.webhooks[0].secret=" + SECRET);
        failsWith("parley.webhooks[0]: webhook endpoint 'unnamed': the url must be https",
                "parley.webhooks[0].url=http://ops.example.com/h", "parley.webhooks[0].secret=" + SECRET);
        failsWith("parley.webhooks[1]: webhook endpoint 'unnamed': a webhook secret must be whsec_",
                "parley.webhooks[0].url=https://a.example.com/h", "parley.webhooks[0].secret=" + SECRET,
                "parley.webhooks[1].url=https://b.example.com/h", "parley.webhooks[1].secret=hunter2");
        failsWith("unknown webhook event 'run.done'", "parley.webhooks[0].url=https://a.example.com/h",
                "parley.webhooks[0].secret=" + SECRET, "parley.webhooks[0].events=run.done");
        failsWith("parley.webhook-delivery: webhook retry maxAttempts", "parley.webhooks[0].url=https://a.example.com/h",
                "parley.webhooks[0].secret=" + SECRET, "parley.webhook-delivery.max-attempts=0");
    }

    @Test
    void aStoreWithoutAnOutboxStopsTheStart() {
        ChatStore plain = InterceptedStore.of(new InMemoryChatStore(), (method, args, proceed) -> proceed.call());
        runner.withBean(ChatStore.class, () -> plain)
                .withPropertyValues("parley.webhooks[0].url=https://a.example.com/h", "parley.webhooks[0].secret=" + SECRET)
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context).getFailure().rootCause().isInstanceOf(ChatException.class)
                            .hasMessageContaining("keeps no outbox");
                });
    }

    private void failsWith(String message, String... properties) {
        runner.withPropertyValues(properties).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context).getFailure().rootCause().isInstanceOf(ChatException.class)
                    .hasMessageContaining(message)
                    .satisfies(e -> {
                        assertThat(((ChatException) e).code()).isEqualTo(ErrorCode.CONFIGURATION);
                        assertThat(e.getMessage()).doesNotContain(SECRET.substring(6), "hunter2");
                    });
        });
    }
}
