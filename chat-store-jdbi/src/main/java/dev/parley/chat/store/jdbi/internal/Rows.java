package dev.parley.chat.store.jdbi.internal;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputRequest;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.ErrorInfo;
import dev.parley.chat.model.Feedback;
import dev.parley.chat.model.FeedbackRating;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.TokenUsage;
import dev.parley.chat.store.HostActionRecord;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Rows to model values. Times are stored as epoch milliseconds, the model's precision; JSON columns are
 * read with {@link ChatJson}, the codec they were written with.
 */
public final class Rows {
    private static final TypeReference<List<String>> STRINGS = new TypeReference<>() {
    };
    private static final ChatJson JSON = ChatJson.shared();

    private Rows() {
    }

    public static ChatThread thread(ResultSet rs) throws SQLException {
        return new ChatThread(rs.getString("id"), rs.getString("owner_id"), rs.getString("title"),
                rs.getString("runtime_session_id"), rs.getString("model_id"), rs.getString("skill"),
                ThreadStatus.valueOf(rs.getString("status")), instant(rs, "created_at"),
                instant(rs, "last_message_at"));
    }

    public static Run run(ResultSet rs) throws SQLException {
        String errorCode = rs.getString("error_code");
        ErrorInfo error = errorCode == null ? null : new ErrorInfo(errorCode, rs.getString("error_message"));
        Long inputTokens = nullableLong(rs, "input_tokens");
        TokenUsage usage = inputTokens == null ? null
                : new TokenUsage(inputTokens, rs.getLong("output_tokens"), rs.getLong("total_tokens"));
        Long maxIterations = nullableLong(rs, "max_iterations");
        return new Run(rs.getString("id"), rs.getString("thread_id"), rs.getString("owner_id"),
                RunStatus.valueOf(rs.getString("status")), rs.getString("user_message_id"),
                rs.getString("assistant_message_id"), rs.getString("input"), rs.getString("model_id"),
                rs.getString("skill"), maxIterations == null ? null : maxIterations.intValue(), JSON.readMap(rs.getString("context")),
                instant(rs, "created_at"), nullableInstant(rs, "started_at"), nullableInstant(rs, "finished_at"),
                error, usage, rs.getString("guardrails_failure_reason"));
    }

    public static PendingInput input(ResultSet rs) throws SQLException {
        String answer = rs.getString("answer");
        return new PendingInput(rs.getString("run_id"), rs.getString("input_id"), rs.getString("message_id"),
                JSON.read(rs.getString("request"), InputRequest.class), nullableInstant(rs, "deadline"),
                rs.getString("resume_token"), InputState.valueOf(rs.getString("state")),
                answer == null ? null : JSON.read(answer, InputAnswer.class), instant(rs, "created_at"),
                nullableInstant(rs, "resolved_at"));
    }

    public static Feedback feedback(ResultSet rs) throws SQLException {
        return new Feedback(rs.getString("thread_id"), rs.getString("run_id"), rs.getString("message_id"),
                rs.getString("owner_id"), FeedbackRating.valueOf(rs.getString("rating")), rs.getString("comment"),
                instant(rs, "created_at"));
    }

    /** A stored host-action execution; it existed already, so it was not claimed now. */
    public static HostActionRecord existingHostAction(ResultSet rs) throws SQLException {
        return new HostActionRecord(rs.getString("run_id"), rs.getString("execution_id"), rs.getString("name"),
                rs.getString("arguments"), false, rs.getString("result"), rs.getBoolean("error"),
                instant(rs, "claimed_at"), nullableInstant(rs, "completed_at"));
    }

    /** A JSON array of strings, as written by {@link #json(List)}. */
    public static List<String> strings(String json) {
        return JSON.read(json, STRINGS);
    }

    public static String json(List<String> strings) {
        return JSON.write(strings);
    }

    public static @Nullable Long millis(@Nullable Instant instant) {
        return instant == null ? null : instant.toEpochMilli();
    }

    private static Instant instant(ResultSet rs, String column) throws SQLException {
        return Instant.ofEpochMilli(rs.getLong(column));
    }

    private static @Nullable Instant nullableInstant(ResultSet rs, String column) throws SQLException {
        Long millis = nullableLong(rs, column);
        return millis == null ? null : Instant.ofEpochMilli(millis);
    }

    private static @Nullable Long nullableLong(ResultSet rs, String column) throws SQLException {
        long value = rs.getLong(column);
        return rs.wasNull() ? null : value;
    }
}
