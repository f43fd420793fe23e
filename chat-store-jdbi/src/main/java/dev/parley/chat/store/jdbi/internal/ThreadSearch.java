package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.model.ChatThread;
import dev.parley.chat.store.SearchQuery;
import dev.parley.chat.store.ThreadSearchHit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A page of an owner's threads matching a search, in the order {@code ChatStore.searchThreads} promises: the
 * threads with a matching message, the one whose newest matching message was saved last first; then the
 * threads only whose title matches, newest activity first. A hit's snippet comes from its thread's newest
 * matching message, or from the title where no message matches.
 *
 * <p>Cost: the index hands out the owner's matching messages newest first, and the search reads only as many
 * as it takes to see {@code offset + limit} threads ({@link SearchDao#newestMatches}, with a window that
 * starts at {@value #WINDOW_PER_THREAD} matches per thread wanted and grows fourfold while it falls short).
 * The first page therefore costs what its threads' newest matches cost, not what every match would; a page
 * further on costs what the pages before it do. The title-only threads are read once every matching message
 * has been seen, that is only on the page after the last message hit.
 */
final class ThreadSearch {
    /** The first window, in matching messages per thread wanted. */
    static final int WINDOW_PER_THREAD = 16;
    private static final int MIN_WINDOW = 64;
    private static final int MAX_WINDOW = 1 << 28;

    private final SearchDao dao;

    ThreadSearch(SearchDao dao) {
        this.dao = dao;
    }

    /**
     * The owner's threads matching the query, in the order above, skipping {@code offset}, at most
     * {@code limit}. A hit whose thread or best message was deleted while the page was put together is left out.
     */
    List<ThreadSearchHit> search(String ownerId, SearchQuery query, int offset, int limit) {
        String expression = dao.expression(query, ownerId);
        long wanted = (long) offset + limit;
        Map<String, String> newestByThread = new LinkedHashMap<>();
        int window = (int) Math.min(MAX_WINDOW, Math.max(MIN_WINDOW, wanted * WINDOW_PER_THREAD));
        boolean seenAll;
        while (true) {
            List<SearchDao.Match> matches = dao.newestMatches(expression, ownerId, window);
            newestByThread.clear();
            for (SearchDao.Match match : matches) {
                newestByThread.putIfAbsent(match.threadId(), match.best());
            }
            seenAll = matches.size() < window;
            if (seenAll || newestByThread.size() >= wanted || window == MAX_WINDOW) {
                break;
            }
            window = (int) Math.min(MAX_WINDOW, (long) window * 4);
        }
        List<String> order = new ArrayList<>(newestByThread.keySet());
        Map<String, ChatThread> threads = new HashMap<>();
        if (seenAll && order.size() < wanted) {
            for (ChatThread thread : dao.titleMatches(expression, ownerId)) {
                if (!newestByThread.containsKey(thread.id())) {
                    order.add(thread.id());
                    threads.put(thread.id(), thread);
                }
            }
        }
        if (offset >= order.size()) {
            return List.of();
        }
        List<String> page = order.subList(offset, (int) Math.min(order.size(), wanted));
        List<String> toRead = page.stream().filter(id -> !threads.containsKey(id)).toList();
        if (!toRead.isEmpty()) {
            dao.threads(toRead).forEach(thread -> threads.put(thread.id(), thread));
        }
        return hits(expression, query, page, threads, newestByThread);
    }

    private List<ThreadSearchHit> hits(String expression, SearchQuery query, List<String> page, Map<String, ChatThread> threads,
            Map<String, String> newestByThread) {
        List<String> inMessages = new ArrayList<>();
        List<String> inTitles = new ArrayList<>();
        for (String threadId : page) {
            String best = newestByThread.get(threadId);
            if (best == null) {
                inTitles.add(threadId);
            } else {
                inMessages.add(best);
            }
        }
        Map<String, SearchDao.Snippet> messages = new HashMap<>();
        Map<String, SearchDao.Snippet> titles = new HashMap<>();
        if (!inMessages.isEmpty()) {
            dao.messageSnippets(expression, query, inMessages).forEach(s -> messages.put(s.key(), s));
        }
        if (!inTitles.isEmpty()) {
            dao.titleSnippets(expression, query, inTitles).forEach(s -> titles.put(s.key(), s));
        }
        List<ThreadSearchHit> hits = new ArrayList<>(page.size());
        for (String threadId : page) {
            ChatThread thread = threads.get(threadId);
            String best = newestByThread.get(threadId);
            if (thread == null) {
                continue;
            }
            if (best == null) {
                SearchDao.Snippet snippet = titles.get(threadId);
                String text = snippet == null || snippet.text() == null ? thread.title() : snippet.text();
                hits.add(new ThreadSearchHit(thread, SearchText.snippet(text, SearchDao.SNIPPET_MAX), null));
            } else {
                SearchDao.Snippet snippet = messages.get(best);
                if (snippet != null) {
                    hits.add(new ThreadSearchHit(thread, SearchText.snippet(snippet.text(), SearchDao.SNIPPET_MAX),
                            snippet.messageId()));
                }
            }
        }
        return hits;
    }
}
