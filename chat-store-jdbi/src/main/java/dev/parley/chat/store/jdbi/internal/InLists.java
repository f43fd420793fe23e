package dev.parley.chat.store.jdbi.internal;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;

/** Long id lists cut into {@code IN (…)} lists short enough to bind. */
final class InLists {
    /** How many ids one {@code IN (…)} list binds at most; longer collections are read in chunks. */
    static final int MAX = 500;

    private InLists() {
    }

    /** The distinct ids, in their first order, in chunks of at most {@link #MAX}. */
    static List<List<String>> chunks(Collection<String> ids) {
        List<String> distinct = new ArrayList<>(new LinkedHashSet<>(ids));
        List<List<String>> chunks = new ArrayList<>();
        for (int from = 0; from < distinct.size(); from += MAX) {
            chunks.add(distinct.subList(from, Math.min(distinct.size(), from + MAX)));
        }
        return chunks;
    }
}
