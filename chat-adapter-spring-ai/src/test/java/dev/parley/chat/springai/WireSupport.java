package dev.parley.chat.springai;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import com.github.tomakehurst.wiremock.stubbing.Scenario;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/** An OpenAI-compatible server on loopback (WireMock), and Spring AI's OpenAI model pointed at it. */
abstract class WireSupport {
    static final String COMPLETIONS = "/v1/chat/completions";
    private static final ObjectMapper JSON = new ObjectMapper();
    static WireMockServer wiremock;

    @BeforeAll
    static void startWireMock() {
        wiremock = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));
        wiremock.start();
    }

    @AfterAll
    static void stopWireMock() {
        wiremock.stop();
    }

    @BeforeEach
    void resetWireMock() {
        wiremock.resetAll();
    }

    static String baseUrl() {
        return "http://127.0.0.1:" + wiremock.port() + "/v1";
    }

    /** Spring AI's OpenAI model (over OpenAI's Java SDK) on WireMock, without the SDK's retries. */
    static OpenAiChatModel model() {
        return model(baseUrl());
    }

    static OpenAiChatModel model(String baseUrl) {
        return OpenAiChatModel.builder().options(OpenAiChatOptions.builder().baseUrl(baseUrl).apiKey("sk-test-key")
                .model("gpt-test").maxRetries(0).timeout(Duration.ofSeconds(10)).build()).build();
    }

    static ResponseDefinitionBuilder sse(String body) {
        return aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(body);
    }

    /** Every call gets {@code response}. */
    static void reply(ResponseDefinitionBuilder response) {
        wiremock.stubFor(post(urlEqualTo(COMPLETIONS)).willReturn(response));
    }

    /** The n-th call gets the n-th body (the last one again after that). */
    static void replies(String... bodies) {
        for (int i = 0; i < bodies.length; i++) {
            String state = i == 0 ? Scenario.STARTED : "call " + (i + 1);
            String next = i + 1 < bodies.length ? "call " + (i + 2) : state;
            wiremock.stubFor(post(urlEqualTo(COMPLETIONS)).inScenario("calls").whenScenarioStateIs(state)
                    .willSetStateTo(next).willReturn(sse(bodies[i])));
        }
    }

    static JsonNode json(String text) {
        try {
            return JSON.readTree(text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The request bodies the server received, oldest first. */
    static List<JsonNode> requests() {
        return wiremock.findAll(postRequestedFor(urlEqualTo(COMPLETIONS))).stream().map(r -> {
            try {
                return JSON.readTree(r.getBodyAsString());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }).toList();
    }
}
