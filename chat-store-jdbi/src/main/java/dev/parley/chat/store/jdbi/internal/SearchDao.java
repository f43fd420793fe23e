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
 * word prefix and every phrase as written; a thread scores the sum of its matching texts' scores, computed
 * from the owner's own texts only (SQLite: how many of them match; PostgreSQL: ts_rank, which reads only the
 * text it scores), ties newest activity first, and its snippet comes from its best text, made by the database
 * (FTS5's snippet, PostgreSQL's ts_headline) for the page's hits only.
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

    /** A page of matching threads, best first, each with its best text (see {@link Match}). */
    List<Match> matches(String expression, String ownerId, int offset, int limit);

    /** Snippets of messages' texts, by the {@link Match#best} of matches in a message. */
    List<Snippet> messageSnippets(String expression, List<String> bests);

    /** Snippets of titles, by thread id. */
    List<Snippet> titleSnippets(String expression, List<String> threadIds);

    /**
     * The owner's threads matching the query, best first, skipping {@code offset}, at most {@code limit}. A hit
     * whose best message was deleted between the ranking and its snippet is left out.
     */
    default List<ThreadSearchHit> search(String ownerId, SearchQuery query, int offset, int limit) {
        String expression = expression(query);
        List<Match> matches = matches(expression, ownerId, offset, limit);
        List<String> inMessages = new ArrayList<>();
        List<String> inTitles = new ArrayList<>();
        for (Match match : matches) {
            if (match.inTitle()) {
                inTitles.add(match.thread().id());
            } else {
                inMessages.add(match.best());
            }
        }
        Map<String, Snippet> messages = new HashMap<>();
        Map<String, Snippet> titles = new HashMap<>();
        if (!inMessages.isEmpty()) {
            messageSnippets(expression, inMessages).forEach(s -> messages.put(s.key(), s));
        }
        if (!inTitles.isEmpty()) {
            titleSnippets(expression, inTitles).forEach(s -> titles.put(s.key(), s));
        }
        List<ThreadSearchHit> hits = new ArrayList<>(matches.size());
        for (Match match : matches) {
            Snippet snippet = match.inTitle() ? titles.get(match.thread().id()) : messages.get(match.best());
            if (match.inTitle()) {
                String text = snippet == null || snippet.text() == null ? match.thread().title() : snippet.text();
                hits.add(new ThreadSearchHit(match.thread(), SearchText.snippet(text, SNIPPET_MAX), null));
            } else if (snippet != null) {
                hits.add(new ThreadSearchHit(match.thread(), SearchText.snippet(snippet.text(), SNIPPET_MAX),
                        snippet.messageId()));
            }
        }
        return hits;
    }

    /**
     * SQLite: FTS5 MATCH expressions ({@code "lisbon"* "day in lisbon"}: a quoted term is a string, never an
     * operator; {@code *} makes it a prefix). Not ranked by bm25: its weights come from every owner's texts
     * (how rare a word is, how long texts are on average), so one owner's order would depend on what others
     * wrote. A thread scores from its own texts only: 1 per matching message, {@value #TITLE_SCORE} for a
     * matching title.
     */
    interface Sqlite extends SearchDao {
        /** What a matching title counts for, against 1 per matching message. */
        int TITLE_SCORE = 2;

        /**
         * Hot: the matching documents of both indexes, summed per thread (SQLite takes the bare columns of a
         * group from its row with the MAX: the newest matching message, else the title, which the hit shows
         * anyway), then
         * the owner's threads, best first. A match in a message reads its thread from the covering index
         * {@code parley_messages_search_thread}, never the message's row, since the ranking reads every match
         * (INDEXED BY: SQLite would take the rowid's B-tree, whose rows are the wide messages; without the index
         * the statement fails rather than slows).
         */
        String MATCHES = "WITH hits (thread_id, doc, in_title, score) AS ("
                + "SELECT m.thread_id, parley_message_search.rowid, 0, 1 "
                + "FROM parley_message_search JOIN parley_messages m INDEXED BY parley_messages_search_thread "
                + "ON m.save_order = parley_message_search.rowid "
                + "WHERE parley_message_search MATCH :expression "
                + "UNION ALL "
                + "SELECT t.id, parley_title_search.rowid, 1, " + TITLE_SCORE + " "
                + "FROM parley_title_search JOIN parley_threads t ON t.save_order = parley_title_search.rowid "
                + "WHERE parley_title_search MATCH :expression AND t.owner_id = :ownerId), "
                + "per_thread (thread_id, total, pick, doc, in_title) AS ("
                + "SELECT thread_id, SUM(score), MAX((1 - in_title) * 4611686018427387904 + doc), doc, in_title "
                + "FROM hits GROUP BY thread_id) "
                + "SELECT " + ThreadDao.COLUMNS + ", h.total, h.doc AS best, h.in_title "
                + "FROM per_thread h JOIN parley_threads t ON t.id = h.thread_id WHERE t.owner_id = :ownerId "
                + "ORDER BY h.total DESC, t.last_message_at DESC, t.id DESC LIMIT :limit OFFSET :offset";

        String MESSAGE_SNIPPETS = "SELECT parley_message_search.rowid AS snippet_key, m.id AS message_id, "
                + "snippet(parley_message_search, 0, '', '', '…', " + SNIPPET_WORDS + ") AS snippet "
                + "FROM parley_message_search JOIN parley_messages m ON m.save_order = parley_message_search.rowid "
                + "WHERE parley_message_search MATCH :expression AND parley_message_search.rowid IN (<docs>)";

        String TITLE_SNIPPETS = "SELECT t.id AS snippet_key, NULL AS message_id, snippet(parley_title_search, 0, '', '', "
                + "'…', " + SNIPPET_WORDS + ") AS snippet "
                + "FROM parley_title_search JOIN parley_threads t ON t.save_order = parley_title_search.rowid "
                + "WHERE parley_title_search MATCH :expression AND t.id IN (<threadIds>)";

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

        @Override
        @SqlQuery(TITLE_SNIPPETS)
        List<Snippet> titleSnippets(String expression, @BindList List<String> threadIds);

        @Override
        default List<Snippet> messageSnippets(String expression, List<String> bests) {
            return messageSnippetsOf(expression, bests.stream().map(Long::valueOf).toList());
        }
    }

    /**
     * PostgreSQL: a {@code tsquery} literal ({@code 'lisbon':* & 'day' <-> 'in' <-> 'lisbon'}), cast rather than
     * parsed (the vectors hold the same words, see {@link SearchText#vector}), ranked by ts_rank; snippets by
     * ts_headline with the {@code simple} configuration, plain text, of the text in the message's body.
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
                + "(array_agg(message_id ORDER BY score DESC))[1] AS best FROM hits GROUP BY thread_id) "
                + "SELECT " + ThreadDao.COLUMNS + ", h.total, h.best, h.best IS NULL AS in_title "
                + "FROM per_thread h JOIN parley_threads t ON t.id = h.thread_id WHERE t.owner_id = :ownerId "
                + "ORDER BY h.total DESC, t.last_message_at DESC, t.id DESC LIMIT :limit OFFSET :offset";

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

        @Override
        @SqlQuery(MESSAGE_SNIPPETS)
        List<Snippet> messageSnippets(String expression, @BindList("ids") List<String> bests);

        @Override
        @SqlQuery(TITLE_SNIPPETS)
        List<Snippet> titleSnippets(String expression, @BindList List<String> threadIds);
    }

    /**
     * A matching thread with its score and its best text: in its title ({@code inTitle}), or in a message, which
     * {@code best} names for {@link #messageSnippets} (SQLite: the text's FTS rowid; PostgreSQL: the message id).
     */
    record Match(ChatThread thread, double score, @Nullable String best, boolean inTitle) {
        public static final class Mapper implements RowMapper<Match> {
            private final ThreadDao.Mapper threads = new ThreadDao.Mapper();

            @Override
            public Match map(ResultSet rs, StatementContext ctx) throws SQLException {
                return new Match(threads.map(rs, ctx), rs.getDouble("total"), rs.getString("best"),
                        rs.getBoolean("in_title"));
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
