package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.store.SearchQuery;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadCursor;
import dev.parley.chat.store.ThreadSearchHit;
import dev.parley.chat.store.jdbi.internal.EventDao;
import dev.parley.chat.store.jdbi.internal.FeedbackDao;
import dev.parley.chat.store.jdbi.internal.MessageDao;
import dev.parley.chat.store.jdbi.internal.MessageTreeDao;
import dev.parley.chat.store.jdbi.internal.RunDao;
import dev.parley.chat.store.jdbi.internal.ThreadDao;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.PreparedBatch;
import org.jdbi.v3.core.statement.Query;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The reads a page load and a reconnect make must read only what they return: an index range from the
 * cursor, never the whole thread or the whole log. On a thread of 10 000 user and assistant messages (plus
 * their steps and other threads) and a run of 100 000 events (plus other runs), after ANALYZE, each hot
 * statement of the DAOs — exactly the SQL the store runs — is EXPLAINed and must use its index, with no
 * full scan and no sort of the big tables. Not a timing test; the timings are printed for information.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class HotQueryTest {
    static final String BIG_THREAD = "big";
    static final String LONG_RUN = "long";
    static final int TURNS = 5_000;
    static final int EVENTS = 100_000;
    /** A thread whose active branch is one path of {@value #DEPTH} messages, each following the one before. */
    static final String DEEP_THREAD = "deep";
    static final int DEPTH = 4_000;
    /** A run of {@value #STEPS} steps (a long agent loop), in a thread of its own. */
    static final String STEPPING_RUN = "stepping";
    static final int STEPS = 20_000;
    private static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");

    TestDatabase database;
    JdbiChatStore store;
    Jdbi direct;

    abstract TestDatabase createDatabase();

    /** What is wrong with the plan of a query: a full scan, a sort, a missing index. Empty if nothing. */
    abstract List<String> planProblems(Handle handle, HotQuery query);

    /** The condition with which the plan enters the query's index (what bounds the range it reads). */
    abstract String indexCondition(Handle handle, HotQuery query);

    /**
     * A statement of a DAO with its arguments, and what must serve it.
     *
     * @param indexes the indexes of which one must serve {@code table}; empty for its primary key
     * @param sortAllowed true where an {@code IN} list of several values makes a (small) sort legitimate
     */
    record HotQuery(String sql, Map<String, Object> binds, Map<String, List<String>> lists, String table,
            List<String> indexes, boolean sortAllowed, List<String> scansAllowed) {

        HotQuery(String sql, Map<String, Object> binds, Map<String, List<String>> lists, String table,
                List<String> indexes, boolean sortAllowed) {
            this(sql, binds, lists, table, indexes, sortAllowed, List.of());
        }

        HotQuery(String sql, Map<String, Object> binds, Map<String, List<String>> lists, String table,
                String index, boolean sortAllowed) {
            this(sql, binds, lists, table, List.of(index), sortAllowed, List.of());
        }

        /**
         * The same query, whose plan may scan these: the work tables of its recursive steps and its own
         * intermediate results (SQLite reports reading them as a SCAN, like a table).
         */
        HotQuery scanning(String... names) {
            return new HotQuery(sql, binds, lists, table, indexes, sortAllowed, List.of(names));
        }

        Query bindTo(Query query) {
            binds.forEach(query::bind);
            lists.forEach(query::bindList);
            return query;
        }
    }

    @BeforeAll
    void populate() {
        database = createDatabase();
        store = database.store().build();
        direct = Jdbi.create(database.dataSource());
        long started = System.nanoTime();
        store.createThread(new ChatThread(BIG_THREAD, "alice", "big", null, null, null, ThreadStatus.ACTIVE, T0, T0));
        writeTurns(BIG_THREAD, "", TURNS);
        for (int t = 0; t < 20; t++) {
            store.createThread(new ChatThread("other-" + t, "alice", null, null, null, null, ThreadStatus.ACTIVE, T0, T0));
            writeTurns("other-" + t, "o" + t + "-", 50);
        }
        writeChain(DEEP_THREAD, DEPTH);
        store.createThread(new ChatThread("steps", "alice", "steps", null, null, null, ThreadStatus.ACTIVE, T0, T0));
        writeSteps("steps", STEPPING_RUN, STEPS);
        store.write(StoreBatch.builder().run(new Run(LONG_RUN, BIG_THREAD, "alice", RunStatus.SUCCEEDED, null, "long-a",
                "q", null, null, null, Map.of(), T0, T0, T0, null, null, null)).build());
        List<RunEvent> batch = new ArrayList<>();
        for (int seq = 1; seq <= EVENTS; seq++) {
            batch.add(delta(LONG_RUN, seq));
            if (batch.size() == 5_000) {
                store.write(StoreBatch.builder().events(batch).build());
                batch.clear();
            }
        }
        for (int r = 0; r < 10; r++) {
            store.write(StoreBatch.builder().events(IntStream.rangeClosed(1, 2_000)
                    .mapToObj(seq -> delta("r-" + seq % 10, seq)).collect(Collectors.toList())).build());
        }
        direct.useHandle(h -> {
            PreparedBatch threads = h.prepareBatch("INSERT INTO parley_threads "
                    + "(id, owner_id, status, created_at, last_message_at) "
                    + "VALUES (:id, :ownerId, 'ACTIVE', :createdAt, :lastMessageAt)");
            for (int i = 0; i < 3_000; i++) {
                threads.bind("id", "thread-" + i).bind("ownerId", "owner-" + i % 30)
                        .bind("createdAt", T0.toEpochMilli()).bind("lastMessageAt", T0.toEpochMilli() + i).add();
            }
            threads.execute();
            PreparedBatch feedback = h.prepareBatch("INSERT INTO parley_feedback "
                    + "(message_id, owner_id, thread_id, run_id, rating, created_at) "
                    + "VALUES (:messageId, 'alice', :threadId, :runId, 'UP', 0)");
            for (int i = 0; i < TURNS; i += 2) {
                feedback.bind("messageId", "a-" + i).bind("threadId", BIG_THREAD).bind("runId", "r-" + i).add();
            }
            feedback.execute();
            h.execute("ANALYZE");
        });
        System.out.printf("%s: stored %d turns and %d events in %d ms%n", database, TURNS + 1000,
                EVENTS + 20_000, (System.nanoTime() - started) / 1_000_000);
    }

    private void writeTurns(String threadId, String prefix, int turns) {
        StoreBatch.Builder batch = StoreBatch.builder();
        for (int i = 0; i < turns; i++) {
            String run = "r-" + prefix + i;
            Instant at = T0.plusSeconds(i);
            batch.run(new Run(run, threadId, "alice", RunStatus.SUCCEEDED, "u-" + prefix + i, "a-" + prefix + i, "q",
                    null, null, null, Map.of(), at, at, at, null, null, null));
            batch.message(new UserMessage("u-" + prefix + i, threadId, run, null, MessageStatus.COMPLETED, at, "question " + i));
            batch.message(new AssistantMessage("a-" + prefix + i, threadId, run, "u-" + prefix + i,
                    MessageStatus.COMPLETED, at, "answer " + i, null, null));
            batch.message(new ThinkingMessage("s-" + prefix + i, threadId, run, "a-" + prefix + i,
                    MessageStatus.COMPLETED, at, "thinking " + i));
            if ((i + 1) % 500 == 0 || i == turns - 1) {
                store.write(batch.build());
                batch = StoreBatch.builder();
            }
        }
    }

    /**
     * A chain u0 → a0 → u1 → a1 … (each answer with a thinking step, as in a run), the user messages with
     * client ids, an edit of the second user message and a second answer to it.
     */
    private void writeChain(String threadId, int messages) {
        store.createThread(new ChatThread(threadId, "alice", "deep", null, null, null, ThreadStatus.ACTIVE, T0, T0));
        StoreBatch.Builder batch = StoreBatch.builder();
        String parent = null;
        for (int i = 0; i < messages; i++) {
            String id = "d-" + i;
            Instant at = T0.plusSeconds(i);
            if (i % 2 == 0) {
                batch.message(new UserMessage(id, threadId, "dr-" + i / 2, parent, MessageStatus.COMPLETED, at, "step " + i,
                        "click-" + i));
            } else {
                batch.message(new AssistantMessage(id, threadId, "dr-" + i / 2, parent, MessageStatus.COMPLETED, at,
                        "deep answer " + i, null, null));
                batch.message(new ThinkingMessage("ds-" + i, threadId, "dr-" + i / 2, id, MessageStatus.COMPLETED, at, "hm"));
            }
            parent = id;
            if ((i + 1) % 500 == 0) {
                store.write(batch.build());
                batch = StoreBatch.builder();
            }
        }
        store.write(batch.message(new UserMessage("d-edit", threadId, "dr-edit", "d-1", MessageStatus.COMPLETED, T0, "edited"))
                .message(new AssistantMessage("d-regen", threadId, "dr-regen", "d-2", MessageStatus.COMPLETED, T0, "again",
                        null, null)).build());
    }

    /** A run with its question, its answer and {@code steps} thinking steps {@code <run>-s0}, {@code <run>-s1}, …. */
    private void writeSteps(String threadId, String runId, int steps) {
        store.write(StoreBatch.builder().run(new Run(runId, threadId, "alice", RunStatus.SUCCEEDED, runId + "-u",
                runId + "-a", "q", null, null, null, Map.of(), T0, T0, T0, null, null, null))
                .message(new UserMessage(runId + "-u", threadId, runId, null, MessageStatus.COMPLETED, T0, "go"))
                .message(new AssistantMessage(runId + "-a", threadId, runId, runId + "-u", MessageStatus.COMPLETED, T0,
                        "done", null, null)).build());
        StoreBatch.Builder batch = StoreBatch.builder();
        for (int i = 0; i < steps; i++) {
            batch.message(new ThinkingMessage(runId + "-s" + i, threadId, runId, runId + "-a", MessageStatus.COMPLETED,
                    T0, "step " + i));
            if ((i + 1) % 2_000 == 0 || i == steps - 1) {
                store.write(batch.build());
                batch = StoreBatch.builder();
            }
        }
    }

    private static RunEvent delta(String runId, long seq) {
        return new RunEvent(runId, seq, T0.toEpochMilli() + seq, new AgentStreamEvent.TextDelta(runId + "-a", "token " + seq + " "));
    }

    @AfterAll
    void close() {
        if (store != null) {
            store.close();
        }
        if (database != null) {
            database.close();
        }
    }

    static HotQuery newestPage() {
        return new HotQuery(MessageDao.TOP_LEVEL_NEWEST, Map.of("threadId", BIG_THREAD, "limit", 50), Map.of(),
                "parley_messages", "parley_messages_thread_top", false);
    }

    @Test
    @Order(1)
    void theNewestPageOfABigThreadReadsItsIndexBackwards() {
        assertPlanUsesIndex(newestPage());
        assertPlanUsesIndex(new HotQuery(MessageDao.TOP_LEVEL_BEFORE, Map.of("threadId", BIG_THREAD, "beforeId", "u-2500",
                "limit", 50), Map.of(), "parley_messages", "parley_messages_thread_top", false));
        List<Message> page = store.listTopLevelMessages(BIG_THREAD, null, 50);
        assertThat(page).hasSize(50);
        assertThat(page.get(0).id()).isEqualTo("u-" + (TURNS - 25));
        assertThat(page.get(49).id()).isEqualTo("a-" + (TURNS - 1));
        assertThat(store.listTopLevelMessages(BIG_THREAD, "u-2500", 2)).extracting(Message::id)
                .containsExactly("u-2499", "a-2499");
    }

    @Test
    @Order(2)
    void theReplayTailOfALongRunReadsAPrimaryKeyRange() {
        assertPlanUsesIndex(new HotQuery(EventDao.READ_EVENTS, Map.of("runId", LONG_RUN, "afterSeq", 99_000L, "bound", 100_000L),
                Map.of(), "parley_run_events", List.of(), false));
        assertPlanUsesIndex(new HotQuery(EventDao.LAST_SEQ, Map.of("runId", LONG_RUN), Map.of(), "parley_run_events",
                List.of(), false));
        List<RunEvent> tail = store.readEvents(LONG_RUN, 99_000, 1000);
        assertThat(tail).hasSize(1000);
        assertThat(tail.get(0).seq()).isEqualTo(99_001);
        assertThat(tail.get(999)).isEqualTo(delta(LONG_RUN, EVENTS));
        assertThat(store.lastSeq(LONG_RUN)).isEqualTo(EVENTS);
    }

    @Test
    @Order(3)
    void theOtherHotReadsUseTheirIndexes() {
        assertPlanUsesIndex(new HotQuery(MessageDao.VARIANT_IDS, Map.of(), Map.of("parentIds", List.of("u-4000", "u-4001")),
                "parley_messages", "parley_messages_variants", true));
        List<String> active = List.of("QUEUED", "RUNNING", "WAITING_FOR_INPUT");
        // with no active run at all, the status index alone is as selective: either serves
        assertPlanUsesIndex(new HotQuery(RunDao.FIND_THREAD_RUNS, Map.of("threadId", BIG_THREAD),
                Map.of("statuses", active), "parley_runs", List.of("parley_runs_thread_status", "parley_runs_status"),
                true));
        assertPlanUsesIndex(new HotQuery(RunDao.FIND_RUNS, Map.of(), Map.of("statuses", active), "parley_runs",
                "parley_runs_status", true));
        assertPlanUsesIndex(new HotQuery(ThreadDao.LIST_THREADS, Map.of("ownerId", "owner-7", "limit", 20),
                Map.of(), "parley_threads", "parley_threads_owner_activity", false));
        assertPlanUsesIndex(new HotQuery(ThreadDao.LIST_THREADS_AFTER, Map.of("ownerId", "owner-7", "limit", 20,
                "afterAt", Long.MAX_VALUE / 2, "afterId", "thread-5000"), Map.of(), "parley_threads",
                "parley_threads_owner_activity", false));
        assertThat(store.findVariantIds(List.of("u-4000"))).containsEntry("u-4000", List.of("a-4000"));
        assertThat(store.listThreads("owner-7", null, 2)).extracting(ChatThread::id).containsExactly("thread-2977", "thread-2947");
    }

    /** The newest steps of a page's runs: each run's select reads the run index backwards, as far as its limit. */
    static HotQuery newestSteps(List<String> runIds) {
        Map<String, Object> binds = new java.util.LinkedHashMap<>();
        for (int i = 0; i < runIds.size(); i++) {
            binds.put("run" + i, runIds.get(i));
        }
        binds.put("limit", 201);
        return new HotQuery(MessageDao.newestStepsSql(runIds.size()), binds, Map.of(), "parley_messages",
                "parley_messages_run", false).scanning(IntStream.range(0, runIds.size()).mapToObj(i -> "s" + i)
                        .toArray(String[]::new));
    }

    /**
     * A page's answers read their newest steps and a long run's export pages through its steps from a cursor,
     * each through the run index entered at the run (and the cursor): never the run whole for a page of it, nor
     * the table. Counting a run's steps reads the same index.
     */
    @Test
    @Order(3)
    void theStepsOfRunsAreReadThroughTheRunIndex() {
        assertPlanUsesIndex(newestSteps(List.of(STEPPING_RUN)));
        List<String> page = new ArrayList<>(IntStream.range(4000, 4049).mapToObj(i -> "r-" + i).toList());
        page.add(STEPPING_RUN);
        assertPlanUsesIndex(newestSteps(page));
        assertPlanUsesIndex(new HotQuery(MessageDao.STEPS_FIRST, Map.of("runId", STEPPING_RUN, "limit", 200), Map.of(),
                "parley_messages", "parley_messages_run", false));
        HotQuery after = new HotQuery(MessageDao.STEPS_AFTER, Map.of("runId", STEPPING_RUN,
                "afterId", STEPPING_RUN + "-s10000", "limit", 200), Map.of(), "parley_messages",
                List.of("parley_messages_run", keyIndex("parley_messages")), false);
        assertPlanUsesIndex(after);
        String condition = direct.withHandle(h -> indexCondition(h, after));
        assertThat(condition).as("the index condition of %s", after.sql()).contains("save_order");
        // a count reads the run's index entries, not its bodies (for a run holding a third of the table, as the
        // stepping run does here, PostgreSQL rightly prefers to scan the table: the count costs the run's length)
        assertPlanUsesIndex(new HotQuery(MessageDao.COUNT_STEPS, Map.of(), Map.of("runIds", List.of("r-4000",
                "r-4001")), "parley_messages", "parley_messages_run", true));

        List<Message> newest = store.listNewestStepMessages(page, 3);
        assertThat(newest).hasSize(49 + 3);
        assertThat(newest.subList(0, 49)).extracting(Message::id)
                .containsExactlyElementsOf(IntStream.range(4000, 4049).mapToObj(i -> "s-" + i).toList());
        assertThat(newest.subList(49, 52)).extracting(Message::id).containsExactly(STEPPING_RUN + "-s19997",
                STEPPING_RUN + "-s19998", STEPPING_RUN + "-s19999");
        assertThat(store.listStepMessagesAfter(STEPPING_RUN, STEPPING_RUN + "-s10000", 2)).extracting(Message::id)
                .containsExactly(STEPPING_RUN + "-s10001", STEPPING_RUN + "-s10002");
        assertThat(store.listStepMessagesAfter(STEPPING_RUN, null, 1)).extracting(Message::id)
                .containsExactly(STEPPING_RUN + "-s0");
        assertThat(store.countStepMessages(List.of(STEPPING_RUN, "r-4000", "no-run")))
                .containsExactlyInAnyOrderEntriesOf(Map.of(STEPPING_RUN, STEPS, "r-4000", 1));
    }

    /**
     * Keyset paging reads from the cursor on: the owner-activity index is entered at the cursor's
     * {@code (last_message_at, id)}, not read from the owner's newest thread and filtered (which would cost
     * what OFFSET paging costs, more with every page). A sort is allowed here: for the 50 threads left after
     * this cursor PostgreSQL rightly prefers a bitmap scan of exactly that range and a top-20 sort; with a
     * longer range (the cursor before all of an owner's threads, above) it must read the index in order.
     */
    @Test
    @Order(3)
    void thePageAfterACursorEntersTheIndexAtTheCursor() {
        long cursorAt = T0.toEpochMilli() + 1507;
        HotQuery after = new HotQuery(ThreadDao.LIST_THREADS_AFTER, Map.of("ownerId", "owner-7", "limit", 20,
                "afterAt", cursorAt, "afterId", "thread-1507"), Map.of(), "parley_threads",
                "parley_threads_owner_activity", true);
        assertPlanUsesIndex(after);
        String condition = direct.withHandle(h -> indexCondition(h, after));
        assertThat(condition).as("the index condition of %s", after.sql()).contains("last_message_at");
        assertThat(store.listThreads("owner-7", new ThreadCursor(Instant.ofEpochMilli(cursorAt), "thread-1507"), 3))
                .extracting(ChatThread::id).containsExactly("thread-1477", "thread-1447", "thread-1417");
    }

    HotQuery branchPage(String startId) {
        return new HotQuery(MessageTreeDao.BRANCH_PAGE, Map.of("threadId", DEEP_THREAD, "startId", startId, "limit", 50),
                Map.of(), "parley_messages", keyIndex("parley_messages"), true).scanning("path");
    }

    /**
     * A page of a branch costs {@code limit} lookups by id, and checking that its cursor is on the branch
     * O(log depth) more: each step of each walk is an index probe, and the jump pointers reach the cursor's
     * depth in at most about 3 log2(depth) steps.
     */
    @Test
    @Order(3)
    void aBranchPageWalksItsParentLinksAndFindsItsCursorInLogarithmicSteps() {
        assertPlanUsesIndex(branchPage("d-3999"));
        assertPlanUsesIndex(new HotQuery(MessageTreeDao.ANCESTOR_AT_DEPTH, Map.of("threadId", DEEP_THREAD,
                "leafId", "d-3999", "depth", 7), Map.of(), "parley_messages", keyIndex("parley_messages"), true).scanning("up"));
        assertPlanUsesIndex(new HotQuery(MessageTreeDao.ANCESTOR_BY_PARENTS, Map.of("threadId", DEEP_THREAD,
                "leafId", "d-3999", "ancestorId", "d-3900"), Map.of(), "parley_messages", keyIndex("parley_messages"), true).scanning("up"));
        assertPlanUsesIndex(new HotQuery(MessageTreeDao.POSITION, Map.of("threadId", DEEP_THREAD, "id", "d-10"), Map.of(),
                "parley_messages", keyIndex("parley_messages"), false));

        for (int depth : new int[] {0, 1, 7, 1000, 2047, 2048, 3998}) {
            int steps = direct.withHandle(h -> h.createQuery(MessageTreeDao.ANCESTOR_AT_DEPTH)
                    .bind("threadId", DEEP_THREAD).bind("leafId", "d-3999").bind("depth", depth)
                    .map((rs, ctx) -> {
                        assertThat(rs.getString("id")).isEqualTo("d-" + depth);
                        return rs.getInt("steps");
                    }).one());
            // the skew-binary jumps reach any depth in at most about 3 log2(depth) steps (28 here at worst)
            assertThat(steps).as("steps from depth 3999 to %d", depth)
                    .isLessThanOrEqualTo(3 * (32 - Integer.numberOfLeadingZeros(DEPTH)));
        }
        assertThat(store.listBranch(DEEP_THREAD, "d-3999", "d-2000", 3)).extracting(Message::id)
                .containsExactly("d-1997", "d-1998", "d-1999");
        assertThat(store.listBranch(DEEP_THREAD, "d-3999", null, 2)).extracting(Message::id).containsExactly("d-3998", "d-3999");
        assertThat(store.listBranch(DEEP_THREAD, "d-regen", "d-2", 5)).extracting(Message::id)
                .containsExactly("d-0", "d-1");
        assertThat(store.listBranch(DEEP_THREAD, "d-regen", "d-5", 5)).as("a cursor off the branch").isEmpty();
    }

    @Test
    @Order(3)
    void theTreeAndTheNewReadsUseTheirIndexes() {
        assertPlanUsesIndex(new HotQuery(MessageTreeDao.NEWEST_DESCENDANT, Map.of("threadId", DEEP_THREAD,
                "messageId", "d-3990"), Map.of(), "parley_messages", "parley_messages_children", true).scanning("below"));
        assertPlanUsesIndex(new HotQuery(MessageTreeDao.USER_CHILDREN, Map.of("threadId", DEEP_THREAD),
                Map.of("parentIds", List.of("d-1", "d-3")), "parley_messages", "parley_messages_children", true));
        // a thread's first message and its edits, a few rows: PostgreSQL estimates "no parent" from the big
        // thread, whose 5 000 questions have none, and may rightly sort what the index range gives it
        assertPlanUsesIndex(new HotQuery(MessageTreeDao.FIRST_USER_MESSAGES, Map.of("threadId", DEEP_THREAD), Map.of(),
                "parley_messages", "parley_messages_children", true));
        assertPlanUsesIndex(new HotQuery(MessageTreeDao.USER_PARENTS, Map.of("threadId", DEEP_THREAD),
                Map.of("ids", List.of("d-2", "d-4")), "parley_messages", keyIndex("parley_messages"), true));
        assertPlanUsesIndex(new HotQuery(MessageDao.FIND_BY_CLIENT_ID, Map.of("threadId", DEEP_THREAD,
                "clientMessageId", "click-100"), Map.of(), "parley_messages", "parley_messages_client_id", false));
        assertPlanUsesIndex(new HotQuery(MessageDao.TOP_LEVEL_AFTER, Map.of("threadId", BIG_THREAD, "afterId", "u-2500",
                "limit", 50), Map.of(), "parley_messages", "parley_messages_thread_top", false));
        assertPlanUsesIndex(new HotQuery(MessageDao.FIND_MESSAGES, Map.of(), Map.of("ids", List.of("u-1", "a-7")),
                "parley_messages", keyIndex("parley_messages"), true));
        assertPlanUsesIndex(new HotQuery(RunDao.FIND_RUNS_TO_COMPACT, Map.of("endedBefore", T0.toEpochMilli() + 100_000,
                "limit", 100), Map.of("statuses", List.of("SUCCEEDED", "FAILED", "CANCELLED", "INTERRUPTED")),
                "parley_runs", "parley_runs_to_compact", false));
        assertPlanUsesIndex(new HotQuery(FeedbackDao.LIST_FEEDBACK, Map.of(), Map.of("messageIds", List.of("a-1", "a-2")),
                "parley_feedback", keyIndex("parley_feedback"), true));

        assertThat(store.findNewestDescendant(DEEP_THREAD, "d-3990")).contains("d-3999");
        assertThat(store.findUserSiblingIds(DEEP_THREAD, List.of("d-2"))).containsEntry("d-2", List.of("d-2", "d-edit"));
        assertThat(store.findUserMessageByClientId(DEEP_THREAD, "click-100")).map(Message::id).contains("d-100");
        assertThat(store.listTopLevelMessagesAfter(BIG_THREAD, "u-2500", 2)).extracting(Message::id)
                .containsExactly("a-2500", "u-2501");
        assertThat(store.listFeedback(List.of("a-2", "a-3", "a-4"))).extracting(f -> f.messageId())
                .containsExactlyInAnyOrder("a-2", "a-4");
        assertThat(store.findRunsToCompact(T0.plusMillis(1), 3)).as("ended first; then first saved")
                .extracting(Run::id).containsExactly("r-0", "r-o0-0", "r-o1-0");
    }

    /** The search of an owner's threads reads the full-text indexes (FTS5, GIN), never the tables whole. */
    @Test
    @Order(3)
    void theSearchReadsTheFullTextIndexes() {
        SearchQuery query = SearchQuery.of("answer 4242");
        assertPlanUsesIndex(new HotQuery(searchSql(), searchBinds(query), Map.of(), "parley_messages", searchIndexes(),
                searchMaySort()));
        List<ThreadSearchHit> hits = store.searchThreads("alice", query, 0, 20);
        assertThat(hits).extracting(hit -> hit.thread().id()).containsExactly(BIG_THREAD);
        assertThat(hits.get(0).messageId()).isEqualTo("a-4242");
        assertThat(store.searchThreads("owner-7", query, 0, 20)).isEmpty();
    }

    /** The index of a table's text key (parley_messages.id, parley_feedback's key) on this database. */
    abstract String keyIndex(String table);

    /** The search statement of this database. */
    abstract String searchSql();

    /** The search's indexes, of which the plan must use one on parley_messages. */
    abstract List<String> searchIndexes();

    /** The binds of {@link #searchSql} for Alice's query and a first page. */
    abstract Map<String, Object> searchBinds(SearchQuery query);

    /** Whether the search's plan may sort: where it reads a few matches from an unordered index. */
    abstract boolean searchMaySort();

    @Test
    @Order(4)
    void pageAndTailTimingsForInformation() {
        long page = medianMicros(() -> store.listTopLevelMessages(BIG_THREAD, null, 50));
        long tail = medianMicros(() -> store.readEvents(LONG_RUN, 99_000, 1000));
        long branch = medianMicros(() -> store.listBranch(DEEP_THREAD, "d-3999", "d-2000", 50));
        long search = medianMicros(() -> store.searchThreads("alice", SearchQuery.of("answer 4242"), 0, 20));
        long steps = medianMicros(() -> store.listNewestStepMessages(List.of(STEPPING_RUN), 200));
        System.out.printf("%s: newest page of 50 of a 10 000-message thread: %d µs; replay tail of 1000 of "
                + "100 000 events: %d µs; a branch page of 50 before the middle of a %d-message branch: %d µs; "
                + "a two-word search: %d µs; the newest 200 of %d steps of a run: %d µs (median of 25)%n", database,
                page, tail, DEPTH, branch, search, STEPS, steps);
        assertThat(page).isPositive();
        assertThat(tail).isPositive();
    }

    /** The check is not vacuous: without its index the page query fails it. */
    @Test
    @Order(5)
    void withoutItsIndexThePageQueryFailsTheCheck() {
        direct.useHandle(h -> h.execute("DROP INDEX parley_messages_thread_top"));
        try {
            List<String> problems = direct.withHandle(h -> planProblems(h, newestPage()));
            assertThat(problems).isNotEmpty();
        } finally {
            direct.useHandle(h -> h.execute(
                    "CREATE INDEX parley_messages_thread_top ON parley_messages (thread_id, top_level, save_order)"));
        }
    }

    /**
     * The step bound is not vacuous: with every jump pointer replaced by the parent link (as a V4 database's
     * messages are migrated), the same check walks the whole distance; listBranch stays right.
     */
    @Test
    @Order(6)
    void withParentLinksForJumpsTheCursorCheckWalksTheWholeWay() {
        direct.useHandle(h -> h.execute("UPDATE parley_messages SET branch_jump = parent_message_id, "
                + "branch_jump_depth = branch_depth - 1 WHERE thread_id = 'deep' AND branch_depth > 0"));
        int steps = direct.withHandle(h -> h.createQuery(MessageTreeDao.ANCESTOR_AT_DEPTH)
                .bind("threadId", DEEP_THREAD).bind("leafId", "d-3999").bind("depth", 0)
                .map((rs, ctx) -> rs.getInt("steps")).one());
        assertThat(steps).isEqualTo(3999);
        assertThat(store.listBranch(DEEP_THREAD, "d-3999", "d-2000", 3)).extracting(Message::id)
                .containsExactly("d-1997", "d-1998", "d-1999");
    }

    void assertPlanUsesIndex(HotQuery query) {
        List<String> problems = direct.withHandle(h -> planProblems(h, query));
        assertThat(problems).as("the plan of %s", query.sql()).isEmpty();
    }

    private static long medianMicros(Supplier<?> read) {
        for (int i = 0; i < 10; i++) {
            read.get();
        }
        long[] micros = new long[25];
        for (int i = 0; i < micros.length; i++) {
            long started = System.nanoTime();
            read.get();
            micros[i] = (System.nanoTime() - started) / 1000;
        }
        Arrays.sort(micros);
        return micros[micros.length / 2];
    }
}
