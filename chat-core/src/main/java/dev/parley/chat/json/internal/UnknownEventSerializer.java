package dev.parley.chat.json.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.jsontype.TypeSerializer;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import dev.parley.chat.event.AgentStreamEvent;
import java.io.IOException;

/** Writes an {@link AgentStreamEvent.Unknown} as the raw JSON object it was read from. */
public final class UnknownEventSerializer extends StdSerializer<AgentStreamEvent.Unknown> {
    private static final long serialVersionUID = 1L;

    public UnknownEventSerializer() {
        super(AgentStreamEvent.Unknown.class);
    }

    @Override
    public void serialize(AgentStreamEvent.Unknown value, JsonGenerator gen, SerializerProvider provider)
            throws IOException {
        gen.writeRawValue(value.json());
    }

    @Override
    public void serializeWithType(AgentStreamEvent.Unknown value, JsonGenerator gen, SerializerProvider provider,
            TypeSerializer typeSer) throws IOException {
        serialize(value, gen, provider);
    }
}
