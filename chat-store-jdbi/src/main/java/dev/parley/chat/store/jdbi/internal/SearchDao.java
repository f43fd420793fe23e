package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.model.ChatThread;
import dev.parley.chat.store.SearchQuery;
import dev.parley.chat.store.ThreadSearchHit;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.sqlobject.config.RegisterRowMapper;
import org.jdbi.v3.sqlobject.customizer.BindList;
import org.jdbi.v3.sqlobject.statement.SqlQuery;
import org.jspecify.annotations.Nullable;

/**
 * The search over an owner's threads: their titles and their user and assistant messages' text, each text a
 * document of the database's full-text index — SQLite's FTS5 tables {@code parley_title_search} and
 * {@code parley_message_search} (kept by triggers), PostgreSQL's GIN indexes over {@code title_vector} and
 * {@code search_vector} (written with each row). A text matches when it holds every word of the query as a
 * word prefix and every phrase as written; a thread scores the sum of its matching texts' scores (FTS5's
 * bm25, PostgreSQL's ts_rank), ties newest activity first, and its snippet comes from its best text, made by
 * the database (FTS5's snippet, PostgreSQL's ts_headline) for the page's hits only.
 *
 * <p>The query is built from {@link SearchQuery}'s words and phrases, each quoted as a term, so nothing a
 * person typed is ever syntax. Each database's statements are in its sub-interface ({@link #of}).
 */
@RegisterRowMapper(SearchDao.Match.Mapper.class)
@RegisterRowMapper(SearchDao.Snippet.Mapper.class)
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

    /** The query in the database's full-text syntax. */
    String expression(SearchQuery query);

    /** A page of matching threads, best first, with the document the snippet comes from. */
    List<Match> matches(String expression, String ownerId, int offset, int limit);

    /** Snippets of messages' texts, by message id (of documents {@link #matches} found). */
    List<Snippet> messageSnippets(String expression, List<Match> matches);

    /** Snippets of titles, by thread id (of documents {@link #matches} found). */
    List<Snippet> titleSnippets(String expression, List<Match> matches);

    /** The owner's threads matching the query, best first, skipping {@code offset}, at most {@code limit}. */
    default List<ThreadSearchHit> search(String ownerId, SearchQuery query, int offset, int limit) {
        String expression = expression(query);
        List<Match> matches = matches(expression, ownerId, offset, limit);
        List<Match> inMessages = new ArrayList<>();
        List<Match> inTitles = new ArrayList<>();
        for (Match match : matches) {
            (match.messageId() == null ? inTitles : inMessages).add(match);
        }
        Map<String, String> snippets = new HashMap<>();
        if (!inMessages.isEmpty()) {
            messageSnippets(expression, inMessages).forEach(s -> snippets.put(s.key(), s.text()));
        }
        if (!inTitles.isEmpty()) {
            titleSnippets(expression, inTitles).forEach(s -> snippets.put("\u0000" + s.key(), s.text()));
        }
        List<ThreadSearchHit> hits = new ArrayList<>(matches.size());
        for (Match match : matches) {
            String key = match.messageId() == null ? "\u0000" + match.thread().id() : match.messageId();
            String fallback = match.messageId() == null ? match.thread().title() : "";
            hits.add(new ThreadSearchHit(match.thread(), SearchText.snippet(snippets.getOrDefault(key, fallback),
                    SNIPPET_MAX), match.messageId()));
        }
        return hits;
    }

    /**
     * SQLite: FTS5 MATCH expressions ({@code "lisbon"* "day in lisbon"}: a quoted term is a string, never an
     * operator; {@code *} makes it a prefix), ranked by bm25 (negated: FTS5's best is its lowest).
     */
    interface Sqlite extends SearchDao {
        /**
         * Hot: the matching documents of both indexes, summed per thread (SQLite takes the bare columns of a
         * group from its row with the MAX: the best document), then the owner's threads, best first.
         */
        String MATCHES = "WITH hits (thread_id, message_id, doc, score) AS ("
                + "SELECT m.thread_id, m.id, parley_message_search.rowid, -bm25(parley_message_search) "
                + "FROM parley_message_search JOIN parley_messages m ON m.save_order = parley_message_search.rowid "
                + "WHERE parley_message_search MATCH :expression "
                + "UNION ALL "
                + "SELECT t.id, NULL, parley_title_search.rowid, -bm25(parley_title_search) "
                + "FROM parley_title_search JOIN parley_threads t ON t.save_order = parley_title_search.rowid "
                + "WHERE parley_title_search MATCH :expression AND t.owner_id = :ownerId), "
                + "per_thread (thread_id, total, best, message_id, doc) AS ("
                + "SELECT thread_id, SUM(score), MAX(score), message_id, doc FROM hits GROUP BY thread_id) "
                + "SELECT " + ThreadDao.COLUMNS + ", h.total, h.message_id, h.doc "
                + "FROM per_thread h JOIN parley_threads t ON t.id = h.thread_id WHERE t.owner_id = :ownerId "
                + "ORDER BY h.total DESC, t.last_message_at DESC, t.id DESC LIMIT :limit OFFSET :offset";

        String MESSAGE_SNIPPETS = "SELECT m.id AS snippet_key, snippet(parley_message_search, 0, '', '', '…', "
                + SNIPPET_WORDS + ") AS snippet "
                + "FROM parley_message_search JOIN parley_messages m ON m.save_order = parley_message_search.rowid "
                + "WHERE parley_message_search MATCH :expression AND parley_message_search.rowid IN (<docs>)";

        String TITLE_SNIPPETS = "SELECT t.id AS snippet_key, snippet(parley_title_search, 0, '', '', '…', "
                + SNIPPET_WORDS + ") AS snippet "
                + "FROM parley_title_search JOIN parley_threads t ON t.save_order = parley_title_search.rowid "
                + "WHERE parley_title_search MATCH :expression AND parley_title_search.rowid IN (<docs>)";

        @Override
        default String expression(SearchQuery query) {
            List<String> terms = new ArrayList<>();
            query.words().forEach(word -> terms.add('"' + word + "\"*"));
            query.phrases().forEach(phrase -> terms.add('"' + phrase + '"'));
            return String.join(" ", terms);
        }

        @Override
        @SqlQuery(MATCHES)
        List<Match> matches(String expression, String ownerId, int offset, int limit);

        @SqlQuery(MESSAGE_SNIPPETS)
        List<Snippet> messageSnippetsOf(String expression, @BindList List<Long> docs);

        @SqlQuery(TITLE_SNIPPETS)
        List<Snippet> titleSnippetsOf(String expression, @BindList List<Long> docs);

        @Override
        default List<Snippet> messageSnippets(String expression, List<Match> matches) {
            return messageSnippetsOf(expression, matches.stream().map(Match::doc).toList());
        }

        @Override
        default List<Snippet> titleSnippets(String expression, List<Match> matches) {
            return titleSnippetsOf(expression, matches.stream().map(Match::doc).toList());
        }
    }

    /**
     * PostgreSQL: a {@code tsquery} literal ({@code 'lisbon':* & 'day' <-> 'in' <-> 'lisbon'}), cast rather than
     * parsed (the vectors hold the same words, see {@link SearchText#vector}), ranked by ts_rank; snippets by
     * ts_headline with the {@code simple} configuration, plain text.
     */
    interface Postgres extends SearchDao {
        /** Hot: the matching documents of both GIN indexes, summed per thread, then the owner's threads, best first. */
        String MATCHES = "WITH hits AS ("
                + "SELECT m.thread_id, m.id AS message_id, ts_rank(m.search_vector, CAST(:expression AS tsquery)) AS score "
                + "FROM parley_messages m WHERE m.search_vector @@ CAST(:expression AS tsquery) "
                + "UNION ALL "
                + "SELECT t.id, NULL, ts_rank(t.title_vector, CAST(:expression AS tsquery)) "
                + "FROM parley_threads t WHERE t.title_vector @@ CAST(:expression AS tsquery) AND t.owner_id = :ownerId), "
                + "per_thread AS (SELECT thread_id, SUM(score) AS total, "
                + "(array_agg(message_id ORDER BY score DESC))[1] AS message_id FROM hits GROUP BY thread_id) "
                + "SELECT " + ThreadDao.COLUMNS + ", h.total, h.message_id, 0 AS doc "
                + "FROM per_thread h JOIN parley_threads t ON t.id = h.thread_id WHERE t.owner_id = :ownerId "
                + "ORDER BY h.total DESC, t.last_message_at DESC, t.id DESC LIMIT :limit OFFSET :offset";

        String HEADLINE_OPTIONS = "'MaxWords=" + SNIPPET_WORDS + ", MinWords=" + SNIPPET_WORDS / 2
                + ", ShortWord=0, MaxFragments=1, FragmentDelimiter=\" … \", StartSel=\"\", StopSel=\"\"'";

        String MESSAGE_SNIPPETS = "SELECT id AS snippet_key, ts_headline('simple', search_text, "
                + "CAST(:expression AS tsquery), " + HEADLINE_OPTIONS + ") AS snippet "
                + "FROM parley_messages WHERE id IN (<ids>)";

        String TITLE_SNIPPETS = "SELECT id AS snippet_key, ts_headline('simple', title, "
                + "CAST(:expression AS tsquery), " + HEADLINE_OPTIONS + ") AS snippet "
                + "FROM parley_threads WHERE id IN (<ids>)";

        @Override
        default String expression(SearchQuery query) {
            List<String> terms = new ArrayList<>();
            query.words().forEach(word -> terms.add("'" + word + "':*"));
            for (String phrase : query.phrases()) {
                terms.add("('" + String.join("' <-> '", phrase.split(" ")) + "')");
            }
            return String.join(" & ", terms);
        }

        @Override
        @SqlQuery(MATCHES)
        List<Match> matches(String expression, String ownerId, int offset, int limit);

        @SqlQuery(MESSAGE_SNIPPETS)
        List<Snippet> messageSnippetsOf(String expression, @BindList List<String> ids);

        @SqlQuery(TITLE_SNIPPETS)
        List<Snippet> titleSnippetsOf(String expression, @BindList List<String> ids);

        @Override
        default List<Snippet> messageSnippets(String expression, List<Match> matches) {
            return messageSnippetsOf(expression, matches.stream().map(Match::messageId).toList());
        }

        @Override
        default List<Snippet> titleSnippets(String expression, List<Match> matches) {
            return titleSnippetsOf(expression, matches.stream().map(m -> m.thread().id()).toList());
        }
    }

    /**
     * A matching thread with its score and its best document: a message (its id; on SQLite also its FTS
     * rowid) or, with no message id, the title.
     */
    record Match(ChatThread thread, double score, @Nullable String messageId, long doc) {
        public static final class Mapper implements RowMapper<Match> {
            private final ThreadDao.Mapper threads = new ThreadDao.Mapper();

            @Override
            public Match map(ResultSet rs, StatementContext ctx) throws SQLException {
                return new Match(threads.map(rs, ctx), rs.getDouble("total"), rs.getString("message_id"),
                        rs.getLong("doc"));
            }
        }
    }

    /** A snippet of a message (by its id) or of a title (by its thread's id). */
    record Snippet(String key, @Nullable String text) {
        public static final class Mapper implements RowMapper<Snippet> {
            @Override
            public Snippet map(ResultSet rs, StatementContext ctx) throws SQLException {
                return new Snippet(rs.getString("snippet_key"), rs.getString("snippet"));
            }
        }
    }
}
