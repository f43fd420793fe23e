package dev.parley.chat.store;

import dev.parley.chat.ChatException;
import dev.parley.chat.attachment.Attachment;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@link InMemoryChatStore}'s attachments: one entry per upload, a use count per blob, and the blobs deleted
 * threads left unused. Not thread-safe: the store calls it under its one lock.
 */
final class InMemoryAttachments {
    private final Map<String, Attachment> attachments = new HashMap<>();
    /** Blobs in use: key → how many attachments use it. */
    private final Map<String, Integer> uses = new HashMap<>();
    private final Set<String> unreferenced = new LinkedHashSet<>();

    Attachment save(Attachment attachment) {
        if (attachments.containsKey(attachment.id())) {
            throw ChatException.conflict("attachment " + attachment.id() + " exists");
        }
        Attachment stored = attachments.values().stream()
                .filter(a -> a.ownerId().equals(attachment.ownerId()) && a.sha256().equals(attachment.sha256()))
                .findFirst().map(a -> attachment.withBlobKey(a.blobKey())).orElse(attachment);
        attachments.put(stored.id(), stored);
        uses.merge(stored.blobKey(), 1, Integer::sum);
        return stored;
    }

    Optional<Attachment> find(String id) {
        return Optional.ofNullable(attachments.get(id));
    }

    List<Attachment> find(Collection<String> ids) {
        List<Attachment> found = new ArrayList<>();
        for (String id : ids) {
            Attachment attachment = attachments.get(id);
            if (attachment != null) {
                found.add(attachment);
            }
        }
        return found;
    }

    long bytesOf(String ownerId) {
        Map<String, Long> blobs = new HashMap<>();
        for (Attachment a : attachments.values()) {
            if (a.ownerId().equals(ownerId)) {
                blobs.put(a.blobKey(), a.size());
            }
        }
        return blobs.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Removes a deleted thread's attachments; blobs no other attachment uses become unreferenced. */
    void deleteOfThread(String threadId) {
        attachments.values().removeIf(a -> {
            if (!a.threadId().equals(threadId)) {
                return false;
            }
            if (uses.merge(a.blobKey(), -1, Integer::sum) == 0) {
                uses.remove(a.blobKey());
                unreferenced.add(a.blobKey());
            }
            return true;
        });
    }

    List<String> unreferenced(int limit) {
        return unreferenced.stream().limit(limit).toList();
    }

    void forget(Collection<String> keys) {
        unreferenced.removeAll(keys);
    }
}
