package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.store.SearchQuery;
import dev.parley.chat.store.jdbi.internal.SearchDao;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * The hot reads on PostgreSQL, planned with real statistics (ANALYZE, no {@code enable_seqscan = off}):
 * every node reading {@code parley_*} must be an index scan (or a bitmap scan) on the right index; no
 * sequential scan, no sort where the index gives the order.
 */
class PostgresHotQueryTest extends HotQueryTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Override
    TestDatabase createDatabase() {
        return TestDatabase.postgres();
    }

    @Override
    String keyIndex(String table) {
        return table + "_pkey";
    }

    @Override
    String searchSql() {
        return SearchDao.Postgres.RECENT_MATCHES;
    }

    @Override
    List<String> searchIndexes() {
        return List.of("parley_messages_search_newest");
    }

    @Override
    Map<String, Object> searchBinds(SearchQuery query) {
        return Map.of("expression", SearchDao.Postgres.tsquery(query), "ownerId", "alice", "window", 84,
                "budget", 84 * SearchDao.Postgres.BUDGET_PER_MATCH);
    }

    /** The recent texts' matches are sorted (a CTE's rows, few); the older ones come from the GIN index, unordered. */
    @Override
    boolean searchMaySort() {
        return true;
    }

    /**
     * A rare query's older matches come from the GIN index (the owner is no index condition there, so the
     * planner cannot walk the owner's texts instead); the check is not vacuous: without the GIN index
     * PostgreSQL reads the messages whole.
     */
    @Test
    @Order(5)
    void aRareQuerysOlderMatchesComeFromTheGinIndex() {
        HotQuery search = new HotQuery(SearchDao.Postgres.OLDER_MATCHES, Map.of("expression", "'answer':* & '4242':*",
                "ownerId", "alice", "boundary", Long.MAX_VALUE, "window", 84), Map.of(), "parley_messages",
                List.of("parley_messages_search"), true);
        assertPlanUsesIndex(search);
        direct.useHandle(h -> h.execute("DROP INDEX parley_messages_search"));
        try {
            List<String> problems = direct.withHandle(h -> planProblems(h, search));
            assertThat(problems).isNotEmpty();
        } finally {
            direct.useHandle(h -> h.execute("CREATE INDEX parley_messages_search ON parley_messages "
                    + "USING GIN (search_vector) WHERE search_vector IS NOT NULL"));
        }
    }

    /** The {@code Index Cond} of the plan nodes that read the query's indexes. */
    @Override
    String indexCondition(Handle handle, HotQuery query) {
        List<String> conditions = new ArrayList<>();
        collectIndexConditions(plan(handle, query), query, conditions);
        return String.join("; ", conditions);
    }

    private static void collectIndexConditions(JsonNode node, HotQuery query, List<String> conditions) {
        if (query.indexes().contains(node.path("Index Name").asText())) {
            conditions.add(node.path("Index Cond").asText(""));
        }
        for (JsonNode child : node.path("Plans")) {
            collectIndexConditions(child, query, conditions);
        }
    }

    private static JsonNode plan(Handle handle, HotQuery query) {
        String explained = query.bindTo(handle.createQuery("EXPLAIN (FORMAT JSON) " + query.sql()))
                .mapTo(String.class)
                .one();
        try {
            return JSON.readTree(explained).get(0).get("Plan");
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    List<String> planProblems(Handle handle, HotQuery query) {
        JsonNode plan = plan(handle, query);
        List<String> wanted = query.indexes().isEmpty() ? List.of(query.table() + "_pkey") : query.indexes();
        List<String> problems = new ArrayList<>();
        List<String> usedIndexes = new ArrayList<>();
        List<String> nodes = new ArrayList<>();
        walk(plan, query, problems, usedIndexes, nodes);
        System.out.printf("EXPLAIN %s%n  -> %s%n", query.sql(), nodes);
        if (usedIndexes.stream().noneMatch(wanted::contains)) {
            problems.add(query.table() + " is not read through " + wanted + " (indexes used: " + usedIndexes + ")");
        }
        if (!problems.isEmpty()) {
            problems.add("plan: " + plan);
        }
        return problems;
    }

    private static void walk(JsonNode node, HotQuery query, List<String> problems, List<String> usedIndexes,
            List<String> nodes) {
        String type = node.path("Node Type").asText();
        String relation = node.path("Relation Name").asText("");
        nodes.add(type + (node.has("Index Name") ? " using " + node.get("Index Name").asText() : "")
                + (relation.isEmpty() ? "" : " on " + relation));
        if (type.equals("Seq Scan") && relation.startsWith("parley_")) {
            problems.add("a sequential scan of " + relation);
        }
        if (type.equals("Sort") && !query.sortAllowed()) {
            problems.add("a sort");
        }
        if (node.has("Index Name") && (relation.equals(query.table()) || type.equals("Bitmap Index Scan"))) {
            usedIndexes.add(node.get("Index Name").asText());
        }
        for (JsonNode child : node.path("Plans")) {
            walk(child, query, problems, usedIndexes, nodes);
        }
    }
}
