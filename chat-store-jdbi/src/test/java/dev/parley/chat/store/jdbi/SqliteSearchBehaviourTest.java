package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.store.SearchQuery;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadTouch;
import java.nio.file.Path;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The search on a SQLite file (FTS5). */
class SqliteSearchBehaviourTest extends SearchBehaviourTest {
    @TempDir
    Path folder;

    @Override
    TestDatabase createDatabase() {
        return TestDatabase.sqliteFile(folder);
    }

    /**
     * The indexes read their content from views that add the owner: every insert, upsert, rename, message
     * delete and thread delete (whose cascade finds the thread gone) must tell FTS5 exactly what it indexed,
     * or the index would keep words it cannot find again. FTS5's integrity check compares index and content.
     */
    @Test
    void theIndexesStayExactThroughEveryKindOfWrite() {
        store.createThread(thread("a", "alice", "Lisbon", 1));
        store.createThread(thread("b", "bob", "Porto", 2));
        store.write(StoreBatch.builder().message(said("a1", "a", "tile museum"))
                .message(answered("a2", "a", "Looking", MessageStatus.IN_PROGRESS))
                .message(said("b1", "b", "port wine")).build());
        store.write(StoreBatch.builder().message(answered("a2", "a", "The tile museum opens at ten", MessageStatus.COMPLETED))
                .touch(new ThreadTouch("b", null, T0.plusSeconds(9), "Not taken")).build());
        store.updateThread(store.findThread("a").orElseThrow().withTitle("Lisbon, again"));
        store.deleteThread("b");
        Jdbi direct = Jdbi.create(database.dataSource());
        direct.useHandle(h -> {
            h.execute("INSERT INTO parley_message_search (parley_message_search) VALUES ('integrity-check')");
            h.execute("INSERT INTO parley_title_search (parley_title_search) VALUES ('integrity-check')");
        });
        assertThat(store.searchThreads("alice", SearchQuery.of("museum"), 0, 10)).extracting(hit -> hit.messageId())
                .containsExactly("a2");
        assertThat(store.searchThreads("bob", SearchQuery.of("port"), 0, 10)).isEmpty();
    }
}
