package dev.parley.chat.store.jdbi;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.io.TempDir;

/** The hot reads on SQLite: {@code EXPLAIN QUERY PLAN} must SEARCH the right index, never SCAN or sort. */
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
    List<String> planProblems(Handle handle, HotQuery query) {
        List<String> plan = query.bindTo(handle.createQuery("EXPLAIN QUERY PLAN " + query.sql()))
                .map((rs, ctx) -> rs.getString("detail"))
                .list();
        System.out.printf("EXPLAIN QUERY PLAN %s%n  -> %s%n", query.sql(), plan);
        List<String> problems = new ArrayList<>();
        List<String> wanted = new ArrayList<>();
        if (query.indexes().isEmpty()) {
            wanted.add("SEARCH " + query.table() + " USING PRIMARY KEY (");
        }
        for (String index : query.indexes()) {
            wanted.add("SEARCH " + query.table() + " USING INDEX " + index + " (");
            wanted.add("SEARCH " + query.table() + " USING COVERING INDEX " + index + " (");
        }
        if (plan.stream().noneMatch(line -> wanted.stream().anyMatch(line::startsWith))) {
            problems.add("no step " + wanted);
        }
        for (String line : plan) {
            if (line.startsWith("SCAN ")) {
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
}
