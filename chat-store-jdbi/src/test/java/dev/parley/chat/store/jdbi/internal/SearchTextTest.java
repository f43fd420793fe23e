package dev.parley.chat.store.jdbi.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.store.SearchQuery;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The PostgreSQL vectors the store builds hold exactly the words {@code SearchQuery} cuts from the same text,
 * so a query finds what the person sees (PostgreSQL itself only casts the literal).
 */
class SearchTextTest {
    /** Letters, digits, marks, symbols, spaces, punctuation, CJK, a supplementary letter, an emoji, a NUL. */
    private static final String[] PIECES = {"a", "B", "é", "ß", "İ", "Σ", "ς", "ж", "ก", "\u0e34", "日本", "𝐀", "🙂", "1",
        "٣", "Ⅻ", "½", " ", "  ", "-", "'", ".", "/", "_", "\u0000", "\u00ad", "\t", "\u0301", "x".repeat(70)};

    @Test
    void aVectorHoldsTheWordsSearchQueryCutsFromTheSameText() {
        Random random = new Random(3);
        for (int i = 0; i < 20_000; i++) {
            StringBuilder text = new StringBuilder();
            for (int p = random.nextInt(12); p >= 0; p--) {
                text.append(PIECES[random.nextInt(PIECES.length)]);
            }
            List<String> words;
            try {
                words = SearchQuery.of(text.toString()).words();
            } catch (dev.parley.chat.ChatException noWordOrTooMany) {
                continue;
            }
            assertThat(lexemes(SearchText.vector(text.toString()))).as("%s", text).isEqualTo(words);
        }
    }

    @Test
    void positionsAreWordNumbersAndTheLiteralQuotesEachWord() {
        assertThat(SearchText.vector("Day in Lisbon, a DAY in src/lisbon.yml")).isEqualTo(
                "'day':1,5 'in':2,6 'lisbon':3,8 'a':4 'src':7 'yml':9");
        assertThat(SearchText.vector("-- ... --")).isEmpty();
        assertThat(SearchText.vector(null)).isNull();
    }

    @Test
    void aTextIsSearchableWhenItHoldsAWordAndUpToTheCap() {
        assertThat(SearchText.of("...")).isNull();
        assertThat(SearchText.of("")).isNull();
        assertThat(SearchText.of(" a ")).isEqualTo(" a ");
        String longText = "x".repeat(SearchText.MAX_CHARS - 1) + "🙂" + "y";
        assertThat(SearchText.of(longText)).hasSize(SearchText.MAX_CHARS - 1);
        assertThat(SearchText.of("y".repeat(SearchText.MAX_CHARS + 5))).hasSize(SearchText.MAX_CHARS);
    }

    @Test
    void aSnippetIsAboutSoManyWordsFromJustBeforeTheFirstMatch() {
        SearchQuery needle = SearchQuery.of("needle");
        assertThat(SearchText.around("Grilled needle, best", needle, 16)).isEqualTo("Grilled needle, best");
        String hay = "hay ".repeat(100) + "the needle is here " + "straw ".repeat(100);
        assertThat(SearchText.around(hay, needle, 16)).isEqualTo("…hay hay hay the needle is here straw straw straw "
                + "straw straw straw straw straw straw…");
        assertThat(SearchText.around("a b c d e f g h i j k l m n o p q r s t needle", needle, 16))
                .as("a match near the end shows the words before it").isEqualTo("…f g h i j k l m n o p q r s t needle");
        assertThat(SearchText.around("no match at all here", needle, 2)).isEqualTo("no match…");
        assertThat(SearchText.around("in \"tile museum\" land", SearchQuery.of("\"tile museum\""), 16))
                .isEqualTo("in \"tile museum\" land");
        assertThat(SearchText.around("...", needle, 16)).isEqualTo("...");
        assertThat(SearchText.around(null, needle, 16)).isNull();
    }

    private static List<String> lexemes(String vector) {
        List<String> lexemes = new ArrayList<>();
        for (String entry : vector.isEmpty() ? new String[0] : vector.split(" ")) {
            lexemes.add(entry.substring(1, entry.lastIndexOf("':")));
        }
        return lexemes;
    }
}
