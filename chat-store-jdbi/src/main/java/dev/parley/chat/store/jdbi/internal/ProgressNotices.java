package dev.parley.chat.store.jdbi.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.ObjLongConsumer;

/**
 * The payload of progress notices: {@code runId=seq} entries separated by {@code ;}, packed into as few
 * payloads as fit far below PostgreSQL's 8 000-byte NOTIFY limit. An entry that alone would exceed the
 * limit (a run id of thousands of characters) is left out; that run's subscribers find its events by
 * polling.
 */
public final class ProgressNotices {
    /** The largest payload this writes, in bytes. */
    public static final int MAX_PAYLOAD_BYTES = 4_000;

    private ProgressNotices() {
    }

    public static List<String> payloads(Map<String, Long> lastSeqByRun) {
        List<String> payloads = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        int currentBytes = 0;
        for (Map.Entry<String, Long> entry : lastSeqByRun.entrySet()) {
            String item = entry.getKey() + '=' + entry.getValue();
            int itemBytes = item.getBytes(StandardCharsets.UTF_8).length;
            if (itemBytes > MAX_PAYLOAD_BYTES) {
                continue;
            }
            if (currentBytes > 0 && currentBytes + 1 + itemBytes > MAX_PAYLOAD_BYTES) {
                payloads.add(current.toString());
                current.setLength(0);
                currentBytes = 0;
            }
            if (currentBytes > 0) {
                current.append(';');
                currentBytes++;
            }
            current.append(item);
            currentBytes += itemBytes;
        }
        if (current.length() > 0) {
            payloads.add(current.toString());
        }
        return payloads;
    }

    /**
     * Calls {@code each} with every well-formed entry of a payload. Malformed entries are skipped: a notice
     * only hastens a read that the subscriber's poll would make anyway.
     */
    public static void parse(String payload, ObjLongConsumer<String> each) {
        for (String item : payload.split(";")) {
            int at = item.lastIndexOf('=');
            if (at <= 0) {
                continue;
            }
            long seq;
            try {
                seq = Long.parseLong(item.substring(at + 1));
            } catch (NumberFormatException malformed) {
                continue;
            }
            each.accept(item.substring(0, at), seq);
        }
    }
}
