package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.store.SearchQuery;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadSearchHit;
import dev.parley.chat.store.ThreadTouch;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The search beyond the core contract, on a real database: whatever is typed is searched as its words and
 * phrases (the matches equal chat-core's in-memory store's on the same data), newest match first, the
 * index following every write, another owner's threads never shown, snippets short and plain.
 */
abstract class SearchBehaviourTest {
    static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");
    TestDatabase database;
    JdbiChatStore store;
    final InMemoryChatStore reference = new InMemoryChatStore();

    abstract TestDatabase createDatabase();

    @BeforeEach
    void openDatabase() {
        database = createDatabase();
        store = database.store().build();
    }

    @AfterEach
    void closeDatabase() {
        store.close();
        database.close();
    }

    /** The same writes on the store under test and on the reference. */
    private void both(Consumer<ChatStore> writes) {
        writes.accept(store);
        writes.accept(reference);
    }

    static ChatThread thread(String id, String owner, String title, int minute) {
        return new ChatThread(id, owner, title, null, null, null, ThreadStatus.ACTIVE, T0, T0.plusSeconds(60L * minute));
    }

    static UserMessage said(String id, String threadId, String text) {
        return new UserMessage(id, threadId, "r-" + id, null, MessageStatus.COMPLETED, T0, text);
    }

    static AssistantMessage answered(String id, String threadId, String text, MessageStatus status) {
        return new AssistantMessage(id, threadId, "r-" + id, null, status, T0, text, null, null);
    }

    private List<String> ids(ChatStore on, String owner, String query) {
        return on.searchThreads(owner, SearchQuery.of(query), 0, 100).stream().map(hit -> hit.thread().id())
                .collect(Collectors.toList());
    }

    @Test
    void anyQueryIsSearchedAsItsWordsAndPhrasesNeverAsSyntax() {
        both(s -> {
            s.createThread(thread("lisbon", "alice", "Lisbon trip", 1));
            s.createThread(thread("porto", "alice", "Porto and not Lisbon", 2));
            s.createThread(thread("near", "alice", "Near the sea", 3));
            s.write(StoreBatch.builder()
                    .message(said("l1", "lisbon", "Which museums in Lisbon open on Mondays? Title: none"))
                    .message(answered("l2", "lisbon", "The tile museum (Museu do Azulejo) opens Tuesday to Sunday.",
                            MessageStatus.COMPLETED))
                    .message(said("p1", "porto", "A weekend in Porto, or a day in Lisbon? src/config.yml says porto"))
                    .message(said("n1", "near", "NEAR(lisbon porto) is what I typed; Évora & Sintra | Cascais"))
                    .message(said("n2", "near", "x".repeat(80) + " 'quoted' \"double\" 100% under_score"))
                    .build());
        });
        List<String> odd = List.of("lisbon AND NOT porto", "lisbon OR porto", "NEAR(lisbon porto)", "NEAR(lisbon porto, 2)",
                "title:lisbon", "search_text:lisbon", "{title search_text}: porto", "^lisbon", "lisbon*", "lis*", "\"lisbon",
                "lisbon\"", "\"\" lisbon", "-lisbon", "+lisbon", "(lisbon)", "lisbon:*", "lisbon & porto", "lisbon | porto",
                "!lisbon", "lisbon <-> porto", "lisbon <2> porto", "'lisbon'", "lisbon\\", "porto \\'", "lisbon'); DROP TABLE x;--",
                "%lis_", "ÉVORA", "évora sintra", "🙂 lisbon", "ลิสบอน", "config", "yml src", "\"day in lisbon\"",
                "\"in lisbon day\"", "\"tile museum\" opens", "x".repeat(70), "'quoted'", "100%", "under_score", "a",
                "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", "\"museu do azulejo\" \"tuesday to sunday\"");
        for (String query : odd) {
            assertThat(Set.copyOf(ids(store, "alice", query))).as(query)
                    .isEqualTo(Set.copyOf(ids(reference, "alice", query)));
        }
        assertThat(ids(store, "alice", "-lisbon")).as("a minus is no NOT").contains("lisbon", "porto", "near");
        assertThat(ids(store, "alice", "config")).as("a word inside a path").containsExactly("porto");
        assertThat(ids(store, "alice", "title:lisbon")).as("no column filter: both words, in one text")
                .containsExactly("lisbon");
        assertThat(ids(store, "alice", "\"in lisbon day\"")).isEmpty();
    }

    /**
     * The order {@code ChatStore.searchThreads} documents: threads by their newest matching message (the
     * latest first save first, however many texts match and whatever the thread's activity), then threads only
     * whose title matches, newest activity first.
     */
    @Test
    void newestMatchingMessageFirstThenTitleOnlyThreadsByActivity() {
        store.createThread(thread("many", "alice", "Sardines", 1));
        store.createThread(thread("one", "alice", "Dinner", 9));
        store.createThread(thread("title-old", "alice", "Sardines again", 2));
        store.createThread(thread("title-new", "alice", "More sardines", 3));
        StoreBatch.Builder batch = StoreBatch.builder();
        batch.message(said("o1", "one", "We could have sardines, or something else"));
        for (int i = 0; i < 3; i++) {
            batch.message(said("m" + i, "many", "sardines, grilled sardines " + i));
        }
        batch.message(said("t1", "title-old", "anchovies on toast"));
        batch.message(said("t2", "title-new", "anchovies on toast"));
        store.write(batch.build());

        assertThat(ids(store, "alice", "sardines")).containsExactly("many", "one", "title-new", "title-old");
        store.write(StoreBatch.builder().message(said("o2", "one", "sardines after all")).build());
        assertThat(ids(store, "alice", "sardines")).as("a newer matching message moves its thread up")
                .containsExactly("one", "many", "title-new", "title-old");
        store.write(StoreBatch.builder().touch(new ThreadTouch("title-old", null, T0.plusSeconds(3600), null)).build());
        assertThat(ids(store, "alice", "sardines")).as("title-only threads: newest activity first")
                .containsExactly("one", "many", "title-old", "title-new");
        assertThat(store.searchThreads("alice", SearchQuery.of("sardines"), 0, 10)).extracting(ThreadSearchHit::messageId)
                .containsExactly("o2", "m2", null, null);
    }

    /**
     * Many matches: the first page is the same as the reference store's (the order the contract documents),
     * and paging as the engine does (a cursor is the count of hits before the page) returns every hit exactly
     * once — also where threads hold far more matches than a page, so the store reads its matches in several
     * growing windows, and where the message hits end inside a page and title-only hits follow.
     */
    @Test
    void aFirstPageIsTheDocumentedOrderAndPagesReturnEveryHitOnce() {
        both(s -> {
            StoreBatch.Builder batch = StoreBatch.builder();
            for (int t = 0; t < 120; t++) {
                String title = t % 7 == 0 ? "Olive grove " + t : "Thread " + t;
                s.createThread(thread("t" + t, t % 10 == 9 ? "bob" : "alice", title, t));
                int matching = t % 13 == 0 ? 60 : t % 3;
                for (int m = 0; m < matching; m++) {
                    batch.message(said("m" + t + "-" + m, "t" + t, "olive oil and bread " + m));
                }
                batch.message(said("x" + t, "t" + t, "no such word here " + t));
            }
            s.write(batch.build());
            StoreBatch.Builder later = StoreBatch.builder();
            for (int t = 0; t < 120; t += 11) {
                later.message(said("late" + t, "t" + t, "olives, later on"));
            }
            s.write(later.build());
        });
        SearchQuery olive = SearchQuery.of("olive");
        List<String> expected = reference.searchThreads("alice", olive, 0, 1000).stream()
                .map(hit -> hit.thread().id()).toList();
        assertThat(expected).hasSizeGreaterThan(60);
        assertThat(store.searchThreads("alice", olive, 0, 20)).as("the first page")
                .extracting(hit -> hit.thread().id()).containsExactlyElementsOf(expected.subList(0, 20));
        assertThat(store.searchThreads("alice", olive, 0, 20)).extracting(ThreadSearchHit::messageId)
                .containsExactlyElementsOf(reference.searchThreads("alice", olive, 0, 20).stream()
                        .map(ThreadSearchHit::messageId).toList());

        for (int size : List.of(1, 7, 20, 50)) {
            List<String> paged = new ArrayList<>();
            for (int offset = 0; ; offset += size) {
                List<ThreadSearchHit> page = store.searchThreads("alice", olive, offset, size + 1);
                page.stream().limit(size).forEach(hit -> paged.add(hit.thread().id()));
                if (page.size() <= size) {
                    break;
                }
            }
            assertThat(paged).as("pages of " + size).doesNotHaveDuplicates().containsExactlyElementsOf(expected);
        }
        assertThat(ids(store, "bob", "olive")).as("bob's own, never alice's")
                .isEqualTo(reference.searchThreads("bob", olive, 0, 100).stream().map(hit -> hit.thread().id()).toList());
    }

    @Test
    void theIndexFollowsStreamingAnswersTitlesStepsAndDeletes() {
        store.createThread(new ChatThread("t", "alice", null, null, null, null, ThreadStatus.ACTIVE, T0, T0));
        store.createThread(thread("other", "alice", "Other", 1));
        store.write(StoreBatch.builder().message(said("u", "t", "what should I cook?"))
                .message(answered("a", "t", "Looking at tuna", MessageStatus.IN_PROGRESS))
                .message(new ThinkingMessage("s", "t", "r-a", "a", MessageStatus.COMPLETED, T0, "secret anchovies"))
                .message(said("o", "other", "tuna salad")).build());
        assertThat(ids(store, "alice", "tuna")).containsExactlyInAnyOrder("t", "other");
        assertThat(ids(store, "alice", "anchovies")).as("a step is not searched").isEmpty();

        store.write(StoreBatch.builder().message(answered("a", "t", "Grilled sardines are best", MessageStatus.COMPLETED))
                .touch(new ThreadTouch("t", null, T0.plusSeconds(5), "Fish ideas")).build());
        assertThat(ids(store, "alice", "tuna")).as("the answer's old text is gone").containsExactly("other");
        List<ThreadSearchHit> sardines = store.searchThreads("alice", SearchQuery.of("sardines"), 0, 10);
        assertThat(sardines).extracting(hit -> hit.messageId()).containsExactly("a");
        assertThat(sardines.get(0).snippet()).isEqualTo("Grilled sardines are best");
        List<ThreadSearchHit> fish = store.searchThreads("alice", SearchQuery.of("fish"), 0, 10);
        assertThat(fish).extracting(hit -> hit.thread().id()).as("the touch's default title").containsExactly("t");
        assertThat(fish.get(0).messageId()).as("a title hit").isNull();
        assertThat(fish.get(0).snippet()).isEqualTo("Fish ideas");

        store.write(StoreBatch.builder().touch(new ThreadTouch("t", null, null, "Not taken")).build());
        assertThat(ids(store, "alice", "taken")).as("a default title never replaces one").isEmpty();
        store.updateThread(store.findThread("t").orElseThrow().withTitle("Dinner plan"));
        assertThat(ids(store, "alice", "fish")).isEmpty();
        assertThat(ids(store, "alice", "dinner plan")).containsExactly("t");

        try (JdbiChatStore reopened = database.store().build()) {
            assertThat(ids(reopened, "alice", "sardines")).as("after a restart").containsExactly("t");
        }
        store.deleteThread("t");
        assertThat(ids(store, "alice", "sardines")).isEmpty();
        assertThat(ids(store, "alice", "dinner")).isEmpty();
        assertThat(ids(store, "alice", "tuna")).containsExactly("other");
    }

    @Test
    void anotherOwnersThreadsNeverAppearNorTheirText() {
        store.createThread(thread("mine", "alice", "Plans", 1));
        store.createThread(thread("bobs", "bob", "Secret plans", 5));
        store.createThread(thread("bobs-title", "bob", "Secret", 6));
        StoreBatch.Builder batch = StoreBatch.builder().message(said("a1", "mine", "my secret is safe"));
        for (int i = 0; i < 20; i++) {
            batch.message(said("b" + i, "bobs", "secret secret bobsecret " + i));
        }
        store.write(batch.build());

        for (int offset = 0; offset < 3; offset++) {
            assertThat(store.searchThreads("alice", SearchQuery.of("secret"), offset, 10))
                    .allSatisfy(hit -> {
                        assertThat(hit.thread().ownerId()).isEqualTo("alice");
                        assertThat(hit.snippet()).doesNotContain("bobsecret");
                    });
        }
        assertThat(ids(store, "alice", "secret")).containsExactly("mine");
        assertThat(ids(store, "alice", "bobsecret")).isEmpty();
        assertThat(ids(store, "alice", "plans")).as("a title match of another owner").containsExactly("mine");
        assertThat(ids(store, "bob", "secret")).containsExactlyInAnyOrder("bobs", "bobs-title");
        assertThat(ids(store, "carol", "secret")).isEmpty();
    }

    @Test
    void pagesOfTheRankingFollowEachOther() {
        StoreBatch.Builder batch = StoreBatch.builder();
        for (int t = 0; t < 25; t++) {
            store.createThread(thread("t" + t, "alice", "Thread " + t, t));
            for (int m = 0; m <= t % 5; m++) {
                batch.message(said("m" + t + "-" + m, "t" + t, "olive oil and bread " + m));
            }
        }
        store.write(batch.build());
        SearchQuery olive = SearchQuery.of("olive");
        List<String> all = store.searchThreads("alice", olive, 0, 100).stream().map(h -> h.thread().id()).toList();
        List<String> paged = new ArrayList<>();
        for (int offset = 0; offset < 30; offset += 10) {
            store.searchThreads("alice", olive, offset, 10).forEach(hit -> paged.add(hit.thread().id()));
        }
        assertThat(all).hasSize(25).doesNotHaveDuplicates();
        assertThat(paged).isEqualTo(all);
        assertThat(all.subList(0, 5)).as("newest matching message first")
                .containsExactly("t24", "t23", "t22", "t21", "t20");
        assertThat(store.searchThreads("alice", olive, 0, 0)).isEmpty();
        assertThat(store.searchThreads("alice", olive, 25, 10)).isEmpty();
    }

    /**
     * A rare word whose matches lie behind many newer texts of the owner (PostgreSQL reads a budget of the
     * newest texts first, then the GIN index for what is older): found, in order, on every page.
     */
    @Test
    void rareMatchesBehindManyNewerTextsAreFoundInOrder() {
        store.createThread(thread("old-1", "alice", "First", 1));
        store.createThread(thread("old-2", "alice", "Second", 2));
        store.createThread(thread("noise", "alice", "Noise", 3));
        store.write(StoreBatch.builder().message(said("o1", "old-1", "a quince tart"))
                .message(said("o2", "old-2", "quince jam")).build());
        StoreBatch.Builder noise = StoreBatch.builder();
        for (int i = 0; i < 3000; i++) {
            noise.message(said("n" + i, "noise", "nothing to see " + i));
        }
        store.write(noise.build());
        store.write(StoreBatch.builder().message(said("o3", "old-1", "quince again")).build());
        assertThat(ids(store, "alice", "quince")).containsExactly("old-1", "old-2");
        assertThat(store.searchThreads("alice", SearchQuery.of("quince"), 1, 1)).extracting(ThreadSearchHit::messageId)
                .containsExactly("o2");
        assertThat(ids(store, "alice", "zzyzx")).isEmpty();
    }

    /**
     * A NUL separates words, as any character but a letter or digit does: SQLite indexes the whole text
     * (its string functions would stop at the NUL), PostgreSQL stores it as U+FFFD (its text cannot hold one).
     */
    @Test
    void aNulInATextNeitherFailsTheBatchNorHidesTheWordsAfterIt() {
        store.createThread(thread("t", "alice", "Nul", 1));
        store.write(StoreBatch.builder().message(said("u", "t", "ancho\u0000vies and olives")).build());
        assertThat(ids(store, "alice", "olives")).containsExactly("t");
        assertThat(ids(store, "alice", "vies")).containsExactly("t");
    }

    @Test
    void aSnippetIsShortPlainTextAroundTheMatchOfTheBestText() {
        store.createThread(thread("long", "alice", "Haystack", 1));
        String haystack = "hay ".repeat(1500) + "the needle <b>is</b> here " + "straw ".repeat(1500);
        store.write(StoreBatch.builder().message(said("h", "long", haystack))
                .message(said("h2", "long", "needle")).build());
        ThreadSearchHit hit = store.searchThreads("alice", SearchQuery.of("needle here"), 0, 10).get(0);
        assertThat(hit.messageId()).isEqualTo("h");
        assertThat(hit.snippet()).contains("needle").hasSizeLessThanOrEqualTo(200);
        assertThat(store.searchThreads("alice", SearchQuery.of("haystack"), 0, 10).get(0).snippet()).isEqualTo("Haystack");
    }
}
