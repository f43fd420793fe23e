package dev.parley.chat.mcp.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ToolNamesTest {

    @Test
    void aPlainNameIsServerTwoUnderscoresTool() {
        assertThat(ToolNames.name("fs", "read_text_file", Set.of())).isEqualTo("fs__read_text_file");
        assertThat(ToolNames.name("everything", "get-sum", Set.of())).isEqualTo("everything__get-sum");
    }

    @Test
    void charactersModelsRefuseBecomeUnderscores() {
        assertThat(ToolNames.name("docs", "search.pages/v2 (beta)", Set.of())).isEqualTo("docs__search_pages_v2__beta_");
    }

    @Test
    void aLongNameIsCutTo64WithAStableChecksum() {
        String tool = "x".repeat(100);
        String name = ToolNames.name("server", tool, Set.of());
        assertThat(name).hasSize(ToolNames.MAX_LENGTH).matches("server__x+_[0-9a-f]{8}");
        assertThat(ToolNames.name("server", tool, Set.of())).as("the same every listing").isEqualTo(name);
        assertThat(ToolNames.name("server", "x".repeat(99) + "y", Set.of())).as("another tool, another name")
                .isNotEqualTo(name).hasSize(ToolNames.MAX_LENGTH);
    }

    @Test
    void twoToolsThatSanitiseAlikeGetTwoNames() {
        Set<String> taken = new HashSet<>();
        String first = ToolNames.name("s", "a.b", taken);
        taken.add(first);
        String second = ToolNames.name("s", "a b", taken);
        assertThat(first).isEqualTo("s__a_b");
        assertThat(second).isNotEqualTo(first).matches("s__a_b_[0-9a-f]{8}");
    }
}
