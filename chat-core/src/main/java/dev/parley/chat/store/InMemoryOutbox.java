package dev.parley.chat.store;

import dev.parley.chat.outbox.OutboxEntry;
import dev.parley.chat.outbox.OutboxStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * {@link InMemoryChatStore}'s outbox ({@link OutboxStore}): entries by message id and destination, each with its
 * claim. Not thread-safe: the store calls it under its one lock.
 */
final class InMemoryOutbox {
    private record Key(String messageId, String destination) {
    }

    /** An entry with its state. */
    private static final class Row {
        OutboxEntry entry;
        @Nullable String claimedBy;
        @Nullable Instant leaseUntil;
        @Nullable Instant failedAt;

        Row(OutboxEntry entry) {
            this.entry = entry;
        }
    }

    private final Map<Key, Row> rows = new LinkedHashMap<>();

    /** Stores a new entry; one with a stored message id and destination is left as it is. */
    void add(OutboxEntry entry) {
        rows.putIfAbsent(new Key(entry.messageId(), entry.destination()), new Row(entry));
    }

    void deleteOfThread(String threadId) {
        rows.values().removeIf(row -> row.entry.threadId().equals(threadId));
    }

    List<OutboxEntry> claim(String instanceId, Instant now, Instant leaseUntil, int limit) {
        List<Row> due = new ArrayList<>();
        for (Row row : rows.values()) {
            if (row.failedAt == null && !row.entry.nextAttemptAt().isAfter(now)
                    && (row.claimedBy == null || row.leaseUntil == null || !row.leaseUntil.isAfter(now))) {
                due.add(row);
            }
        }
        due.sort(Comparator.comparing((Row row) -> row.entry.nextAttemptAt()));
        List<OutboxEntry> claimed = new ArrayList<>();
        for (Row row : due.subList(0, Math.min(Math.max(limit, 0), due.size()))) {
            row.claimedBy = instanceId;
            row.leaseUntil = leaseUntil;
            claimed.add(row.entry);
        }
        return claimed;
    }

    boolean complete(String messageId, String destination, String instanceId) {
        Key key = new Key(messageId, destination);
        Row row = claimedBy(key, instanceId);
        if (row == null) {
            return false;
        }
        rows.remove(key);
        return true;
    }

    boolean retry(String messageId, String destination, String instanceId, int attempts, Instant next) {
        Row row = claimedBy(new Key(messageId, destination), instanceId);
        if (row == null) {
            return false;
        }
        row.entry = row.entry.retried(attempts, next);
        row.claimedBy = null;
        row.leaseUntil = null;
        return true;
    }

    boolean fail(String messageId, String destination, String instanceId, int attempts, Instant at) {
        Row row = claimedBy(new Key(messageId, destination), instanceId);
        if (row == null) {
            return false;
        }
        row.entry = row.entry.retried(attempts, row.entry.nextAttemptAt());
        row.claimedBy = null;
        row.leaseUntil = null;
        row.failedAt = at;
        return true;
    }

    OutboxStore.Counts counts() {
        long failed = rows.values().stream().filter(row -> row.failedAt != null).count();
        return new OutboxStore.Counts(rows.size() - failed, failed);
    }

    int purgeFailed(Instant before) {
        int size = rows.size();
        rows.values().removeIf(row -> row.failedAt != null && row.failedAt.isBefore(before));
        return size - rows.size();
    }

    private @Nullable Row claimedBy(Key key, String instanceId) {
        Row row = rows.get(key);
        return row != null && row.failedAt == null && instanceId.equals(row.claimedBy) ? row : null;
    }
}
