package dev.parley.chat.store.jdbi.internal;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.sqlobject.config.RegisterRowMapper;
import org.jdbi.v3.sqlobject.customizer.BindList;
import org.jdbi.v3.sqlobject.statement.SqlQuery;
import org.jspecify.annotations.Nullable;

/**
 * A thread's messages as its tree ({@code parley_messages}, top-level messages only): a message's parent is
 * the message it followed, so a branch is the path of parent links from a leaf to the thread's start, and
 * the children index ({@code parley_messages_children (thread_id, parent_message_id, save_order)}) walks it
 * downwards. Every walk is a recursive query whose steps are index lookups; a page of a branch costs
 * {@code limit} of them, checking that a cursor lies on the branch O(log depth) more (the depth and jump
 * pointer each message gets on its first save, see {@link MessageDao#UPSERT_VALUES}). The same SQL
 * on SQLite and PostgreSQL.
 */
@RegisterRowMapper(MessageTreeDao.Position.Mapper.class)
@RegisterRowMapper(MessageTreeDao.Reached.Mapper.class)
@RegisterRowMapper(MessageTreeDao.Link.Mapper.class)
public interface MessageTreeDao {
    /** A bound on the steps of a walk, only against a cycle of parent links in a damaged database. */
    int MAX_STEPS = 10_000_000;

    /** Hot: a page of a branch, from {@code :startId} up its parent links, at most {@code :limit} messages, oldest first. */
    String BRANCH_PAGE = "WITH RECURSIVE path (body, parent_id, steps) AS ("
            + "SELECT body, parent_message_id, 1 FROM parley_messages "
            + "WHERE id = :startId AND thread_id = :threadId AND top_level = TRUE "
            + "UNION ALL "
            + "SELECT m.body, m.parent_message_id, path.steps + 1 FROM path JOIN parley_messages m ON m.id = path.parent_id "
            + "WHERE path.steps < :limit AND m.thread_id = :threadId AND m.top_level = TRUE) "
            + "SELECT body FROM path ORDER BY steps DESC";

    /** A top-level message's depth (null if unknown) and parent. */
    String POSITION = "SELECT branch_depth, parent_message_id FROM parley_messages "
            + "WHERE id = :id AND thread_id = :threadId AND top_level = TRUE";

    /**
     * Hot: from {@code :leafId} towards its ancestor at {@code :depth}, by a jump pointer wherever the jump does
     * not overshoot, else by the parent link: the message reached last, and after how many steps (O(log depth)).
     */
    String ANCESTOR_AT_DEPTH = "WITH RECURSIVE up (id, depth, parent_id, jump, jump_depth, steps) AS ("
            + "SELECT id, branch_depth, parent_message_id, branch_jump, branch_jump_depth, 0 FROM parley_messages "
            + "WHERE id = :leafId AND thread_id = :threadId AND top_level = TRUE "
            + "UNION ALL "
            + "SELECT m.id, m.branch_depth, m.parent_message_id, m.branch_jump, m.branch_jump_depth, up.steps + 1 "
            + "FROM up JOIN parley_messages m "
            + "ON m.id = CASE WHEN up.jump_depth >= :depth THEN up.jump ELSE up.parent_id END "
            + "WHERE up.depth > :depth AND up.steps < " + MAX_STEPS + " AND m.thread_id = :threadId "
            + "AND m.top_level = TRUE) "
            + "SELECT id, depth, steps FROM up ORDER BY steps DESC LIMIT 1";

    /** From {@code :leafId} up the parent links until {@code :ancestorId}: 1 if it is met, else 0. */
    String ANCESTOR_BY_PARENTS = "WITH RECURSIVE up (id, parent_id, steps) AS ("
            + "SELECT id, parent_message_id, 0 FROM parley_messages "
            + "WHERE id = :leafId AND thread_id = :threadId AND top_level = TRUE "
            + "UNION ALL "
            + "SELECT m.id, m.parent_message_id, up.steps + 1 FROM up JOIN parley_messages m ON m.id = up.parent_id "
            + "WHERE up.id <> :ancestorId AND up.steps < " + MAX_STEPS + " AND m.thread_id = :threadId "
            + "AND m.top_level = TRUE) "
            + "SELECT COUNT(*) FROM up WHERE id = :ancestorId";

    /** The newest message at or below {@code :messageId}: a walk down the children index of its subtree. */
    String NEWEST_DESCENDANT = "WITH RECURSIVE below (id, save_order) AS ("
            + "SELECT id, save_order FROM parley_messages "
            + "WHERE id = :messageId AND thread_id = :threadId AND top_level = TRUE "
            + "UNION "
            + "SELECT c.id, c.save_order FROM below JOIN parley_messages c "
            + "ON c.thread_id = :threadId AND c.parent_message_id = below.id AND c.top_level = TRUE) "
            + "SELECT id FROM below ORDER BY save_order DESC LIMIT 1";

    /** Which of these ids are user messages of the thread, with their parents. */
    String USER_PARENTS = "SELECT id, parent_message_id FROM parley_messages "
            + "WHERE id IN (<ids>) AND thread_id = :threadId AND kind = 'user'";

    /** The user messages answering these parents (edits of each other), in save order. */
    String USER_CHILDREN = "SELECT id, parent_message_id FROM parley_messages "
            + "WHERE thread_id = :threadId AND parent_message_id IN (<parentIds>) AND top_level = TRUE AND kind = 'user' "
            + "ORDER BY save_order";

    /** The thread's first user messages (no parent: the first message and its edits), in save order. */
    String FIRST_USER_MESSAGES = "SELECT id, parent_message_id FROM parley_messages "
            + "WHERE thread_id = :threadId AND parent_message_id IS NULL AND top_level = TRUE AND kind = 'user' "
            + "ORDER BY save_order";

    @SqlQuery(BRANCH_PAGE)
    List<String> page(String threadId, String startId, int limit);

    @SqlQuery(POSITION)
    Optional<Position> position(String id, String threadId);

    @SqlQuery(ANCESTOR_AT_DEPTH)
    Optional<Reached> ancestorAtDepth(String threadId, String leafId, int depth);

    @SqlQuery(ANCESTOR_BY_PARENTS)
    int ancestorByParents(String threadId, String leafId, String ancestorId);

    @SqlQuery(NEWEST_DESCENDANT)
    Optional<String> newestDescendant(String threadId, String messageId);

    @SqlQuery(USER_PARENTS)
    List<Link> userParents(String threadId, @BindList List<String> ids);

    @SqlQuery(USER_CHILDREN)
    List<Link> userChildren(String threadId, @BindList List<String> parentIds);

    @SqlQuery(FIRST_USER_MESSAGES)
    List<Link> firstUserMessages(String threadId);

    /**
     * The bodies of a branch's page, oldest first: the newest {@code limit} messages up to {@code leafId}, or
     * before {@code beforeId} if that is on the branch; none if the leaf is no top-level message of the thread
     * or the cursor is off the branch.
     */
    default List<String> branch(String threadId, String leafId, @Nullable String beforeId, int limit) {
        if (beforeId == null) {
            return page(threadId, leafId, limit);
        }
        Optional<Position> cursor = position(beforeId, threadId);
        if (cursor.isEmpty() || cursor.get().parentId() == null
                || !isOnBranch(threadId, leafId, beforeId, cursor.get().depth())) {
            return List.of();
        }
        return page(threadId, cursor.get().parentId(), limit);
    }

    /**
     * True if {@code ancestorId} (of depth {@code depth}, null if unknown) is {@code leafId} or one of its
     * ancestors. The jump pointers answer yes in O(log depth) steps; a no is checked by walking the parent
     * links, which stays exact where the depths cannot be trusted (messages saved before their parent, rows of
     * a damaged database), and costs the distance only for a cursor off the branch.
     */
    default boolean isOnBranch(String threadId, String leafId, String ancestorId, @Nullable Integer depth) {
        if (depth != null) {
            Optional<Reached> reached = ancestorAtDepth(threadId, leafId, depth);
            if (reached.isPresent() && reached.get().id().equals(ancestorId)) {
                return true;
            }
        }
        return ancestorByParents(threadId, leafId, ancestorId) > 0;
    }

    /** For each of these user messages of the thread, the user messages sharing its parent, in save order. */
    default Map<String, List<String>> userSiblings(String threadId, Collection<String> userMessageIds) {
        Map<String, String> parents = new LinkedHashMap<>();
        boolean firsts = false;
        for (List<String> chunk : InLists.chunks(userMessageIds)) {
            for (Link user : userParents(threadId, chunk)) {
                parents.put(user.id(), user.parentId());
                firsts |= user.parentId() == null;
            }
        }
        Map<String, List<String>> children = new LinkedHashMap<>();
        List<String> parentIds = parents.values().stream().filter(p -> p != null).distinct().toList();
        for (List<String> chunk : InLists.chunks(parentIds)) {
            for (Link child : userChildren(threadId, chunk)) {
                children.computeIfAbsent(child.parentId(), k -> new ArrayList<>()).add(child.id());
            }
        }
        List<String> first = new ArrayList<>();
        if (firsts) {
            firstUserMessages(threadId).forEach(link -> first.add(link.id()));
        }
        Map<String, List<String>> result = new LinkedHashMap<>();
        for (String id : userMessageIds) {
            if (parents.containsKey(id)) {
                String parent = parents.get(id);
                result.put(id, List.copyOf(parent == null ? first : children.getOrDefault(parent, List.of(id))));
            }
        }
        return result;
    }

    /** A message's depth in its tree (null if unknown) and its parent. */
    record Position(@Nullable Integer depth, @Nullable String parentId) {
        public static final class Mapper implements RowMapper<Position> {
            @Override
            public Position map(ResultSet rs, StatementContext ctx) throws SQLException {
                Long depth = Rows.nullableLong(rs, "branch_depth");
                return new Position(depth == null ? null : depth.intValue(), rs.getString("parent_message_id"));
            }
        }
    }

    /** Where a walk ended, and after how many steps. */
    record Reached(String id, @Nullable Integer depth, int steps) {
        public static final class Mapper implements RowMapper<Reached> {
            @Override
            public Reached map(ResultSet rs, StatementContext ctx) throws SQLException {
                Long depth = Rows.nullableLong(rs, "depth");
                return new Reached(rs.getString("id"), depth == null ? null : depth.intValue(), rs.getInt("steps"));
            }
        }
    }

    /** A message and its parent. */
    record Link(String id, @Nullable String parentId) {
        public static final class Mapper implements RowMapper<Link> {
            @Override
            public Link map(ResultSet rs, StatementContext ctx) throws SQLException {
                return new Link(rs.getString("id"), rs.getString("parent_message_id"));
            }
        }
    }
}
