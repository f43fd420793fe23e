package dev.parley.chat.json.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import java.io.IOException;
import java.time.Instant;

/**
 * Instants travel as epoch milliseconds (a JSON number), which every client, the browser included,
 * reads and writes identically.
 */
public final class InstantMillis {
    private InstantMillis() {
    }

    public static final class Serializer extends StdSerializer<Instant> {
        private static final long serialVersionUID = 1L;

        public Serializer() {
            super(Instant.class);
        }

        @Override
        public void serialize(Instant value, JsonGenerator gen, SerializerProvider provider) throws IOException {
            gen.writeNumber(value.toEpochMilli());
        }
    }

    public static final class Deserializer extends StdDeserializer<Instant> {
        private static final long serialVersionUID = 1L;

        public Deserializer() {
            super(Instant.class);
        }

        @Override
        public Instant deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            if (p.currentToken() == JsonToken.VALUE_NUMBER_INT) {
                return Instant.ofEpochMilli(p.getLongValue());
            }
            if (p.currentToken() == JsonToken.VALUE_STRING) {
                return Instant.parse(p.getText());
            }
            return (Instant) ctxt.handleUnexpectedToken(Instant.class, p);
        }
    }
}
