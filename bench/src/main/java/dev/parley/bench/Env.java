package dev.parley.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.simulator.BridgeSimulator;
import dev.parley.simulator.SimulatorConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/** What every section shares: options, the report, the databases, an HTTP client, helpers. */
final class Env {
    static final String OWNER = "bench";
    static final MediaType JSON_TYPE = MediaType.get("application/json; charset=utf-8");

    final Options options;
    final Report report;
    final Databases databases;
    final ObjectMapper json = new ObjectMapper();
    /** For the bench's own HTTP calls and stream readers (not the adapter's). */
    final OkHttpClient http = new OkHttpClient.Builder()
            .readTimeout(120, TimeUnit.SECONDS)
            .callTimeout(0, TimeUnit.SECONDS)
            .build();

    Env(Options options, Report report, Databases databases) {
        this.options = options;
        this.report = report;
        this.databases = databases;
    }

    /** A Bridge simulator on a free loopback port; {@code rate} 0 is as fast as possible. */
    static BridgeSimulator simulator(double rate, long retainedFrames) {
        try {
            return BridgeSimulator.start(SimulatorConfig.builder()
                    .port(0)
                    .eventsPerSecond(rate)
                    .heartbeatInterval(Duration.ofSeconds(15))
                    .retainedRuns(16)
                    .retainedFrames(retainedFrames)
                    .build());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The Hermes adapter on a simulator, as a host configures it (optionally with its own OkHttp client). */
    static HermesRuntimeAdapter adapter(BridgeSimulator simulator, OkHttpClient client) {
        HermesConfig.Builder config = HermesConfig.builder().baseUrl(simulator.baseUrl());
        if (client != null) {
            config.httpClient(client);
        }
        return new HermesRuntimeAdapter(config.build());
    }

    JsonNode postJson(String url, String body) throws IOException {
        Request request = new Request.Builder().url(url).post(RequestBody.create(body, JSON_TYPE)).build();
        try (Response response = http.newCall(request).execute()) {
            String text = response.body().string();
            if (!response.isSuccessful()) {
                throw new IOException("POST " + url + " answered " + response.code() + ": " + text);
            }
            return json.readTree(text);
        }
    }

    void delete(String url) throws IOException {
        Request request = new Request.Builder().url(url).delete().build();
        try (Response response = http.newCall(request).execute()) {
            if (!response.isSuccessful()) {
                throw new IOException("DELETE " + url + " answered " + response.code());
            }
        }
    }

    static String jsonString(String text) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\');
            }
            b.append(c);
        }
        return b.append('"').toString();
    }

    /** A few full GCs and a short pause, so that one measurement does not pay for the previous one's garbage. */
    static void settle() {
        for (int i = 0; i < 2; i++) {
            System.gc();
        }
        sleep(200);
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
