package dev.parley.chat.hermes.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.NullNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.jspecify.annotations.Nullable;

/**
 * The adapter's HTTP side: two clients sharing one connection pool (one for short control calls with a
 * whole-call timeout, one for event streams whose read timeout is the idle timeout), the base URL, the
 * bearer token and the JSON codec. Thread-safe.
 */
public final class HermesHttp implements AutoCloseable {
    static final MediaType JSON = MediaType.get("application/json; charset=utf-8");

    private final HttpUrl base;
    private final @Nullable String bearerToken;
    private final OkHttpClient control;
    private final OkHttpClient stream;
    private final boolean ownsClient;
    private final ObjectMapper json = new ObjectMapper();
    private final Redactor redactor;

    public HermesHttp(HttpUrl base, @Nullable String bearerToken, @Nullable OkHttpClient custom, Duration connectTimeout,
            Duration idleTimeout, Duration requestTimeout) {
        this.base = base;
        this.bearerToken = bearerToken;
        this.ownsClient = custom == null;
        OkHttpClient root = custom != null ? custom : new OkHttpClient();
        OkHttpClient.Builder shared = root.newBuilder().connectTimeout(connectTimeout.toMillis(), TimeUnit.MILLISECONDS);
        this.control = shared.build().newBuilder()
                .readTimeout(requestTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .callTimeout(requestTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .build();
        this.stream = shared.build().newBuilder()
                .readTimeout(idleTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .callTimeout(0, TimeUnit.MILLISECONDS)
                .build();
        this.redactor = Redactor.of(bearerToken);
    }

    public ObjectMapper json() {
        return json;
    }

    /** Redacts the bearer token. */
    public Redactor redactor() {
        return redactor;
    }

    /** The base URL plus path segments (each one encoded). */
    public HttpUrl url(String... segments) {
        HttpUrl.Builder builder = base.newBuilder().query(null);
        for (String segment : segments) {
            builder.addPathSegment(segment);
        }
        return builder.build();
    }

    /** A request with the bearer token. */
    public Request.Builder request(HttpUrl url) {
        Request.Builder builder = new Request.Builder().url(url);
        if (bearerToken != null) {
            builder.header("Authorization", "Bearer " + bearerToken);
        }
        return builder;
    }

    public RequestBody jsonBody(Object value) {
        try {
            return RequestBody.create(json.writeValueAsBytes(value), JSON);
        } catch (IOException e) {
            throw new ChatException(ErrorCode.INTERNAL, "cannot write a request body as JSON", e);
        }
    }

    /**
     * A JSON body OkHttp may send only once: once any of it went out, OkHttp does not repeat the request on
     * its own after a connection failure (its silent retry would start a second run on a server that ignores
     * {@code Idempotency-Key}). A request that never left is still retried by OkHttp.
     */
    public RequestBody oneShotJsonBody(Object value) {
        RequestBody body = jsonBody(value);
        return new RequestBody() {
            @Override
            public MediaType contentType() {
                return body.contentType();
            }

            @Override
            public long contentLength() throws IOException {
                return body.contentLength();
            }

            @Override
            public boolean isOneShot() {
                return true;
            }

            @Override
            public void writeTo(okio.BufferedSink sink) throws IOException {
                body.writeTo(sink);
            }
        };
    }

    /** A call on the streaming client (read timeout = idle timeout, no whole-call timeout). */
    public Call streamCall(Request request) {
        return stream.newCall(request);
    }

    /**
     * Runs a control call and returns its JSON answer (NullNode for an empty body).
     *
     * @throws ChatException RUNTIME_UNAVAILABLE when the remote cannot be reached; as
     *     {@link RemoteError#toException} says for an error status; RUNTIME_FAILED for a body that is not JSON
     */
    public JsonNode call(Request request, String what) {
        try (Response response = control.newCall(request).execute()) {
            ResponseBody body = response.body();
            String text = body == null ? "" : body.string();
            if (!response.isSuccessful()) {
                throw RemoteError.parse(response.code(), text, json, redactor).toException(what);
            }
            if (text.isBlank()) {
                return NullNode.getInstance();
            }
            try {
                return json.readTree(text);
            } catch (IOException e) {
                throw new ChatException(ErrorCode.RUNTIME_FAILED, what + " failed: the answer is not JSON");
            }
        } catch (IOException e) {
            throw new ChatException(ErrorCode.RUNTIME_UNAVAILABLE, what + " failed: " + describe(e));
        }
    }

    /** Like {@link #call} but for a status probe: the HTTP status and body, or null if unreachable. */
    public @Nullable Probe probe(Request request) {
        try (Response response = control.newCall(request).execute()) {
            ResponseBody body = response.body();
            String text = body == null ? "" : body.string();
            JsonNode node = NullNode.getInstance();
            try {
                if (!text.isBlank()) {
                    node = json.readTree(text);
                }
            } catch (IOException notJson) {
                // the status alone has to do
            }
            return new Probe(response.code(), text, node);
        } catch (IOException e) {
            return null;
        }
    }

    /** An answer to a probe. */
    public record Probe(int status, String body, JsonNode json) {
    }

    /** A short, secret-free description of an I/O failure. */
    public String describe(Throwable e) {
        String message = e.getMessage();
        String text = e.getClass().getSimpleName() + (message == null || message.isBlank() ? "" : ": " + message);
        return redactor.redact(text);
    }

    /** The host and port only, for messages. */
    public String where() {
        return base.host() + ":" + base.port();
    }

    @Override
    public void close() {
        if (ownsClient) {
            control.dispatcher().cancelAll();
            control.dispatcher().executorService().shutdown();
            control.connectionPool().evictAll();
        }
    }
}
