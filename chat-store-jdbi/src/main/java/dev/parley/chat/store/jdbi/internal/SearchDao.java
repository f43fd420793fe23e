package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.model.ChatThread;
import dev.parley.chat.store.SearchQuery;
import dev.parley.chat.store.ThreadSearchHit;
import java.nio.charset.StandardCharsets;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.sqlobject.config.RegisterRowMapper;
import org.jdbi.v3.sqlobject.customizer.BindList;
import org.jdbi.v3.sqlobject.statement.SqlQuery;
import org.jspecify.annotations.Nullable;

/**
 * The statements of the search over an owner's threads: their titles and their user and assistant messages'
 * text, each text a document of the database's full-text index — SQLite's FTS5 tables
 * {@code parley_title_search} and {@code parley_message_search} (kept by triggers, each entry with its owner's
 * key), PostgreSQL's GIN indexes over {@code title_vector} and {@code search_vector} (written with each row)
 * beside the B-tree {@code parley_messages_search_newest} (owner, first-save order; see {@link Postgres}). A text matches when it
 * holds every word of the query as a word prefix and every phrase as written. {@link ThreadSearch} puts the
 * page together: the owner's matching messages newest first, as many as the page needs
 * ({@link #newestMatches}), then, after the last of those, the threads only whose title matches
 * ({@link #titleMatches}); snippets are made for the page's hits only (SQLite: cut by the store from the
 * text, {@link SearchText#around}; PostgreSQL: ts_headline).
 *
 * <p>The query is built from {@link SearchQuery}'s words and phrases, each quoted as a term, so nothing a
 * person typed is ever syntax. Each database's statements are in its sub-interface ({@link #of}).
 */
@RegisterRowMapper(SearchDao.Match.Mapper.class)
@RegisterRowMapper(SearchDao.Snippet.Mapper.class)
@RegisterRowMapper(ThreadDao.Mapper.class)
public interface SearchDao {
    /** How many words of the best text a snippet shows, about. */
    int SNIPPET_WORDS = 16;
    /** The longest snippet, in characters. */
    int SNIPPET_MAX = 200;

    /** The interface to attach on a database. */
    static Class<? extends SearchDao> of(Dialect dialect) {
        return switch (dialect) {
            case SQLITE -> Sqlite.class;
            case POSTGRESQL -> Postgres.class;
        };
    }

    /** The query in the database's full-text syntax, for the owner's texts. */
    String expression(SearchQuery query, String ownerId);

    /**
     * The owner's newest {@code window} matching messages, newest (latest first save) first, each with its
     * thread: a thread appears once per matching message.
     */
    List<Match> newestMatches(String expression, String ownerId, int window);

    /** Every one of the owner's threads whose title matches, newest activity first. */
    List<ChatThread> titleMatches(String expression, String ownerId);

    /** The threads with these ids that exist, in no order. */
    List<ChatThread> threads(List<String> threadIds);

    /** Snippets of messages' texts, by the {@link Match#best} of matches in a message. */
    List<Snippet> messageSnippets(String expression, SearchQuery query, List<String> bests);

    /** Snippets of titles, by thread id. */
    List<Snippet> titleSnippets(String expression, SearchQuery query, List<String> threadIds);

    /** See {@link ThreadSearch#search}. */
    default List<ThreadSearchHit> search(String ownerId, SearchQuery query, int offset, int limit) {
        return new ThreadSearch(this).search(ownerId, query, offset, limit);
    }

    /**
     * SQLite: FTS5 MATCH expressions restricted to the owner's entries and to the text column
     * ({@code owner_key : "616c696365" AND text : ("lisbon"* "day in lisbon")}: a quoted term is a string, never
     * an operator; {@code *} makes it a prefix). FTS5 hands out the matches in descending rowid order, so the
     * LIMIT stops the index's scan: nothing is scored, bm25 least of all (its weights come from every owner's
     * texts).
     */
    interface Sqlite extends SearchDao {
        /**
         * Hot: the owner's matching messages, newest first, as far as the window. A match's thread is read from
         * the covering index {@code parley_messages_search_thread}, never the message's wide row (INDEXED BY:
         * without the index the statement fails rather than slows); its owner is checked again on the thread's
         * row, found by its key (CROSS JOIN keeps this order: SQLite would otherwise walk the owner's threads
         * for every match).
         */
        String NEWEST_MATCHES = "SELECT m.thread_id, parley_message_search.rowid AS best, m.save_order "
                + "FROM parley_message_search CROSS JOIN parley_messages m INDEXED BY parley_messages_search_thread "
                + "ON m.save_order = parley_message_search.rowid CROSS JOIN parley_threads t ON t.id = m.thread_id "
                + "WHERE parley_message_search MATCH :expression AND t.owner_id = :ownerId "
                + "ORDER BY parley_message_search.rowid DESC LIMIT :window";

        String TITLE_MATCHES = "SELECT " + ThreadDao.COLUMNS + " FROM parley_title_search "
                + "CROSS JOIN parley_threads t ON t.save_order = parley_title_search.rowid "
                + "WHERE parley_title_search MATCH :expression AND t.owner_id = :ownerId "
                + "ORDER BY t.last_message_at DESC, t.id DESC";

        /**
         * A message's text, cut by the store ({@link SearchText#around}): FTS5's snippet() needs a MATCH, which
         * FTS5 would evaluate again for every rowid asked (a common prefix merges its doclists each time).
         */
        String MESSAGE_TEXTS = "SELECT save_order AS snippet_key, id AS message_id, search_text AS snippet "
                + "FROM parley_messages WHERE save_order IN (<docs>)";

        String TITLE_TEXTS = "SELECT id AS snippet_key, NULL AS message_id, title AS snippet FROM parley_threads "
                + "WHERE id IN (<threadIds>)";

        @Override
        default String expression(SearchQuery query, String ownerId) {
            return matchExpression(query, ownerId);
        }

        /** See {@link #expression}. */
        static String matchExpression(SearchQuery query, String ownerId) {
            List<String> terms = new ArrayList<>();
            query.words().forEach(word -> terms.add('"' + word + "\"*"));
            query.phrases().forEach(phrase -> terms.add('"' + phrase + '"'));
            return "owner_key : \"" + ownerKey(ownerId) + "\" AND text : (" + String.join(" ", terms) + ")";
        }

        /** The owner's word in the indexes: the hex of the id's UTF-8 bytes, as SQLite's hex() writes it, lower-cased. */
        static String ownerKey(String ownerId) {
            return HexFormat.of().formatHex(ownerId.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        @SqlQuery(NEWEST_MATCHES)
        List<Match> newestMatches(String expression, String ownerId, int window);

        @Override
        @SqlQuery(TITLE_MATCHES)
        List<ChatThread> titleMatches(String expression, String ownerId);

        @Override
        @SqlQuery("SELECT " + ThreadDao.COLUMNS + " FROM parley_threads WHERE id IN (<threadIds>)")
        List<ChatThread> threads(@BindList List<String> threadIds);

        @SqlQuery(MESSAGE_TEXTS)
        List<Snippet> messageTexts(@BindList List<Long> docs);

        @SqlQuery(TITLE_TEXTS)
        List<Snippet> titleTexts(@BindList List<String> threadIds);

        @Override
        default List<Snippet> messageSnippets(String expression, SearchQuery query, List<String> bests) {
            return cut(messageTexts(bests.stream().map(Long::valueOf).toList()), query);
        }

        @Override
        default List<Snippet> titleSnippets(String expression, SearchQuery query, List<String> threadIds) {
            return cut(titleTexts(threadIds), query);
        }

        private static List<Snippet> cut(List<Snippet> texts, SearchQuery query) {
            return texts.stream().map(t -> new Snippet(t.key(), t.messageId(), SearchText.around(t.text(), query,
                    SNIPPET_WORDS))).toList();
        }
    }

    /**
     * PostgreSQL: a {@code tsquery} literal ({@code 'lisbon':* & 'day' <-> 'in' <-> 'lisbon'}), cast rather than
     * parsed (the vectors hold the same words, see {@link SearchText#vector}); the owner is a column of the
     * message's row. The newest matches come from statements whose plans do not depend on how common the
     * planner believes the words are: the owner's newest texts read backwards, at most a budget of them
     * ({@link #RECENT_MATCHES}), then the GIN index for the older ones only when those held too few
     * ({@link #BUDGET_BOUNDARY}, {@link #OLDER_MATCHES}). Snippets by ts_headline with the {@code simple} configuration, plain text, of the text in
     * the message's body.
     */
    interface Postgres extends SearchDao {
        /** How many of the owner's newest texts {@link #RECENT_MATCHES} reads at most, per match of the window. */
        int BUDGET_PER_MATCH = 20;

        /**
         * Hot: the owner's matches among their newest {@code :budget} texts, newest first, as far as the window,
         * read backwards from {@code parley_messages_search_newest}: the scan stops at the window's last match
         * (a common word: a few rows per match), or at the budget (a rare word or none).
         */
        String RECENT_MATCHES = "SELECT thread_id, id AS best, save_order FROM ("
                + "SELECT thread_id, id, save_order, search_vector FROM parley_messages "
                + "WHERE owner_id = :ownerId AND search_vector IS NOT NULL ORDER BY save_order DESC LIMIT :budget) recent "
                + "WHERE search_vector @@ CAST(:expression AS tsquery) ORDER BY save_order DESC LIMIT :window";

        /**
         * Where the recent matches fell short: the first-save order of the oldest text the budget covers, or
         * none when the owner has no more texts than the budget (then every match has been seen). Reads the
         * B-tree's entries only.
         */
        String BUDGET_BOUNDARY = "SELECT MIN(save_order) FROM (SELECT save_order FROM parley_messages "
                + "WHERE owner_id = :ownerId AND search_vector IS NOT NULL ORDER BY save_order DESC LIMIT :budget) recent "
                + "HAVING COUNT(*) = :budget";

        /**
         * The owner's matches older than {@code :boundary}, newest first, as far as the window, from the GIN
         * index: where the recent texts held fewer matches than the window, the query is rare (less than one
         * text in {@value #BUDGET_PER_MATCH} of the recent ones matched), and its few matches are read and
         * sorted. The owner is compared as an expression, so the planner cannot take the B-tree and walk every
         * older text of the owner.
         */
        String OLDER_MATCHES = "SELECT thread_id, id AS best, save_order FROM parley_messages "
                + "WHERE (owner_id = :ownerId) IS TRUE AND search_vector @@ CAST(:expression AS tsquery) "
                + "AND save_order < :boundary ORDER BY save_order DESC LIMIT :window";

        String TITLE_MATCHES = "SELECT " + ThreadDao.COLUMNS + " FROM parley_threads "
                + "WHERE owner_id = :ownerId AND title_vector @@ CAST(:expression AS tsquery) "
                + "ORDER BY last_message_at DESC, id DESC";

        String HEADLINE_OPTIONS = "'MaxWords=" + SNIPPET_WORDS + ", MinWords=" + SNIPPET_WORDS / 2
                + ", ShortWord=0, MaxFragments=1, FragmentDelimiter=\" … \", StartSel=\"\", StopSel=\"\"'";

        /** The text is read from the body (JSON escapes a NUL, which PostgreSQL's text cannot hold: read as U+FFFD). */
        String MESSAGE_SNIPPETS = "SELECT id AS snippet_key, id AS message_id, ts_headline('simple', "
                + "left(replace(body, '\\u0000', '\\uFFFD')::json ->> 'text', " + SearchText.MAX_CHARS + "), "
                + "CAST(:expression AS tsquery), " + HEADLINE_OPTIONS + ") AS snippet "
                + "FROM parley_messages WHERE id IN (<ids>)";

        String TITLE_SNIPPETS = "SELECT id AS snippet_key, NULL AS message_id, ts_headline('simple', title, "
                + "CAST(:expression AS tsquery), " + HEADLINE_OPTIONS + ") AS snippet "
                + "FROM parley_threads WHERE id IN (<threadIds>)";

        @Override
        default String expression(SearchQuery query, String ownerId) {
            return tsquery(query);
        }

        /** See {@link #expression}: the owner is not part of it. */
        static String tsquery(SearchQuery query) {
            List<String> terms = new ArrayList<>();
            query.words().forEach(word -> terms.add("'" + word + "':*"));
            for (String phrase : query.phrases()) {
                terms.add("('" + String.join("' <-> '", phrase.split(" ")) + "')");
            }
            return String.join(" & ", terms);
        }

        @SqlQuery(RECENT_MATCHES)
        List<Match> recentMatches(String expression, String ownerId, int window, int budget);

        @SqlQuery(BUDGET_BOUNDARY)
        Optional<Long> budgetBoundary(String ownerId, int budget);

        @SqlQuery(OLDER_MATCHES)
        List<Match> olderMatches(String expression, String ownerId, long boundary, int window);

        /** The recent matches, then, where they fall short and the owner has older texts, the older ones. */
        @Override
        default List<Match> newestMatches(String expression, String ownerId, int window) {
            int budget = (int) Math.min(Integer.MAX_VALUE, (long) window * BUDGET_PER_MATCH);
            List<Match> found = new ArrayList<>(recentMatches(expression, ownerId, window, budget));
            if (found.size() < window) {
                budgetBoundary(ownerId, budget).ifPresent(boundary ->
                        found.addAll(olderMatches(expression, ownerId, boundary, window - found.size())));
            }
            return found;
        }

        @Override
        @SqlQuery(TITLE_MATCHES)
        List<ChatThread> titleMatches(String expression, String ownerId);

        @Override
        @SqlQuery("SELECT " + ThreadDao.COLUMNS + " FROM parley_threads WHERE id IN (<threadIds>)")
        List<ChatThread> threads(@BindList List<String> threadIds);

        @SqlQuery(MESSAGE_SNIPPETS)
        List<Snippet> messageHeadlines(String expression, @BindList("ids") List<String> bests);

        @SqlQuery(TITLE_SNIPPETS)
        List<Snippet> titleHeadlines(String expression, @BindList List<String> threadIds);

        @Override
        default List<Snippet> messageSnippets(String expression, SearchQuery query, List<String> bests) {
            return messageHeadlines(expression, bests);
        }

        @Override
        default List<Snippet> titleSnippets(String expression, SearchQuery query, List<String> threadIds) {
            return titleHeadlines(expression, threadIds);
        }
    }

    /**
     * A matching message's thread, {@code best}, the message for {@link #messageSnippets} (SQLite: the text's
     * FTS rowid; PostgreSQL: the message id), and its first-save order.
     */
    record Match(String threadId, String best, long saveOrder) {
        public static final class Mapper implements RowMapper<Match> {
            @Override
            public Match map(ResultSet rs, StatementContext ctx) throws SQLException {
                return new Match(rs.getString("thread_id"), rs.getString("best"), rs.getLong("save_order"));
            }
        }
    }

    /** A snippet of a message (by {@link Match#best}, with the message's id) or of a title (by its thread's id). */
    record Snippet(String key, @Nullable String messageId, @Nullable String text) {
        public static final class Mapper implements RowMapper<Snippet> {
            @Override
            public Snippet map(ResultSet rs, StatementContext ctx) throws SQLException {
                return new Snippet(rs.getString("snippet_key"), rs.getString("message_id"), rs.getString("snippet"));
            }
        }
    }
}
