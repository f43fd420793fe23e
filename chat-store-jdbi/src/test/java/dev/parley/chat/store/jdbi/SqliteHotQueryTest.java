package dev.parley.chat.store.jdbi;

import dev.parley.chat.store.SearchQuery;
import dev.parley.chat.store.jdbi.internal.SearchDao;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hot reads on SQLite: {@code EXPLAIN QUERY PLAN} must SEARCH the right index (or, for the search, read
 * an FTS5 index by MATCH), never SCAN a table or sort.
 */
class SqliteHotQueryTest extends HotQueryTest {

    @TempDir
    static Path folder;

    @Override
    TestDatabase createDatabase() {
        return TestDatabase.sqliteFile(folder);
    }

    /** SQLite names the constraints of a SEARCH step in brackets: {@code USING INDEX i (a=? AND b<?)}. */
    @Override
    String indexCondition(Handle handle, HotQuery query) {
        return String.join("; ", query.bindTo(handle.createQuery("EXPLAIN QUERY PLAN " + query.sql()))
                .map((rs, ctx) -> rs.getString("detail"))
                .filter(detail -> query.indexes().stream().anyMatch(detail::contains))
                .list());
    }

    @Override
    String keyIndex(String table) {
        return "sqlite_autoindex_" + table + "_1";
    }

    @Override
    String searchSql() {
        return SearchDao.Sqlite.NEWEST_MATCHES;
    }

    @Override
    List<String> searchIndexes() {
        return List.of("parley_message_search");
    }

    @Override
    Map<String, Object> searchBinds(SearchQuery query) {
        return Map.of("expression", SearchDao.Sqlite.matchExpression(query, "alice"), "ownerId", "alice", "window", 84);
    }

    /** FTS5 hands out the matches in rowid order: no sort. */
    @Override
    boolean searchMaySort() {
        return false;
    }

    /**
     * A step must read the query's index: {@code SEARCH <table or alias> USING [COVERING] INDEX <index> (…)}, or
     * for a full-text index {@code SCAN <fts table> VIRTUAL TABLE INDEX n:…M…} (FTS5 marks a MATCH with M). A
     * SCAN of anything else is a full scan, unless it is one of the query's own intermediate results.
     */
    @Override
    List<String> planProblems(Handle handle, HotQuery query) {
        List<String> plan = query.bindTo(handle.createQuery("EXPLAIN QUERY PLAN " + query.sql()))
                .map((rs, ctx) -> rs.getString("detail"))
                .list();
        System.out.printf("EXPLAIN QUERY PLAN %s%n  -> %s%n", query.sql(), plan);
        List<String> problems = new ArrayList<>();
        List<Pattern> wanted = new ArrayList<>();
        if (query.indexes().isEmpty()) {
            wanted.add(Pattern.compile("SEARCH " + query.table() + " USING (INTEGER )?PRIMARY KEY \\(.*"));
        }
        for (String index : query.indexes()) {
            wanted.add(Pattern.compile("SEARCH \\S+ USING (COVERING )?INDEX " + index + " \\(.*"));
            wanted.add(Pattern.compile("SCAN " + index + " VIRTUAL TABLE INDEX \\d+:\\S*M.*"));
        }
        if (plan.stream().noneMatch(line -> wanted.stream().anyMatch(p -> p.matcher(line).matches()))) {
            problems.add("no step " + wanted);
        }
        for (String line : plan) {
            boolean fullText = FULL_TEXT.matcher(line).matches();
            if (line.startsWith("SCAN ") && !fullText && !query.scansAllowed().contains(line.split(" ")[1])) {
                problems.add("a full scan: " + line);
            }
            if (line.contains("TEMP B-TREE") && !query.sortAllowed()) {
                problems.add("a sort: " + line);
            }
        }
        if (!problems.isEmpty()) {
            problems.add("plan: " + plan);
        }
        return problems;
    }

    private static final Pattern FULL_TEXT = Pattern.compile("SCAN \\S+ VIRTUAL TABLE INDEX \\d+:\\S*M.*");
}
