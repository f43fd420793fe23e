package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.store.SearchQuery;
import dev.parley.chat.store.StoreBatch;
import org.junit.jupiter.api.Test;

/** The search on PostgreSQL (tsvectors with GIN indexes). */
class PostgresSearchBehaviourTest extends SearchBehaviourTest {
    @Override
    TestDatabase createDatabase() {
        return TestDatabase.postgres();
    }

    /** PostgreSQL's text cannot hold U+0000: a NUL in a message is stored as U+FFFD and splits the word. */
    @Test
    void aNulInATextNeitherFailsTheBatchNorHidesItsWords() {
        store.createThread(thread("t", "alice", "Nul", 1));
        store.write(StoreBatch.builder().message(said("u", "t", "ancho\u0000vies and olives")).build());
        assertThat(store.searchThreads("alice", SearchQuery.of("olives"), 0, 10)).hasSize(1);
        assertThat(store.searchThreads("alice", SearchQuery.of("vies"), 0, 10)).hasSize(1);
    }
}
