package dev.parley.chat.store.jdbi;

import dev.parley.chat.ChatException;
import dev.parley.chat.attachment.BlobStore;
import dev.parley.chat.store.jdbi.internal.BlobDao;
import dev.parley.chat.store.jdbi.internal.StoreDatabase;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * The default {@link BlobStore}: attachment bytes in the store's own database ({@code parley_blob_chunks}),
 * beside the rows that name them, over the same connections. Get it from {@link JdbiChatStore#blobStore()};
 * it works while that store is open.
 *
 * <ul>
 *   <li>{@link #put} reads the upload in chunks of {@value #CHUNK_BYTES} bytes and writes each as it arrives,
 *       in a short transaction of its own: no transaction (on SQLite: the file's one write lock) is held while
 *       the next bytes are awaited, and no more than one chunk is held in memory. If reading fails, the
 *       chunks written so far are deleted and the stream's exception is rethrown as it is (an
 *       {@link IOException} as an {@link UncheckedIOException}). A process that dies during an upload leaves
 *       its chunks; {@link #deleteOwner} removes them when the owner is erased.</li>
 *   <li>{@link #open} returns a stream that reads one chunk at a time, when it is needed, starting with the
 *       chunk that holds the offset. A blob deleted while it is read ends the stream with an IOException.</li>
 *   <li>Deleted chunks leave what any deleted row leaves (see the module's README, "Erasure"): on SQLite,
 *       nothing (secure delete, and the write-ahead log is checkpointed after each delete); on PostgreSQL,
 *       dead rows until a VACUUM ({@link JdbiChatStore#reclaimErasedSpace}).</li>
 * </ul>
 *
 * <p>Thread-safe. Failures of the database are {@link ChatException}s with STORE_FAILURE.
 */
public final class JdbiBlobStore implements BlobStore {
    /** The size of a chunk: each {@link #put} holds one in memory, each read of {@link #open}'s stream one. */
    public static final int CHUNK_BYTES = 256 * 1024;

    private final StoreDatabase db;

    JdbiBlobStore(StoreDatabase db) {
        this.db = db;
    }

    /**
     * Stores the bytes of {@code content} to its end, chunk by chunk as they arrive, under a new key (a random
     * UUID). An empty stream makes a blob of no bytes.
     *
     * @throws UncheckedIOException if reading failed with an IOException (nothing is kept)
     * @throws RuntimeException whatever {@code content} threw, unchanged (nothing is kept)
     * @throws ChatException STORE_FAILURE if the database failed (nothing is kept)
     */
    @Override
    public String put(String ownerId, InputStream content) {
        Objects.requireNonNull(ownerId, "ownerId");
        Objects.requireNonNull(content, "content");
        String key = UUID.randomUUID().toString();
        byte[] buffer = new byte[CHUNK_BYTES];
        try {
            for (int seq = 0; ; seq++) {
                int length = fill(content, buffer);
                if (length == 0 && seq > 0) {
                    return key;
                }
                byte[] data = length == buffer.length ? buffer : Arrays.copyOf(buffer, length);
                int chunk = seq;
                db.write("storing a chunk of a blob", dao -> dao.blobs().insertChunk(key, chunk, ownerId, data));
                if (length < buffer.length) {
                    return key;
                }
            }
        } catch (RuntimeException | Error e) {
            discard(key, e);
            throw e;
        }
    }

    /** Reads until the buffer is full or the stream ends; how many bytes it holds. */
    private static int fill(InputStream content, byte[] buffer) {
        try {
            return content.readNBytes(buffer, 0, buffer.length);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Deletes the chunks of an upload that failed; a failure of this is added to the upload's. */
    private void discard(String key, Throwable failure) {
        try {
            delete(key);
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    /**
     * The blob's bytes from {@code offset} (past its end: none) to its end, read chunk by chunk; the caller
     * closes the stream.
     *
     * @throws ChatException NOT_FOUND if no blob has the key; STORE_FAILURE if the database failed
     * @throws IllegalArgumentException if {@code offset} is negative
     */
    @Override
    public InputStream open(String key, long offset) {
        Objects.requireNonNull(key, "key");
        if (offset < 0) {
            throw new IllegalArgumentException("offset must not be negative, got " + offset);
        }
        List<BlobDao.Chunk> chunks = db.read("reading the chunks of a blob", dao -> dao.blobs().chunks(key));
        if (chunks.isEmpty()) {
            throw ChatException.notFound("blob", key);
        }
        int first = 0;
        long skip = offset;
        while (first < chunks.size() && skip >= chunks.get(first).size()) {
            skip -= chunks.get(first).size();
            first++;
        }
        return new ChunkStream(key, chunks.subList(first, chunks.size()), first < chunks.size() ? (int) skip : 0);
    }

    /**
     * Deletes the blob's chunks in one transaction; on SQLite the write-ahead log is then checkpointed, so
     * that no copy of the bytes is left in the files.
     */
    @Override
    public void delete(String key) {
        Objects.requireNonNull(key, "key");
        if (db.write("deleting a blob", dao -> dao.blobs().delete(key)) > 0) {
            db.dialect().afterErase(db);
        }
    }

    /**
     * Deletes every blob of the owner, a transaction per blob (a large owner does not hold the write lock for
     * long), also the chunks an interrupted {@link #put} left; on SQLite the write-ahead log is then
     * checkpointed.
     */
    @Override
    public void deleteOwner(String ownerId) {
        Objects.requireNonNull(ownerId, "ownerId");
        List<String> keys = db.read("finding an owner's blobs", dao -> dao.blobs().blobsOf(ownerId));
        for (String key : keys) {
            db.write("deleting an owner's blob", dao -> dao.blobs().delete(key));
        }
        if (!keys.isEmpty()) {
            db.dialect().afterErase(db);
        }
    }

    /** A blob's bytes, each chunk read from the database when the one before is used up. Not thread-safe. */
    private final class ChunkStream extends InputStream {
        private final String key;
        private final List<BlobDao.Chunk> chunks;
        private int next;
        private byte[] current = new byte[0];
        private int position;
        private int skipInFirst;
        private boolean closed;

        ChunkStream(String key, List<BlobDao.Chunk> chunks, int skipInFirst) {
            this.key = key;
            this.chunks = chunks;
            this.skipInFirst = skipInFirst;
        }

        @Override
        public int read() throws IOException {
            return hasByte() ? current[position++] & 0xff : -1;
        }

        @Override
        public int read(byte[] target, int offset, int length) throws IOException {
            Objects.checkFromIndexSize(offset, length, target.length);
            if (length == 0) {
                return 0;
            }
            if (!hasByte()) {
                return -1;
            }
            int count = Math.min(length, current.length - position);
            System.arraycopy(current, position, target, offset, count);
            position += count;
            return count;
        }

        @Override
        public int available() {
            return closed ? 0 : current.length - position;
        }

        @Override
        public void close() {
            closed = true;
            current = new byte[0];
            position = 0;
        }

        /** True once the current chunk has a byte left, reading the next chunks as needed; false at the end. */
        private boolean hasByte() throws IOException {
            if (closed) {
                throw new IOException("the stream is closed");
            }
            while (position == current.length) {
                if (next == chunks.size()) {
                    return false;
                }
                BlobDao.Chunk chunk = chunks.get(next++);
                current = load(chunk.seq());
                position = Math.min(skipInFirst, current.length);
                skipInFirst = 0;
            }
            return true;
        }

        private byte[] load(int seq) throws IOException {
            try {
                return db.read("reading a chunk of a blob", dao -> dao.blobs().readChunk(key, seq))
                        .orElseThrow(() -> new IOException("the blob " + key + " was deleted while it was read"));
            } catch (ChatException e) {
                throw new IOException("reading the blob " + key + " failed", e);
            }
        }
    }
}
