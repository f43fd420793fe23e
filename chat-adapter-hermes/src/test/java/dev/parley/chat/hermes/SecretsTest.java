package dev.parley.chat.hermes;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.testing.StreamCollector;
import dev.parley.chat.ChatException;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.runtime.RunRequest;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Bearer tokens and model API keys never show in toString, messages or events. */
class SecretsTest extends AdapterTestSupport {
    private static final String TOKEN = "tok-secret-123456";
    private static final String KEY = "sk-live-SECRET-123456";

    @Test
    void configurationAndModelsNeverPrintSecrets() {
        HermesConfig config = HermesConfig.builder().baseUrl("http://user:pw-secret-99@127.0.0.1:9/?key=q-secret-77")
                .bearerToken(TOKEN).modelResolver(ModelResolver.of(List.of(new HermesModel("m", "m", null, null, KEY))))
                .build();
        HermesModel model = new HermesModel("m", "m", null, null, KEY);

        assertThat(config.toString()).doesNotContain(TOKEN).doesNotContain(KEY).doesNotContain("pw-secret-99")
                .doesNotContain("q-secret-77").contains("bearerToken=****");
        assertThat(model.toString()).doesNotContain(KEY).contains("apiKey=****");
        assertThat(HermesConfig.builder().bearerToken(TOKEN).toString()).doesNotContain(TOKEN);
        try (HermesRuntimeAdapter adapter = new HermesRuntimeAdapter(config)) {
            assertThat(adapter.toString()).doesNotContain(TOKEN).doesNotContain(KEY);
        }
    }

    @Test
    void aRejectedCallNeverRepeatsTheToken() {
        wiremock.stubFor(post("/run").willReturn(errorBody(401, "UNAUTHORIZED", "bad token " + TOKEN)));
        wiremock.stubFor(post("/runs/r1/clarify").willReturn(errorBody(401, "UNAUTHORIZED", "bad token " + TOKEN)));
        HermesRuntimeAdapter adapter = adapter(b -> b.bearerToken(TOKEN));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter.generateResponse(request()));

        assertThat(events).containsExactly(new AgentStreamEvent.RunFailed("UNAUTHORIZED", "bad token ****"));
        assertThatThrownBy(() -> adapter.answerClarify(new ClarifyReply("r1", "c1", List.of("x"))))
                .isInstanceOf(ChatException.class).hasMessageNotContaining(TOKEN).hasMessageContaining("UNAUTHORIZED");
    }

    @Test
    void eventsNeverCarryTheModelKeyEvenWhenTheBridgeEchoesIt() {
        wiremock.stubFor(post("/run").willReturn(sse("bridge/echoes-key.sse")));
        HermesRuntimeAdapter adapter = adapter(b -> b.bearerToken(TOKEN)
                .modelResolver(ModelResolver.of(List.of(new HermesModel("m1", "gpt", "openai", null, KEY)))));
        RunRequest request = new RunRequest("t1", "r1", "alice", "r1:answer", "hi", null, "m1", null, null, null, null);

        List<AgentStreamEvent> events = StreamCollector.collect(adapter.generateResponse(request));

        assertThat(events).hasSize(3);
        for (AgentStreamEvent event : events) {
            assertThat(ChatJson.shared().write(event)).doesNotContain(KEY).doesNotContain(TOKEN);
        }
        assertThat(events.get(2)).isEqualTo(new AgentStreamEvent.RunFailed("PROVIDER_AUTH", "invalid api key ****"));
        assertThat(wiremock.getAllServeEvents().get(0).getRequest().getBodyAsString())
                .as("the key does reach the Bridge, which needs it").contains(KEY);
    }
}
