package dev.parley.chat.testing.openai;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import com.github.tomakehurst.wiremock.stubbing.Scenario;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * An OpenAI-compatible chat-completions server on loopback (WireMock) for a test class: started once per class,
 * reset before each test. A model adapter's tests extend it (through {@link ModelClientWireContract} or
 * {@link ModelEngineContract}) and point their library's OpenAI model at {@link #baseUrl()}. A module using it
 * needs {@code org.wiremock:wiremock-standalone} in test scope.
 */
public abstract class OpenAiWire {
    protected static final String COMPLETIONS = "/v1/chat/completions";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static WireMockServer wiremock;

    @BeforeAll
    protected static void startWireMock() {
        wiremock = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));
        wiremock.start();
    }

    @AfterAll
    protected static void stopWireMock() {
        wiremock.stop();
    }

    @BeforeEach
    protected void resetWireMock() {
        wiremock.resetAll();
    }

    /** The server's OpenAI base URL, {@code http://127.0.0.1:PORT/v1}. */
    protected static String baseUrl() {
        return "http://127.0.0.1:" + wiremock.port() + "/v1";
    }

    /** A 200 {@code text/event-stream} response with {@code body} (see {@link Sse}). */
    protected static ResponseDefinitionBuilder sse(String body) {
        return aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(body);
    }

    /** Every call gets {@code response}. */
    protected static void reply(ResponseDefinitionBuilder response) {
        wiremock.stubFor(post(urlEqualTo(COMPLETIONS)).willReturn(response));
    }

    /** The n-th call gets the n-th body (the last one again after that). */
    protected static void replies(String... bodies) {
        for (int i = 0; i < bodies.length; i++) {
            String state = i == 0 ? Scenario.STARTED : "call " + (i + 1);
            String next = i + 1 < bodies.length ? "call " + (i + 2) : state;
            wiremock.stubFor(post(urlEqualTo(COMPLETIONS)).inScenario("calls").whenScenarioStateIs(state)
                    .willSetStateTo(next).willReturn(sse(bodies[i])));
        }
    }

    /** The request bodies the server received, oldest first. */
    protected static List<JsonNode> requests() {
        return wiremock.findAll(postRequestedFor(urlEqualTo(COMPLETIONS))).stream()
                .map(r -> json(r.getBodyAsString())).toList();
    }

    /** {@code text} parsed as JSON; a parse failure is thrown as {@link UncheckedIOException}. */
    protected static JsonNode json(String text) {
        try {
            return JSON.readTree(text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Asserts that {@code messages}, as sent, is the JSON array {@code expected}. By default the two are compared
     * as JSON trees; an adapter whose library writes a fixed key order overrides this to compare the text too.
     */
    protected void assertMessagesSent(JsonNode messages, String expected) {
        assertThat(messages).isEqualTo(json(expected));
    }
}
