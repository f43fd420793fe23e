package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageKind;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadTouch;
import dev.parley.chat.testing.Await;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Conversations as trees, client ids and compaction on a real database, beyond the core contract: a random
 * tree read every way agrees with chat-core's in-memory store, also where the stored depths cannot be
 * trusted; a client id is taken once when stores race; a batch with a taken id and a compaction are all or
 * nothing.
 */
abstract class TreeBehaviourTest {
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

    private void both(Consumer<ChatStore> writes) {
        writes.accept(store);
        writes.accept(reference);
    }

    private static ChatThread thread(String id) {
        return new ChatThread(id, "alice", null, null, null, null, ThreadStatus.ACTIVE, T0, T0);
    }

    /**
     * A random conversation of {@code size} top-level messages, saved in batches in the order they were
     * made: each follows a random earlier message, mostly a recent one (a user message after an answer or at
     * the start, an answer after a user message), answers with a step; edits and regenerations make forks.
     */
    private List<Message> randomTree(String threadId, int size, Random random) {
        List<Message> made = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            Message parent = made.isEmpty() || random.nextInt(40) == 0 ? null
                    : made.get(Math.max(0, made.size() - 1 - (random.nextInt(4) == 0 ? random.nextInt(made.size()) : 0)));
            String id = threadId + "-" + i;
            Instant at = T0.plusSeconds(i);
            made.add(parent instanceof UserMessage
                    ? new AssistantMessage(id, threadId, "r-" + id, parent.id(), MessageStatus.COMPLETED, at, "answer " + i,
                            null, null)
                    : new UserMessage(id, threadId, "r-" + id, parent == null ? null : parent.id(), MessageStatus.COMPLETED,
                            at, "question " + i, "client-" + i));
        }
        for (int from = 0; from < size; from += 37) {
            StoreBatch.Builder batch = StoreBatch.builder();
            for (Message message : made.subList(from, Math.min(size, from + 37))) {
                batch.message(message);
                if (message instanceof AssistantMessage) {
                    batch.message(new ThinkingMessage(message.id() + "-s", threadId, message.runId(), message.id(),
                            MessageStatus.COMPLETED, message.createdAt(), "step"));
                }
            }
            StoreBatch built = batch.build();
            both(s -> s.write(built));
        }
        return made;
    }

    @Test
    void aRandomTreeReadsAsTheInMemoryStoreReadsIt() {
        both(s -> s.createThread(thread("t")));
        both(s -> s.createThread(thread("u")));
        Random random = new Random(7);
        List<Message> tree = randomTree("t", 600, random);
        randomTree("u", 50, random);
        List<String> ids = tree.stream().map(Message::id).collect(Collectors.toList());
        List<String> probes = new ArrayList<>(List.of("nope", "u-3", "t-0-s"));
        for (int i = 0; i < 40; i++) {
            probes.add(ids.get(random.nextInt(ids.size())));
        }
        for (String leaf : probes) {
            for (int limit : new int[] {1, 5, 1000}) {
                assertThat(branch(store, leaf, null, limit)).as("branch to %s, %d", leaf, limit)
                        .isEqualTo(branch(reference, leaf, null, limit));
            }
            List<String> path = branch(reference, leaf, null, 1000);
            List<String> cursors = new ArrayList<>(List.of("nope", ids.get(random.nextInt(ids.size()))));
            if (!path.isEmpty()) {
                cursors.add(path.get(random.nextInt(path.size())));
                cursors.add(path.get(0));
            }
            for (String cursor : cursors) {
                assertThat(branch(store, leaf, cursor, 7)).as("branch to %s before %s", leaf, cursor)
                        .isEqualTo(branch(reference, leaf, cursor, 7));
            }
            assertThat(store.findNewestDescendant("t", leaf)).as("newest below %s", leaf)
                    .isEqualTo(reference.findNewestDescendant("t", leaf));
        }
        List<String> users = tree.stream().filter(m -> m.kind() == MessageKind.USER).map(Message::id).toList();
        assertThat(store.findUserSiblingIds("t", probes)).isEqualTo(reference.findUserSiblingIds("t", probes));
        assertThat(store.findUserSiblingIds("t", users)).isEqualTo(reference.findUserSiblingIds("t", users));
        assertThat(store.findVariantIds(users)).isEqualTo(reference.findVariantIds(users));
        assertThat(store.findMessages(probes)).isEqualTo(reference.findMessages(probes));
        for (String after : List.of("t-0", "t-300", "t-599", "u-3", "nope")) {
            assertThat(store.listTopLevelMessagesAfter("t", after, 25)).as("after %s", after)
                    .isEqualTo(reference.listTopLevelMessagesAfter("t", after, 25));
        }
        assertThat(store.findUserMessageByClientId("t", "client-0")).isEqualTo(reference.findUserMessageByClientId("t", "client-0"));
    }

    private static List<String> branch(ChatStore on, String leaf, String before, int limit) {
        return on.listBranch("t", leaf, before, limit).stream().map(Message::id).collect(Collectors.toList());
    }

    /**
     * An answer saved before its question gets the depth of a first message: the depths on its branch are off
     * by one. The cursor check does not trust a "no" from them and walks the parent links, so every page is right.
     */
    @Test
    void aMessageSavedBeforeItsParentStillPagesRight() {
        both(s -> s.createThread(thread("t")));
        List<Message> chain = new ArrayList<>();
        String parent = null;
        for (int i = 0; i < 40; i++) {
            String id = "t-" + i;
            chain.add(i % 2 == 0 ? new UserMessage(id, "t", "r" + i, parent, MessageStatus.COMPLETED, T0, "q " + i)
                    : new AssistantMessage(id, "t", "r" + i, parent, MessageStatus.COMPLETED, T0, "a " + i, null, null));
            parent = id;
        }
        both(s -> s.write(StoreBatch.builder().message(chain.get(11)).build()));
        both(s -> s.write(StoreBatch.builder().messages(chain.subList(0, 11)).messages(chain.subList(12, 40)).build()));
        for (String cursor : List.of("t-39", "t-30", "t-12", "t-11", "t-10", "t-3", "t-0")) {
            assertThat(branch(store, "t-39", cursor, 5)).as("before %s", cursor).isEqualTo(branch(reference, "t-39", cursor, 5));
        }
        assertThat(branch(store, "t-39", null, 100)).hasSize(40);
    }

    @Test
    void storesRacingToUseOneClientIdGetOneWinner() throws Exception {
        try (JdbiChatStore second = database.store().build()) {
            store.createThread(thread("t"));
            List<ChatStore> stores = List.of(store, second);
            List<String> outcomes = Await.race(8, i -> {
                try {
                    stores.get(i % 2).write(StoreBatch.builder().message(new UserMessage("m" + i, "t", "r" + i, null,
                            MessageStatus.COMPLETED, T0, "attempt " + i, "click")).build());
                    return "m" + i;
                } catch (ChatException e) {
                    return e.code().name();
                }
            });
            assertThat(outcomes).filteredOn(o -> o.startsWith("m")).hasSize(1);
            assertThat(outcomes).filteredOn(o -> !o.startsWith("m")).hasSize(7).containsOnly("CONFLICT");
            String winner = outcomes.stream().filter(o -> o.startsWith("m")).findFirst().orElseThrow();
            assertThat(second.findUserMessageByClientId("t", "click")).map(Message::id).contains(winner);
        }
    }

    @Test
    void aBatchWithATakenClientIdStoresNothingOfIt() {
        store.createThread(thread("t"));
        store.write(StoreBatch.builder().message(new UserMessage("m1", "t", "r1", null, MessageStatus.COMPLETED, T0, "hi",
                "click")).build());
        Run run = new Run("r2", "t", "alice", RunStatus.RUNNING, "m2", "a2", "again", null, null, null, Map.of(), T0, T0,
                null, null, null, null);
        StoreBatch clash = StoreBatch.builder().touch(new ThreadTouch("t", "s", T0.plusSeconds(9), "Title", "a2", "a2"))
                .run(run)
                .message(new UserMessage("m2", "t", "r2", "m1", MessageStatus.COMPLETED, T0, "again", "click"))
                .message(new AssistantMessage("a2", "t", "r2", "m2", MessageStatus.IN_PROGRESS, T0, "", null, null))
                .event(new RunEvent("r2", 1, T0.toEpochMilli(), new AgentStreamEvent.TextDelta("a2", "x")))
                .build();
        assertThatThrownBy(() -> store.write(clash)).isInstanceOfSatisfying(ChatException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT);
            assertThat(e.getMessage()).isEqualTo("thread t already has a message with client id click");
        });
        assertThat(store.findRun("r2")).isEmpty();
        assertThat(store.findMessage("m2")).isEmpty();
        assertThat(store.findMessage("a2")).isEmpty();
        assertThat(store.readEvents("r2", 0, 10)).isEmpty();
        ChatThread unchanged = store.findThread("t").orElseThrow();
        assertThat(unchanged.title()).isNull();
        assertThat(unchanged.activeLeafId()).isNull();
    }

    @Test
    void aThreadKeepsItsBranchPositionsThroughCreateAndRename() {
        ChatThread created = new ChatThread("t", "alice", "T", null, null, null, ThreadStatus.ACTIVE, T0, T0, "leaf", "head");
        store.createThread(created);
        assertThat(store.findThread("t")).contains(created);
        store.updateThread(created.withTitle("Renamed").withActiveLeafId("ignored").withSessionHeadId("ignored"));
        ChatThread renamed = store.findThread("t").orElseThrow();
        assertThat(renamed.title()).isEqualTo("Renamed");
        assertThat(renamed.activeLeafId()).as("only touches move it").isEqualTo("leaf");
        assertThat(renamed.sessionHeadId()).isEqualTo("head");
    }

    @Test
    void aCompactionReplacesTheLogWholeOrNotAtAll() {
        store.createThread(thread("t"));
        Run ended = new Run("r", "t", "alice", RunStatus.RUNNING, null, "a", "hi", null, null, null, Map.of(), T0, T0, null,
                null, null, null).finished(RunStatus.SUCCEEDED, T0.plusSeconds(1), null, null, null);
        List<RunEvent> log = IntStream.rangeClosed(1, 100).mapToObj(seq -> new RunEvent("r", seq, T0.toEpochMilli() + seq,
                new AgentStreamEvent.TextDelta("a", "t" + seq))).collect(Collectors.toList());
        store.write(StoreBatch.builder().run(ended).events(log).build());
        store.reserveSeq("r", 4096);
        List<RunEvent> kept = List.of(log.get(0), log.get(49), log.get(99));

        assertThatThrownBy(() -> store.compactRunEvents("r", List.of(log.get(0), new RunEvent("other", 2, 0,
                new AgentStreamEvent.TextDelta("a", "x"))), T0)).isInstanceOf(IllegalArgumentException.class);
        assertThat(store.readEvents("r", 0, 1000)).as("nothing changed").hasSize(100);

        Jdbi direct = Jdbi.create(database.dataSource());
        direct.useHandle(h -> h.execute("ALTER TABLE parley_run_events RENAME TO parley_run_events_away"));
        assertThatThrownBy(() -> store.compactRunEvents("r", kept, T0.plusSeconds(60)))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILURE));
        direct.useHandle(h -> h.execute("ALTER TABLE parley_run_events_away RENAME TO parley_run_events"));
        assertThat(store.findRunsToCompact(T0.plusSeconds(2), 10)).as("not marked: the transaction rolled back")
                .extracting(Run::id).containsExactly("r");
        assertThat(store.readEvents("r", 0, 1000)).hasSize(100);

        store.compactRunEvents("r", kept, T0.plusSeconds(60));
        assertThat(store.readEvents("r", 0, 1000)).containsExactlyElementsOf(kept);
        assertThat(store.lastSeq("r")).isEqualTo(100);
        assertThat(store.reservedSeq("r")).isEqualTo(4096);
        assertThat(store.findRunsToCompact(T0.plusSeconds(2), 10)).isEmpty();
        store.write(StoreBatch.builder().run(ended).build());
        assertThat(store.findRunsToCompact(T0.plusSeconds(2), 10)).as("a run's upsert keeps the mark").isEmpty();
        store.compactRunEvents("nope", kept.subList(0, 0), T0);
        assertThat(store.findRun("nope")).isEmpty();
    }
}
