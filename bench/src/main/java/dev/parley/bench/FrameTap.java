package dev.parley.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.Buffer;
import okio.BufferedSource;
import okio.ForwardingSource;
import okio.Okio;

/**
 * Reads the Bridge frames' own timestamps where the adapter reads the frames: an OkHttp interceptor on the
 * adapter's client that copies the bytes of each event stream as the adapter pulls them from the socket
 * and, for every {@code text_delta} frame of the LONG scenario ({@code "text":"t<i> "}), records the
 * frame's {@code tsMicros} (when the simulator produced it) and the time its bytes were read, by run id
 * and token index. The engine's events do not carry the frame's timestamp, but a text delta's text names
 * its token index, so a subscriber can look both times up. The copying costs the adapter's thread little
 * (a few hundred bytes per frame).
 */
final class FrameTap implements Interceptor {
    /** When each token of a run was produced (simulator) and read (adapter), in epoch microseconds. */
    static final class RunTimes {
        final long[] produced;
        final long[] read;

        RunTimes(int tokens) {
            produced = new long[tokens];
            read = new long[tokens];
        }
    }

    private final Map<String, RunTimes> runs = new ConcurrentHashMap<>();
    private final int tokensPerRun;

    FrameTap(int tokensPerRun) {
        this.tokensPerRun = tokensPerRun;
    }

    RunTimes times(String runId) {
        return runs.computeIfAbsent(runId, id -> new RunTimes(tokensPerRun));
    }

    void forget(String runId) {
        runs.remove(runId);
    }

    static long nowMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    /** The token index of a LONG text delta ("t123 "), or -1. */
    static int tokenIndex(String text) {
        if (text.length() < 2 || text.charAt(0) != 't') {
            return -1;
        }
        int value = 0;
        for (int i = 1; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == ' ') {
                return value;
            }
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value;
    }

    @Override
    public Response intercept(Chain chain) throws IOException {
        Response response = chain.proceed(chain.request());
        ResponseBody body = response.body();
        MediaType type = body == null ? null : body.contentType();
        if (type == null || !"event-stream".equals(type.subtype())) {
            return response;
        }
        return response.newBuilder().body(new TappedBody(body)).build();
    }

    private final class TappedBody extends ResponseBody {
        private final ResponseBody original;
        private final BufferedSource source;
        private final byte[] line = new byte[4096];
        private int length;

        TappedBody(ResponseBody original) {
            this.original = original;
            this.source = Okio.buffer(new ForwardingSource(original.source()) {
                @Override
                public long read(Buffer sink, long byteCount) throws IOException {
                    long read = super.read(sink, byteCount);
                    if (read > 0) {
                        now = nowMicros();
                        // copies the bytes out (copyTo(Buffer) would share the segments, which okio then never
                        // recycles: 8 KiB of garbage per read)
                        sink.copyTo(scanner, sink.size() - read, read);
                    }
                    return read;
                }
            });
        }

        private long now;
        private final java.io.OutputStream scanner = new java.io.OutputStream() {
            @Override
            public void write(int b) {
                scan((byte) b, now);
            }

            @Override
            public void write(byte[] bytes, int offset, int length) {
                for (int i = offset; i < offset + length; i++) {
                    scan(bytes[i], now);
                }
            }
        };

        private void scan(byte b, long now) {
            if (b == '\n') {
                frameLine(now);
                length = 0;
            } else if (length < line.length) {
                line[length++] = b;
            }
        }

        private void frameLine(long now) {
            if (length < 6 || line[0] != 'd' || line[1] != 'a') {
                return;
            }
            String text = new String(line, 0, length, StandardCharsets.UTF_8);
            if (!text.startsWith("data: ") || !text.contains("\"kind\":\"text_delta\"")) {
                return;
            }
            String runId = stringField(text, "\"runId\":\"");
            long ts = longField(text, "\"tsMicros\":");
            String token = stringField(text, "\"text\":\"");
            if (runId == null || ts <= 0 || token == null) {
                return;
            }
            int index = tokenIndex(token);
            RunTimes times = times(runId);
            if (index >= 0 && index < times.produced.length) {
                times.produced[index] = ts;
                times.read[index] = now;
            }
        }

        @Override
        public MediaType contentType() {
            return original.contentType();
        }

        @Override
        public long contentLength() {
            return original.contentLength();
        }

        @Override
        public BufferedSource source() {
            return source;
        }

        @Override
        public void close() {
            original.close();
        }
    }

    private static String stringField(String text, String key) {
        int from = text.indexOf(key);
        if (from < 0) {
            return null;
        }
        from += key.length();
        int to = text.indexOf('"', from);
        return to < 0 ? null : text.substring(from, to);
    }

    private static long longField(String text, String key) {
        int from = text.indexOf(key);
        if (from < 0) {
            return -1;
        }
        from += key.length();
        long value = 0;
        for (int i = from; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                break;
            }
            value = value * 10 + (c - '0');
        }
        return value;
    }
}
