package dev.parley.chat.reduce;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.ErrorInfo;
import dev.parley.chat.model.TokenUsage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/** Runs every reducer test vector (the same files the browser client's reducer runs). */
class ReducerVectorsTest {
    static final Path VECTORS = Paths.get("src/test/resources/reducer-vectors");
    private final ChatJson json = ChatJson.shared();

    @TestFactory
    Stream<DynamicTest> everyVectorPasses() throws IOException {
        List<Path> files;
        try (Stream<Path> list = Files.list(VECTORS)) {
            files = list.filter(p -> p.toString().endsWith(".json")).sorted().collect(Collectors.toList());
        }
        assertThat(files).hasSizeGreaterThanOrEqualTo(10);
        return files.stream().map(file -> DynamicTest.dynamicTest(file.getFileName().toString(), () -> check(file)));
    }

    private void check(Path file) throws IOException {
        JsonNode vector = json.readTree(Files.readString(file));
        RunReducer reducer = new RunReducer();
        for (JsonNode event : vector.get("events")) {
            reducer.apply(json.readRunEvent(event.toString()));
        }
        JsonNode expected = vector.get("expected");

        assertThat(reducer.status().name()).as("status").isEqualTo(expected.get("status").asText());
        assertThat(reducer.lastSeq()).as("lastSeq").isEqualTo(expected.get("lastSeq").asLong());
        assertThat(reducer.error()).as("error").isEqualTo(optional(expected, "error", ErrorInfo.class));
        assertThat(reducer.usage()).as("usage").isEqualTo(optional(expected, "usage", TokenUsage.class));
        assertThat(reducer.runtimeSessionId()).as("runtimeSessionId")
                .isEqualTo(expected.has("runtimeSessionId") ? expected.get("runtimeSessionId").asText() : null);
        assertThat(reducer.guardrailsFailureReason()).as("guardrailsFailureReason")
                .isEqualTo(expected.has("guardrailsFailureReason") ? expected.get("guardrailsFailureReason").asText() : null);

        assertThat(reducer.messages()).as("messages as values")
                .isEqualTo(json.readMessages(expected.get("messages").toString()));
        assertThat(json.readTree(json.write(reducer.messages()))).as("messages as JSON")
                .isEqualTo(expected.get("messages"));
    }

    private <T> T optional(JsonNode node, String field, Class<T> type) {
        return node.has(field) ? json.convert(node.get(field), type) : null;
    }
}
