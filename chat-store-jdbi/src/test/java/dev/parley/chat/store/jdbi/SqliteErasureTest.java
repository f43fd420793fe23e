package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On a SQLite file: besides the rows, the bytes. After a delete, neither the database file nor its
 * write-ahead log holds a word of the deleted thread — not in a row, not in the search index's segments,
 * not in an attachment's chunks, not in free space — while the store is still open (closing it would
 * checkpoint and delete the log, and hide what a running store leaves).
 */
abstract class SqliteErasureTest extends ErasureTest {
    @TempDir
    Path folder;

    @Override
    List<String> parleyTables(Handle handle) {
        return handle.createQuery("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'parley%' "
                + "AND name <> 'parley_schema_history' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' "
                + "AND name NOT LIKE 'parley_message_search%' AND name NOT LIKE 'parley_title_search%'")
                .mapTo(String.class).list();
    }

    /** The database file and its write-ahead log (and a rollback journal, if one is left), as they are now. */
    Map<String, byte[]> files() throws IOException {
        Map<String, byte[]> files = new LinkedHashMap<>();
        for (String suffix : List.of("", "-wal", "-journal")) {
            Path file = folder.resolve("parley.db" + suffix);
            if (Files.exists(file)) {
                files.put(file.getFileName().toString(), Files.readAllBytes(file));
            }
        }
        return files;
    }

    @Test
    void anErasedThreadLeavesNoByteOfItsWordsInTheFileNorItsWriteAheadLog() throws IOException {
        writeThread("erased-t", erasedWord);
        writeThread("kept-t", keptWord);
        assertThat(holding(files(), erasedWord)).as("the control: the word is written").isNotEmpty();

        assertThat(store.deleteThread("erased-t")).isTrue();
        purgeUnreferencedBlobs();

        Map<String, byte[]> files = files();
        assertThat(holding(files, keptWord)).as("the control: the kept thread's word is found").isNotEmpty();
        assertThat(holding(files, erasedWord)).as("files holding the erased word").isEmpty();

        writeThread("later-t", "xwlaterwords");
        store.reclaimErasedSpace(JdbiChatStore.Reclaim.REWRITE);
        files = files();
        assertThat(holding(files, erasedWord)).isEmpty();
        assertThat(holding(files, keptWord)).isNotEmpty();
        assertThat(store.findThread("later-t")).as("the store goes on after the vacuum").isPresent();
    }

    /**
     * Through the engine: the bytes of an uploaded file (three chunks) are in neither the file nor its log once
     * its thread is deleted, and the bytes of the owner's other file not once the owner is erased.
     */
    @Test
    void anUploadedFileLeavesNoByteInTheFileNorItsWriteAheadLog() throws IOException {
        try (ChatEngine engine = attachmentEngine()) {
            String erased = engine.createThread("alice", NewThread.empty()).id();
            String kept = engine.createThread("alice", NewThread.empty()).id();
            engine.attachments().upload("alice", erased, "notes.txt", "text/plain",
                    new ByteArrayInputStream(textFile(erasedWord, 700_000)));
            engine.attachments().upload("alice", kept, "notes.txt", "text/plain",
                    new ByteArrayInputStream(textFile(keptWord, 700_000)));
            assertThat(holding(files(), erasedWord)).as("the control: the bytes are written").isNotEmpty();

            engine.deleteThread("alice", erased);
            Map<String, byte[]> files = files();
            assertThat(holding(files, keptWord)).as("the control: the other file's bytes are found").isNotEmpty();
            assertThat(holding(files, erasedWord)).as("files holding the deleted file's bytes").isEmpty();

            engine.eraseOwner("alice");
            assertThat(holding(files(), keptWord)).as("files holding the erased owner's bytes").isEmpty();
        }
    }
}
