package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Random;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link JdbiBlobStore} on a real database (per database, in the subclasses): chunks written as the bytes
 * arrive and read one at a time from any offset, nothing kept of an upload that fails, every blob of an owner
 * deleted with it.
 */
abstract class BlobStoreBehaviourTest {
    static final int CHUNK = JdbiBlobStore.CHUNK_BYTES;

    TestDatabase database;
    JdbiChatStore store;
    JdbiBlobStore blobs;
    Jdbi direct;

    abstract TestDatabase createDatabase();

    @BeforeEach
    void openStore() {
        database = createDatabase();
        store = database.store().build();
        blobs = store.blobStore();
        direct = Jdbi.create(database.dataSource());
    }

    @AfterEach
    void closeStore() {
        store.close();
        database.close();
    }

    long chunks() {
        return direct.withHandle(h -> h.createQuery("SELECT COUNT(*) FROM parley_blob_chunks").mapTo(Long.class).one());
    }

    long chunksOf(String key) {
        return direct.withHandle(h -> h.createQuery("SELECT COUNT(*) FROM parley_blob_chunks WHERE blob_key = :key")
                .bind("key", key).mapTo(Long.class).one());
    }

    static byte[] randomBytes(int length, long seed) {
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    static byte[] read(InputStream stream) throws IOException {
        try (stream) {
            return stream.readAllBytes();
        }
    }

    @Test
    void aBlobOfSeveralChunksReadsBackWholeAndFromAnOffsetInAnyChunk() throws IOException {
        byte[] bytes = randomBytes(1024 * 1024 + 17, 1);
        String key = blobs.put("alice", new ByteArrayInputStream(bytes));
        assertThat(chunksOf(key)).as("four full chunks and 17 bytes").isEqualTo(5);

        assertThat(read(blobs.open(key, 0))).isEqualTo(bytes);
        for (long offset : new long[] {1, 100, CHUNK - 1, CHUNK, 2L * CHUNK + 5, 4L * CHUNK, 4L * CHUNK + 3,
                bytes.length - 1}) {
            assertThat(read(blobs.open(key, offset))).as("from %d", offset)
                    .isEqualTo(Arrays.copyOfRange(bytes, (int) offset, bytes.length));
        }
        assertThat(read(blobs.open(key, bytes.length))).as("from the end").isEmpty();
        assertThat(read(blobs.open(key, bytes.length + 10L))).as("past the end").isEmpty();

        try (InputStream stream = blobs.open(key, 0)) {
            assertThat(stream.read()).isEqualTo(bytes[0] & 0xff);
            byte[] some = new byte[10];
            assertThat(stream.readNBytes(some, 0, 10)).isEqualTo(10);
            assertThat(some).isEqualTo(Arrays.copyOfRange(bytes, 1, 11));
        }
    }

    /**
     * The stream starts at the chunk holding the offset and reads the next chunk only once it needs it: with
     * every chunk but the middle one deleted under it, a read from the middle chunk gets all of that chunk
     * and then fails on the next.
     */
    @Test
    void aReadStartsAtTheOffsetsChunkAndReadsTheNextOnlyWhenItNeedsIt() throws IOException {
        byte[] bytes = randomBytes(1024 * 1024 + 17, 2);
        String key = blobs.put("alice", new ByteArrayInputStream(bytes));
        InputStream stream = blobs.open(key, 2L * CHUNK + 5);
        direct.useHandle(h -> h.createUpdate("DELETE FROM parley_blob_chunks WHERE blob_key = :key AND seq <> 2")
                .bind("key", key).execute());

        byte[] rest = new byte[CHUNK - 5];
        assertThat(stream.readNBytes(rest, 0, rest.length)).isEqualTo(rest.length);
        assertThat(rest).isEqualTo(Arrays.copyOfRange(bytes, 2 * CHUNK + 5, 3 * CHUNK));
        assertThatThrownBy(stream::read).isInstanceOf(IOException.class).hasMessageContaining("deleted");
        stream.close();
    }

    @Test
    void anUnknownBlobIsNotFoundAndDeletingItDoesNothing() {
        assertThatThrownBy(() -> blobs.open("nope", 0))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
        blobs.delete("nope");
        blobs.deleteOwner("nobody");
    }

    @Test
    void anEmptyStreamIsABlobOfNoBytes() throws IOException {
        String key = blobs.put("alice", InputStream.nullInputStream());
        assertThat(read(blobs.open(key, 0))).isEmpty();
        blobs.delete(key);
        assertThat(chunks()).isZero();
    }

    @Test
    void aBlobIsDeletedWithAllItsChunksAndNoOtherBlob() throws IOException {
        byte[] kept = randomBytes(CHUNK + 1, 3);
        String deleted = blobs.put("alice", new ByteArrayInputStream(randomBytes(3 * CHUNK, 4)));
        String other = blobs.put("alice", new ByteArrayInputStream(kept));
        blobs.delete(deleted);
        assertThat(chunksOf(deleted)).isZero();
        assertThatThrownBy(() -> blobs.open(deleted, 0)).isInstanceOf(ChatException.class);
        assertThat(read(blobs.open(other, 0))).isEqualTo(kept);
    }

    /**
     * A stream that fails after three chunks' worth of bytes: the chunks written so far (there were some, the
     * stream checks when it fails) are deleted and the failure is rethrown, an IOException unchecked.
     */
    @Test
    void anUploadWhoseStreamFailsMidwayLeavesNoChunk() {
        IOException cut = new IOException("connection reset");
        long[] writtenWhenItFailed = new long[1];
        InputStream failing = new GeneratedStream(3L * CHUNK + 100, 5) {
            @Override
            void atEnd() throws IOException {
                writtenWhenItFailed[0] = chunks();
                throw cut;
            }
        };
        assertThatThrownBy(() -> blobs.put("alice", failing))
                .isInstanceOf(UncheckedIOException.class).hasCause(cut);
        assertThat(writtenWhenItFailed[0]).as("chunks written before the failure").isEqualTo(3);
        assertThat(chunks()).as("chunks left").isZero();
    }

    @Test
    void aChatExceptionFromTheStreamIsRethrownAsItIsAndNothingIsKept() {
        ChatException tooLarge = new ChatException(ErrorCode.TOO_LARGE, "the attachment is larger than 300000 bytes");
        InputStream failing = new GeneratedStream(2L * CHUNK + 1, 6) {
            @Override
            void atEnd() {
                throw tooLarge;
            }
        };
        assertThatThrownBy(() -> blobs.put("alice", failing)).isSameAs(tooLarge);
        assertThat(chunks()).isZero();
    }

    /**
     * A process that died during an upload left chunks no attachment names (written here as the dead put
     * wrote them): erasing the owner deletes them with the owner's complete blobs, and another owner's stay.
     */
    @Test
    void deletingAnOwnerDeletesItsBlobsAndTheChunksOfAnInterruptedUpload() throws IOException {
        String complete = blobs.put("alice", new ByteArrayInputStream(randomBytes(CHUNK + 10, 7)));
        byte[] bobs = randomBytes(100, 8);
        String bobsKey = blobs.put("bob", new ByteArrayInputStream(bobs));
        direct.useHandle(h -> {
            for (int seq = 0; seq < 2; seq++) {
                h.createUpdate("INSERT INTO parley_blob_chunks (blob_key, seq, owner_id, data) "
                        + "VALUES ('interrupted', :seq, 'alice', :data)")
                        .bind("seq", seq).bind("data", randomBytes(CHUNK, seq)).execute();
            }
        });
        assertThat(chunks()).isEqualTo(5);

        blobs.deleteOwner("alice");
        assertThat(chunksOf(complete)).isZero();
        assertThat(chunksOf("interrupted")).isZero();
        assertThat(read(blobs.open(bobsKey, 0))).isEqualTo(bobs);
        assertThat(chunks()).isEqualTo(1);
    }

    /**
     * A 64 MiB upload from a stream that makes its bytes as they are read (no array holds them): when half
     * of it has been read, the chunks of that half are in the database already, so the store holds no more
     * than a chunk of it; what is read back is what was sent.
     */
    @Test
    void aLargeUploadIsWrittenChunkByChunkAsItArrives() throws Exception {
        long size = 64L * 1024 * 1024;
        long[] writtenAtHalf = {-1};
        MessageDigest sent = MessageDigest.getInstance("SHA-256");
        GeneratedStream upload = new GeneratedStream(size, 9) {
            @Override
            void produced(byte[] bytes, int offset, int length, long before) {
                sent.update(bytes, offset, length);
                if (before < size / 2 && before + length >= size / 2) {
                    writtenAtHalf[0] = chunks();
                }
            }
        };
        String key = blobs.put("alice", upload);
        assertThat(writtenAtHalf[0]).as("chunks in the database when half was read")
                .isGreaterThanOrEqualTo(size / 2 / CHUNK - 1);
        assertThat(chunksOf(key)).isEqualTo(size / CHUNK);

        MessageDigest received = MessageDigest.getInstance("SHA-256");
        long count = 0;
        try (InputStream stream = blobs.open(key, 0)) {
            byte[] buffer = new byte[64 * 1024];
            for (int n; (n = stream.read(buffer)) > 0; count += n) {
                received.update(buffer, 0, n);
            }
        }
        assertThat(count).isEqualTo(size);
        assertThat(received.digest()).isEqualTo(sent.digest());
    }

    /**
     * {@code length} pseudo-random bytes made as they are read; {@link #atEnd} runs when they are all read
     * (it may throw, as a failing upload does), {@link #produced} after each read.
     */
    static class GeneratedStream extends InputStream {
        private final long length;
        private final Random random;
        private long position;

        GeneratedStream(long length, long seed) {
            this.length = length;
            this.random = new Random(seed);
        }

        void atEnd() throws IOException {
        }

        void produced(byte[] bytes, int offset, int count, long before) {
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] target, int offset, int count) throws IOException {
            if (position == length) {
                atEnd();
                return -1;
            }
            int n = (int) Math.min(Math.min(count, 8192), length - position);
            byte[] made = new byte[n];
            random.nextBytes(made);
            System.arraycopy(made, 0, target, offset, n);
            long before = position;
            position += n;
            produced(target, offset, n, before);
            return n;
        }
    }
}
