package dev.parley.chat.store.jdbi.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * How run events become rows of {@code parley_run_events} and back. A row holds either one event (its
 * {@code first_seq} NULL, its payload the event's JSON, as every row before version 6) or a <em>span</em>:
 * a run's events {@code first_seq .. seq}, consecutive seqs, all text, thinking or tool-argument deltas of
 * one message or tool call ({@link Kind}), as one JSON document
 * {@code {"messageId":"m","deltas":["a","b",…],"dt":[0,3,…]}}: the id once, the deltas in seq order, and
 * each event's timestamp after the first as milliseconds since the one before (the first's is the row's
 * {@code created_at}). The key's {@code seq} is the row's last seq, so a replay after any cursor reads the
 * key range {@code seq > cursor} and a run's last seq is its greatest key.
 *
 * <p>Spans are made of the events of one write (a {@link Prepared} batch), in the order given, at most
 * {@value #MAX_SPAN_EVENTS} events and {@value #MAX_SPAN_CHARS} characters of deltas each. Thread-safe
 * (stateless).
 */
public final class EventRows {
    /** The most events one span holds: a replay from inside a span decodes at most this many extra. */
    static final int MAX_SPAN_EVENTS = 512;
    /** The most characters of deltas one span holds (a longer delta is a span of its own). */
    static final int MAX_SPAN_CHARS = 32 * 1024;
    private static final JsonFactory FACTORY = new JsonFactory();
    private static final String DELTAS = "deltas";
    private static final String OFFSETS = "dt";

    private EventRows() {
    }

    /** A row to insert: {@code seq} is its last seq; {@code firstSeq} is null for a row of one event. */
    public record Row(String runId, long seq, @Nullable Long firstSeq, long createdAt, String type, String payload) {
    }

    /** The events that may share a row, and how a span of them is written and read back. */
    enum Kind {
        TEXT(AgentStreamEvent.TextDelta.TYPE, "messageId",
                e -> ((AgentStreamEvent.TextDelta) e).messageId(), e -> ((AgentStreamEvent.TextDelta) e).delta(),
                AgentStreamEvent.TextDelta::new),
        THINKING(AgentStreamEvent.ThinkingDelta.TYPE, "messageId",
                e -> ((AgentStreamEvent.ThinkingDelta) e).messageId(), e -> ((AgentStreamEvent.ThinkingDelta) e).delta(),
                AgentStreamEvent.ThinkingDelta::new),
        TOOL_ARGS(AgentStreamEvent.ToolCallArgs.TYPE, "executionId",
                e -> ((AgentStreamEvent.ToolCallArgs) e).executionId(), e -> ((AgentStreamEvent.ToolCallArgs) e).delta(),
                AgentStreamEvent.ToolCallArgs::new);

        private static final Kind[] ALL = values();

        final String type;
        /** The event's own name for the id, the span's only other field. */
        final String idField;
        private final Function<AgentStreamEvent, String> id;
        private final Function<AgentStreamEvent, String> delta;
        private final BiFunction<String, String, AgentStreamEvent> event;

        Kind(String type, String idField, Function<AgentStreamEvent, String> id,
                Function<AgentStreamEvent, String> delta, BiFunction<String, String, AgentStreamEvent> event) {
            this.type = type;
            this.idField = idField;
            this.id = id;
            this.delta = delta;
            this.event = event;
        }

        String id(AgentStreamEvent of) {
            return id.apply(of);
        }

        String delta(AgentStreamEvent of) {
            return delta.apply(of);
        }

        AgentStreamEvent event(String withId, String withDelta) {
            return event.apply(withId, withDelta);
        }

        static @Nullable Kind of(AgentStreamEvent event) {
            if (event instanceof AgentStreamEvent.TextDelta) {
                return TEXT;
            }
            if (event instanceof AgentStreamEvent.ThinkingDelta) {
                return THINKING;
            }
            return event instanceof AgentStreamEvent.ToolCallArgs ? TOOL_ARGS : null;
        }

        static @Nullable Kind ofType(String type) {
            for (Kind kind : ALL) {
                if (kind.type.equals(type)) {
                    return kind;
                }
            }
            return null;
        }
    }

    /** A batch's events, each {@code (runId, seq)} once (the first given is kept), grouped by run. */
    public static Prepared prepare(List<RunEvent> events) {
        Map<String, RunPart> runs = new LinkedHashMap<>();
        for (RunEvent event : events) {
            runs.computeIfAbsent(event.runId(), RunPart::new).add(event);
        }
        for (RunPart part : runs.values()) {
            part.rows = rows(part.events);
        }
        return new Prepared(runs);
    }

    /**
     * Events ready to store, their JSON written before the write lock is taken. Their rows are made on the
     * assumption that the log holds none of their seqs yet; {@link #rows(EventDao)} checks it in the
     * transaction and makes a run's rows again, without the seqs already stored, where it does not hold.
     */
    public static final class Prepared {
        private final Map<String, RunPart> runs;

        private Prepared(Map<String, RunPart> runs) {
            this.runs = runs;
        }

        public boolean isEmpty() {
            return runs.isEmpty();
        }

        /**
         * The rows to insert now, read against the log in the current transaction: an event whose seq a
         * stored row holds (alone or in a span) is left out, so no row ever overlaps another, and so is every
         * event of a compacted log (it is final: see {@code ChatStore#compactRunEvents}). One statement for
         * all runs finds their last stored seq and whether their log is compacted; only a run whose events do
         * not all come after it has its stored spans read. This relies on the run's writes being serialised
         * (the store's single writer on SQLite, the fence's row lock on PostgreSQL; the engine has one batch
         * writer).
         */
        public List<Row> rows(EventDao dao) {
            Map<String, EventDao.LogEnd> ends = dao.logEnds(new ArrayList<>(runs.keySet()));
            List<Row> rows = new ArrayList<>();
            for (RunPart part : runs.values()) {
                EventDao.LogEnd end = ends.get(part.runId);
                if (end != null && end.compacted()) {
                    continue;
                }
                Long stored = end == null || end.lastSeq() == 0 ? null : end.lastSeq();
                if (stored == null || stored < part.minSeq) {
                    rows.addAll(part.rows);
                } else {
                    rows.addAll(EventRows.rows(part.notIn(dao.spans(part.runId, part.minSeq - 1, part.maxSeq))));
                }
            }
            return rows;
        }

        /** The rows for a log known to be empty (a compaction deleted it in the same transaction). */
        public List<Row> rowsForAnEmptyLog() {
            List<Row> rows = new ArrayList<>();
            runs.values().forEach(part -> rows.addAll(part.rows));
            return rows;
        }
    }

    /** One run's events of a batch, in the order given. */
    private static final class RunPart {
        final String runId;
        final List<RunEvent> events = new ArrayList<>();
        /** The seqs given, kept only once one comes out of order (in order, a seq above the last is new). */
        private @Nullable Set<Long> seqs;
        long minSeq = Long.MAX_VALUE;
        long maxSeq;
        List<Row> rows = List.of();

        RunPart(String runId) {
            this.runId = runId;
        }

        /** Adds an event unless its seq was given before (the first given is kept). */
        void add(RunEvent event) {
            long seq = event.seq();
            if (seq <= maxSeq) {
                if (seqs == null) {
                    seqs = new HashSet<>();
                    events.forEach(e -> seqs.add(e.seq()));
                }
                if (!seqs.add(seq)) {
                    return;
                }
            } else if (seqs != null) {
                seqs.add(seq);
            }
            events.add(event);
            minSeq = Math.min(minSeq, seq);
            maxSeq = Math.max(maxSeq, seq);
        }

        /** The events whose seq none of {@code stored} (rows in key order) holds. */
        List<RunEvent> notIn(List<EventDao.Span> stored) {
            List<RunEvent> left = new ArrayList<>(events.size());
            for (RunEvent event : events) {
                if (!holds(stored, event.seq())) {
                    left.add(event);
                }
            }
            return left;
        }

        private static boolean holds(List<EventDao.Span> stored, long seq) {
            int low = 0;
            int high = stored.size() - 1;
            while (low <= high) {
                int mid = (low + high) >>> 1;
                EventDao.Span span = stored.get(mid);
                if (span.seq() < seq) {
                    low = mid + 1;
                } else if (span.first() > seq) {
                    high = mid - 1;
                } else {
                    return true;
                }
            }
            return false;
        }
    }

    /** One run's events as rows: spans of consecutive deltas where they form, a row each otherwise. */
    private static List<Row> rows(List<RunEvent> events) {
        ChatJson json = ChatJson.shared();
        List<Row> rows = new ArrayList<>();
        List<RunEvent> span = new ArrayList<>();
        Kind spanKind = null;
        int chars = 0;
        for (RunEvent event : events) {
            Kind kind = Kind.of(event.event());
            if (kind == null) {
                flush(span, spanKind, rows, json);
                span.clear();
                rows.add(new Row(event.runId(), event.seq(), null, event.timestamp(), event.type(),
                        json.write(event.event())));
                continue;
            }
            int length = kind.delta(event.event()).length();
            RunEvent previous = span.isEmpty() ? null : span.get(span.size() - 1);
            boolean joins = previous != null && kind == spanKind && event.seq() == previous.seq() + 1
                    && span.size() < MAX_SPAN_EVENTS && chars + length <= MAX_SPAN_CHARS
                    && kind.id(event.event()).equals(kind.id(previous.event()));
            if (!joins) {
                flush(span, spanKind, rows, json);
                span.clear();
                spanKind = kind;
                chars = 0;
            }
            span.add(event);
            chars += length;
        }
        flush(span, spanKind, rows, json);
        return rows;
    }

    private static void flush(List<RunEvent> span, @Nullable Kind kind, List<Row> rows, ChatJson json) {
        if (span.isEmpty() || kind == null) {
            return;
        }
        RunEvent first = span.get(0);
        if (span.size() == 1) {
            rows.add(new Row(first.runId(), first.seq(), null, first.timestamp(), first.type(), json.write(first.event())));
            return;
        }
        RunEvent last = span.get(span.size() - 1);
        rows.add(new Row(first.runId(), last.seq(), first.seq(), first.timestamp(), kind.type, payload(span, kind)));
    }

    /** A span's JSON document: the id once, the deltas, each timestamp after the first as an offset. */
    private static String payload(List<RunEvent> span, Kind kind) {
        StringWriter out = new StringWriter(64 + span.size() * 16);
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField(kind.idField, kind.id(span.get(0).event()));
            g.writeArrayFieldStart(DELTAS);
            for (RunEvent event : span) {
                g.writeString(kind.delta(event.event()));
            }
            g.writeEndArray();
            g.writeArrayFieldStart(OFFSETS);
            for (int i = 1; i < span.size(); i++) {
                g.writeNumber(span.get(i).timestamp() - span.get(i - 1).timestamp());
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("writing to a string failed", e);
        }
        return out.toString();
    }

    /**
     * The events of stored rows (in key order) with seq above {@code afterSeq}, at most {@code limit}.
     *
     * @throws ChatException STORE_FAILURE if a row cannot be read
     */
    public static List<RunEvent> decode(String runId, List<EventDao.Stored> rows, long afterSeq, int limit) {
        ChatJson json = ChatJson.shared();
        List<RunEvent> events = new ArrayList<>(Math.min(limit, 1024));
        for (EventDao.Stored row : rows) {
            if (events.size() >= limit) {
                break;
            }
            if (row.firstSeq() == null) {
                if (row.seq() > afterSeq) {
                    events.add(new RunEvent(runId, row.seq(), row.createdAt(), plain(json, row.payload())));
                }
                continue;
            }
            List<RunEvent> span = span(runId, row);
            for (RunEvent event : span) {
                if (event.seq() > afterSeq && events.size() < limit) {
                    events.add(event);
                }
            }
        }
        return events;
    }

    private static AgentStreamEvent plain(ChatJson json, String payload) {
        try {
            return json.readEvent(payload);
        } catch (ChatException e) {
            throw unreadable(e);
        }
    }

    private static List<RunEvent> span(String runId, EventDao.Stored row) {
        Kind kind = Kind.ofType(row.type());
        long first = row.first();
        if (kind == null || first > row.seq() || row.seq() - first >= Integer.MAX_VALUE) {
            throw unreadable(null);
        }
        int count = (int) (row.seq() - first + 1);
        String id = null;
        List<String> deltas = new ArrayList<>(count);
        List<Long> offsets = new ArrayList<>(count);
        try (JsonParser p = FACTORY.createParser(row.payload())) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw unreadable(null);
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.getCurrentName();
                JsonToken value = p.nextToken();
                if (field.equals(kind.idField) && value == JsonToken.VALUE_STRING) {
                    id = p.getText();
                } else if (field.equals(DELTAS) && value == JsonToken.START_ARRAY) {
                    while (p.nextToken() == JsonToken.VALUE_STRING) {
                        deltas.add(p.getText());
                    }
                } else if (field.equals(OFFSETS) && value == JsonToken.START_ARRAY) {
                    while (p.nextToken() == JsonToken.VALUE_NUMBER_INT) {
                        offsets.add(p.getLongValue());
                    }
                } else {
                    p.skipChildren();
                }
            }
        } catch (IOException e) {
            throw unreadable(e);
        }
        if (id == null || deltas.size() != count || offsets.size() != count - 1) {
            throw unreadable(null);
        }
        List<RunEvent> events = new ArrayList<>(count);
        long at = row.createdAt();
        for (int i = 0; i < count; i++) {
            if (i > 0) {
                at += offsets.get(i - 1);
            }
            events.add(new RunEvent(runId, first + i, at, kind.event(id, deltas.get(i))));
        }
        return events;
    }

    private static ChatException unreadable(@Nullable Exception cause) {
        return new ChatException(ErrorCode.STORE_FAILURE, "a stored run event cannot be read", cause);
    }
}
