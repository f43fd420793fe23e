package dev.parley.chat.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a person types, read as words and phrases; and where such a query matches in a text, for marking it. */
class SearchQueryTest {

    private static List<String> marked(String query, String text) {
        return SearchQuery.of(query).matchesIn(text).stream().map(r -> text.substring(r.start(), r.end())).toList();
    }

    @Test
    void operatorsAndPunctuationAreSeparatorsAndQuotedWordsArePhrases() {
        SearchQuery query = SearchQuery.of("Lisbon AND \"day in Lisbon\" -museum* \"tile\"");
        assertThat(query.words()).containsExactly("tile", "lisbon", "and", "museum");
        assertThat(query.phrases()).containsExactly("day in lisbon");
        assertThatThrownBy(() -> SearchQuery.of("\" * -"))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT));
    }

    @Test
    void aWordMarksEveryWordItBeginsWhateverItsCase() {
        assertThat(marked("lisb", "Lisbon, then LISBOA; not Alisbon."))
                .containsExactly("Lisbon", "LISBOA");
        assertThat(marked("museum tile", "The tile museum (museums) opens")).containsExactly("tile", "museum", "museums");
    }

    @Test
    void aPhraseMarksItsWordsWhereTheyOccurInOrderOnly() {
        String text = "A day in Lisbon, and Lisbon in a day.";
        List<SearchQuery.TextRange> ranges = SearchQuery.of("\"day in lisbon\"").matchesIn(text);
        assertThat(ranges).extracting(r -> text.substring(r.start(), r.end())).containsExactly("day", "in", "Lisbon");
        assertThat(ranges.get(0).start()).isEqualTo(2);
        assertThat(marked("\"lisbon day\"", text)).isEmpty();
    }

    @Test
    void rangesAreInOrderWithoutOverlapsAndNothingMatchesInAnEmptyText() {
        List<SearchQuery.TextRange> ranges = SearchQuery.of("lis \"lisbon day\" day").matchesIn("lisbon day lisbon");
        assertThat(ranges).extracting(SearchQuery.TextRange::start).containsExactly(0, 7, 11);
        assertThat(SearchQuery.of("lisbon").matchesIn("")).isEmpty();
        assertThat(marked("zür", "nach Zürich")).containsExactly("Zürich");
        assertThatThrownBy(() -> new SearchQuery.TextRange(3, 3)).isInstanceOf(IllegalArgumentException.class);
    }
}
