package dev.parley.chat.attachment;

import java.io.InputStream;

/**
 * Where attachment bytes are kept: the database by default ({@code JdbiBlobStore}), memory in tests, or any
 * store a host prefers (an S3-compatible bucket, a file system). Keys are chosen by the store and opaque to
 * everyone else; a blob is written once and never changed.
 *
 * <p>Thread-safe. Methods throw {@link dev.parley.chat.ChatException}: STORE_FAILURE when the store fails,
 * NOT_FOUND for an unknown key where said.
 */
public interface BlobStore {

    /**
     * Stores the bytes read from {@code content} to its end under a new key, without holding them all in
     * memory (a store may buffer a bounded part). If reading fails — the stream throws, as it does when an
     * upload passes a limit — nothing is kept and the exception is rethrown unchanged.
     *
     * @param ownerId whose bytes they are, so that {@link #deleteOwner} can find them
     * @return the new key
     */
    String put(String ownerId, InputStream content);

    /**
     * The bytes of a blob from {@code offset} to its end (none for an offset at or past the end); the caller
     * closes the stream. A store may read the bytes lazily: a blob deleted while its stream is read may end
     * the stream with an {@link java.io.IOException}.
     *
     * @throws dev.parley.chat.ChatException NOT_FOUND if no blob has the key
     */
    InputStream open(String key, long offset);

    /** Deletes a blob; nothing happens if no blob has the key. */
    void delete(String key);

    /**
     * Deletes every blob of an owner, also any an interrupted {@link #put} left behind. Called last when an
     * owner is erased.
     */
    void deleteOwner(String ownerId);
}
