package dev.parley.chat.store.jdbi.internal;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.parley.chat.json.ChatJson;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * How the DAOs store values in columns: times as epoch milliseconds, the model's precision; lists of strings
 * as JSON arrays, read with {@link ChatJson}, the codec they were written with.
 */
final class Rows {
    private static final TypeReference<List<String>> STRINGS = new TypeReference<>() {
    };
    private static final ChatJson JSON = ChatJson.shared();

    private Rows() {
    }

    /** A JSON array of strings, as written by {@link #json(List)}. */
    static List<String> strings(String json) {
        return JSON.read(json, STRINGS);
    }

    static String json(List<String> strings) {
        return JSON.write(strings);
    }

    static @Nullable Long millis(@Nullable Instant instant) {
        return instant == null ? null : instant.toEpochMilli();
    }

    static Instant instant(ResultSet rs, String column) throws SQLException {
        return Instant.ofEpochMilli(rs.getLong(column));
    }

    static @Nullable Instant nullableInstant(ResultSet rs, String column) throws SQLException {
        Long millis = nullableLong(rs, column);
        return millis == null ? null : Instant.ofEpochMilli(millis);
    }

    static @Nullable Long nullableLong(ResultSet rs, String column) throws SQLException {
        long value = rs.getLong(column);
        return rs.wasNull() ? null : value;
    }
}
