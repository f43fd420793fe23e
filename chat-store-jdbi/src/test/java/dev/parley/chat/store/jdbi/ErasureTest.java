package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.attachment.Attachment;
import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Feedback;
import dev.parley.chat.model.FeedbackRating;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.store.SearchQuery;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadGoneException;
import dev.parley.chat.store.ThreadTouch;
import dev.parley.chat.store.jdbi.internal.SchemaDao;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Flow;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Deleting a thread leaves no row of it in any table, a write of a run still going afterwards adds none,
 * and (per database, in the subclasses) no byte of its text in the database's files.
 */
abstract class ErasureTest {
    static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");
    /** Every text of the erased thread holds this word; nothing else does (in this test or another one). */
    final String erasedWord = "xqzanzibar" + randomLetters();
    /** Every text of the kept thread holds this one: the control that the checks can find a word. */
    final String keptWord = "xjcapybara" + randomLetters();

    TestDatabase database;
    JdbiChatStore store;
    /** The blob key of each thread's attachment that {@link #writeThread} stored. */
    final Map<String, String> blobKeys = new HashMap<>();

    abstract TestDatabase createDatabase();

    /** The Parley tables holding rows (not FTS5's virtual tables and their shadows, nor Flyway's history). */
    abstract List<String> parleyTables(Handle handle);

    @BeforeEach
    void openStore() {
        database = createDatabase();
        store = database.store().build();
    }

    @AfterEach
    void closeStore() {
        store.close();
        database.close();
    }

    /** A thread with a row in every table, each text holding {@code word}; every id starts with the thread's. */
    void writeThread(String threadId, String word) {
        store.createThread(new ChatThread(threadId, "alice", "Trip " + word, "sess-" + word, null, null,
                ThreadStatus.ACTIVE, T0, T0));
        String runId = threadId + "-r";
        Run run = new Run(runId, threadId, "alice", RunStatus.RUNNING, runId + "-u", runId + "-a",
                "please plan " + word, null, null, null, Map.of("note", word), T0, T0, null, null, null, null);
        StoreBatch.Builder batch = StoreBatch.builder().run(run)
                .touch(new ThreadTouch(threadId, null, T0.plusSeconds(1), null))
                .message(new UserMessage(runId + "-u", threadId, runId, null, MessageStatus.COMPLETED, T0,
                        "please plan " + word))
                .message(new AssistantMessage(runId + "-a", threadId, runId, runId + "-u", MessageStatus.COMPLETED, T0,
                        "here is the plan for " + word, null, null))
                .message(new ThinkingMessage(runId + "-t", threadId, runId, runId + "-a", MessageStatus.COMPLETED, T0,
                        "thinking about " + word))
                .message(new ActionExecutionMessage(runId + "-x", threadId, runId, runId + "-a",
                        MessageStatus.COMPLETED, T0, "x1", "lookup", "{\"q\":\"" + word + "\"}"))
                .event(new RunEvent(runId, 1, T0.toEpochMilli(), new AgentStreamEvent.RunStarted(threadId, runId,
                        runId + "-a")))
                .input(new PendingInput(runId, "c1", runId + "-c", new ClarifyRequest("which " + word + "?",
                        List.of(word), false), null, null, InputState.PENDING, null, T0, null))
                .reserveSeq(runId, 4096)
                .resumePoint(new StoreBatch.ResumePoint(runId, "17", 2))
                .lease(new RunLease(runId, "host-a", T0.plusSeconds(30)))
                .outbox(dev.parley.chat.outbox.OutboxEntry.runEnded(new Run(runId, threadId, "alice",
                        RunStatus.SUCCEEDED, runId + "-u", runId + "-a", "x", null, null, null, Map.of(), T0, T0, T0,
                        null, null, null), "ops"));
        for (int seq = 2; seq <= 40; seq++) {
            batch.event(new RunEvent(runId, seq, T0.toEpochMilli() + seq,
                    new AgentStreamEvent.TextDelta(runId + "-a", " " + word + seq)));
        }
        store.write(batch.build());
        store.claimHostAction(runId, "x1", "lookup", "{\"q\":\"" + word + "\"}", T0);
        store.completeHostAction(runId, "x1", "{\"found\":\"" + word + "\"}", false, T0);
        store.saveFeedback(new Feedback(threadId, runId, runId + "-a", "alice", FeedbackRating.UP, "nice " + word, T0));
        store.rememberApproval(threadId, "refund_" + word, T0);
        byte[] notes = ("notes about " + word).getBytes(StandardCharsets.UTF_8);
        String key = store.blobStore().put("alice", new ByteArrayInputStream(notes));
        store.saveAttachment(new Attachment(threadId + "-f", "alice", threadId, "notes-" + word + ".txt", "text/plain",
                notes.length, sha256(notes), key, T0));
        blobKeys.put(threadId, key);
    }

    /** What the engine does after deleting a thread: deletes the bytes of the blobs it freed, then forgets them. */
    void purgeUnreferencedBlobs() {
        List<String> keys = store.unreferencedBlobs(1000);
        keys.forEach(store.blobStore()::delete);
        store.forgetBlobs(keys);
    }

    /**
     * An engine on the store keeping attachments in {@link JdbiChatStore#blobStore()}, with a runtime that takes
     * text files and never runs (these tests upload and delete, and send nothing).
     */
    ChatEngine attachmentEngine() {
        RuntimeAdapter runtime = new RuntimeAdapter() {
            @Override
            public Flow.Publisher<AgentStreamEvent> generateResponse(RunRequest request) {
                throw new UnsupportedOperationException("the erasure tests start no run");
            }

            @Override
            public AttachmentSupport attachmentSupport() {
                return AttachmentSupport.of("text/plain");
            }
        };
        return ChatEngine.builder().runtime(runtime).store(store).blobStore(store.blobStore()).build();
    }

    /**
     * A text file of about {@code size} bytes holding {@code marker} at its start, every 100 lines and at its
     * end (a copy split between two chunks or pages is not found; the others are).
     */
    static byte[] textFile(String marker, int size) {
        StringBuilder text = new StringBuilder(marker).append('\n');
        int line = 0;
        while (text.length() < size) {
            text.append("line ").append(line++).append(": the quick brown fox jumps over the lazy dog\n");
            if (line % 100 == 0) {
                text.append(marker).append('\n');
            }
        }
        return text.append(marker).append('\n').toString().getBytes(StandardCharsets.UTF_8);
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * After the delete, and after a run of the deleted thread went on writing (a batch of every kind, single
     * writes), no row of any Parley table names the thread, its runs or messages, or holds its words; the
     * other thread has rows in every table.
     */
    @Test
    void deletingAThreadLeavesNoRowOfItInAnyTableAndALateWriteAddsNone() {
        writeThread("erased-t", erasedWord);
        writeThread("kept-t", keptWord);
        assertThat(store.deleteThread("erased-t")).isTrue();

        String runId = "erased-t-r";
        assertThatThrownBy(() -> store.write(StoreBatch.builder()
                .run(new Run(runId, "erased-t", "alice", RunStatus.CANCELLED, runId + "-u", runId + "-a",
                        "please plan " + erasedWord, null, null, null, Map.of(), T0, T0, T0, null, null, null))
                .message(new AssistantMessage(runId + "-a", "erased-t", runId, runId + "-u", MessageStatus.COMPLETED,
                        T0, "late " + erasedWord, null, null))
                .event(new RunEvent(runId, 41, T0.toEpochMilli(), new AgentStreamEvent.TextDelta(runId + "-a",
                        erasedWord)))
                .reserveSeq(runId, 8192).resumePoint(new StoreBatch.ResumePoint(runId, "40", 0))
                .lease(new RunLease(runId, "host-a", T0.plusSeconds(60)))
                .outbox(dev.parley.chat.outbox.OutboxEntry.runEnded(new Run(runId, "erased-t", "alice",
                        RunStatus.CANCELLED, runId + "-u", runId + "-a", "x", null, null, null, Map.of(), T0, T0, T0,
                        null, null, null), "late-" + erasedWord))
                .build()))
                .isInstanceOfSatisfying(ThreadGoneException.class, e -> assertThat(e.runIds()).containsExactly(runId));
        assertThatThrownBy(() -> store.write(StoreBatch.builder().event(new RunEvent(runId, 42, T0.toEpochMilli(),
                new AgentStreamEvent.TextDelta(runId + "-a", erasedWord))).build()))
                .isInstanceOf(ThreadGoneException.class);
        assertThatThrownBy(() -> store.reserveSeq(runId, 9000)).isInstanceOf(ThreadGoneException.class);
        assertThatThrownBy(() -> store.claimHostAction(runId, "x2", "lookup", erasedWord, T0))
                .isInstanceOf(ThreadGoneException.class);
        assertThatThrownBy(() -> store.saveFeedback(new Feedback("erased-t", runId, runId + "-a", "bob",
                FeedbackRating.DOWN, erasedWord, T0)))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
        assertThatThrownBy(() -> store.rememberApproval("erased-t", erasedWord, T0))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));

        String erasedBlob = blobKeys.get("erased-t");
        String keptBlob = blobKeys.get("kept-t");
        assertThat(store.unreferencedBlobs(10)).as("the delete freed the thread's blob").containsExactly(erasedBlob);
        purgeUnreferencedBlobs();

        Jdbi jdbi = Jdbi.create(database.dataSource());
        List<String> tables = jdbi.withHandle(this::parleyTables);
        assertThat(tables).as("every table of the schema is checked").containsExactlyInAnyOrderElementsOf(SchemaDao.TABLES);
        for (String table : tables) {
            List<String> rows = rows(jdbi, table);
            if (!table.equals("parley_unreferenced_blobs")) {
                assertThat(rows).as("rows of %s", table).anyMatch(row -> row.contains("kept-t") || row.contains(keptWord)
                        || row.contains(keptBlob));
            }
            assertThat(rows).as("rows of %s", table)
                    .noneMatch(row -> row.contains("erased-t") || row.contains(erasedWord) || row.contains(erasedBlob));
        }
        assertThat(rows(jdbi, "parley_unreferenced_blobs")).as("the purge forgot the deleted blob").isEmpty();
        assertThat(store.searchThreads("alice", SearchQuery.of(erasedWord), 0, 10)).isEmpty();
        assertThat(store.searchThreads("alice", SearchQuery.of(keptWord), 0, 10)).hasSize(1);
    }

    /**
     * Through the engine: an uploaded file leaves no row when its thread is deleted (its blob is freed and its
     * chunks deleted) and none when its owner is erased, while another owner's file stays.
     */
    @Test
    void anUploadedFileLeavesNoRowAfterItsThreadIsDeletedOrItsOwnerErased() {
        String bobsWord = "xbwombat" + randomLetters();
        Jdbi jdbi = Jdbi.create(database.dataSource());
        try (ChatEngine engine = attachmentEngine()) {
            String erased = engine.createThread("alice", NewThread.empty()).id();
            String kept = engine.createThread("alice", NewThread.empty()).id();
            String bobs = engine.createThread("bob", NewThread.empty()).id();
            Attachment erasedFile = engine.attachments().upload("alice", erased, "notes.txt", "text/plain",
                    new ByteArrayInputStream(textFile(erasedWord, 700_000)));
            Attachment keptFile = engine.attachments().upload("alice", kept, "notes.txt", "text/plain",
                    new ByteArrayInputStream(textFile(keptWord, 700_000)));
            Attachment bobsFile = engine.attachments().upload("bob", bobs, "notes.txt", "text/plain",
                    new ByteArrayInputStream(textFile(bobsWord, 1000)));
            assertThat(rowsHolding(jdbi, erasedWord)).as("the control: the file's bytes are stored")
                    .contains("parley_blob_chunks");

            engine.deleteThread("alice", erased);
            for (String marker : List.of(erased, erasedFile.id(), erasedFile.blobKey(), erasedWord)) {
                assertThat(rowsHolding(jdbi, marker)).as("tables holding %s", marker).isEmpty();
            }
            assertThat(rowsHolding(jdbi, keptWord)).contains("parley_blob_chunks");
            assertThat(rowsHolding(jdbi, keptFile.blobKey())).contains("parley_attachments", "parley_blobs",
                    "parley_blob_chunks");

            engine.eraseOwner("alice");
            for (String marker : List.of(kept, keptFile.id(), keptFile.blobKey(), keptWord, "alice")) {
                assertThat(rowsHolding(jdbi, marker)).as("tables holding %s", marker).isEmpty();
            }
            assertThat(rowsHolding(jdbi, bobsFile.blobKey())).as("bob's file stays").contains("parley_attachments",
                    "parley_blobs", "parley_blob_chunks");
            assertThat(rowsHolding(jdbi, bobsWord)).contains("parley_blob_chunks");
        }
    }

    /** Each row of a table, its values joined (bytes read as UTF-8). */
    static List<String> rows(Jdbi jdbi, String table) {
        return jdbi.withHandle(h -> h.createQuery("SELECT * FROM " + table).mapToMap().list()).stream()
                .map(row -> row.values().stream().map(ErasureTest::text).collect(Collectors.joining("|")))
                .collect(Collectors.toList());
    }

    /** The Parley tables with a row holding {@code text}. */
    List<String> rowsHolding(Jdbi jdbi, String text) {
        List<String> holding = new ArrayList<>();
        for (String table : jdbi.withHandle(this::parleyTables)) {
            if (rows(jdbi, table).stream().anyMatch(row -> row.contains(text))) {
                holding.add(table);
            }
        }
        return holding;
    }

    private static String randomLetters() {
        StringBuilder letters = new StringBuilder();
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        for (int i = 0; i < 10; i++) {
            letters.append((char) ('a' + random.nextInt(26)));
        }
        return letters.toString();
    }

    private static String text(Object value) {
        return value instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(value);
    }

    /** Where {@code needle} occurs in {@code haystack}, or -1. */
    static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i <= haystack.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /**
     * The part of a word found in every copy of it: FTS5 and GIN store a term after the prefix it shares with
     * the term before it, so the first letters may be missing there.
     */
    static byte[] findable(String word) {
        return word.substring(3).getBytes(StandardCharsets.UTF_8);
    }

    /** The names of the files among {@code files} holding {@code word}. */
    static List<String> holding(Map<String, byte[]> files, String word) {
        List<String> found = new ArrayList<>();
        files.forEach((name, bytes) -> {
            if (indexOf(bytes, findable(word)) >= 0) {
                found.add(name);
            }
        });
        return found;
    }
}
