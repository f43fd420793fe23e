package dev.parley.chat.attachment;

import dev.parley.chat.ChatException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Keeps blobs in memory, for tests and for hosts on {@link dev.parley.chat.store.InMemoryChatStore}: each blob
 * is held whole, so keep the attachment limits small. Thread-safe.
 */
public final class InMemoryBlobStore implements BlobStore {
    private record Blob(String ownerId, byte[] bytes) {
    }

    private final Map<String, Blob> blobs = new ConcurrentHashMap<>();

    @Override
    public String put(String ownerId, InputStream content) {
        byte[] bytes;
        try {
            bytes = content.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String key = UUID.randomUUID().toString();
        blobs.put(key, new Blob(ownerId, bytes));
        return key;
    }

    @Override
    public InputStream open(String key, long offset) {
        Blob blob = blobs.get(key);
        if (blob == null) {
            throw ChatException.notFound("blob", key);
        }
        int from = (int) Math.min(offset, blob.bytes().length);
        return new ByteArrayInputStream(blob.bytes(), from, blob.bytes().length - from);
    }

    @Override
    public void delete(String key) {
        blobs.remove(key);
    }

    @Override
    public void deleteOwner(String ownerId) {
        blobs.values().removeIf(blob -> blob.ownerId().equals(ownerId));
    }

    /** How many blobs are kept (for tests that check nothing is left). */
    public int size() {
        return blobs.size();
    }
}
