package dev.parley.chat.hermes.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * A {@code text_delta} or {@code thinking} frame: {@code seq}, {@code kind} and {@code text} (if any) read
 * straight off the parser's tokens. Most of a stream is these; building a tree for each cost a quarter of
 * the stream thread's time in the bench.
 */
record DeltaFrame(long seq, String kind, @Nullable String text) {

    /**
     * Reads a delta frame without building a tree, or returns null for anything else (another kind, a
     * nested value, a field of an unexpected type, malformed JSON), which is then read as a tree, with the
     * same result and the same errors.
     */
    static @Nullable DeltaFrame read(ObjectMapper json, String data) {
        try (JsonParser parser = json.createParser(data)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            long seq = 0;
            String kind = null;
            String text = null;
            JsonToken token;
            while ((token = parser.nextToken()) == JsonToken.FIELD_NAME) {
                String name = parser.currentName();
                JsonToken value = parser.nextToken();
                if (value == null || value.isStructStart()) {
                    return null;
                }
                switch (name) {
                    case "seq":
                        if (value != JsonToken.VALUE_NUMBER_INT) {
                            return null;
                        }
                        seq = parser.getLongValue();
                        break;
                    case "kind":
                    case "text":
                        if (value != JsonToken.VALUE_STRING) {
                            return null;
                        }
                        if (name.equals("kind")) {
                            kind = parser.getText();
                        } else {
                            text = parser.getText();
                        }
                        break;
                    default:
                        break;
                }
            }
            if (token != JsonToken.END_OBJECT || !("text_delta".equals(kind) || "thinking".equals(kind))) {
                return null;
            }
            return new DeltaFrame(seq, kind, text);
        } catch (IOException e) {
            return null;
        }
    }
}
