package dev.parley.simulation;

import dev.parley.chat.event.AgentStreamEvent;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Everything one run of the {@link SimRuntime} sent, kept as a Bridge keeps a run's frames: every stream of the run reads from it.
 * Ends with the script, with the failure its stream reports, or none.
 */
final class Journal {
    private final List<AgentStreamEvent> items = new ArrayList<>();
    private boolean ended;
    private @Nullable Exception failure;

    synchronized int add(AgentStreamEvent item) {
        items.add(item);
        notifyAll();
        return items.size();
    }

    synchronized void end(@Nullable Exception failure) {
        this.failure = failure;
        ended = true;
        notifyAll();
    }

    synchronized @Nullable Exception failure() {
        return failure;
    }

    synchronized List<AgentStreamEvent> items() {
        return List.copyOf(items);
    }

    /** Item {@code index}, once sent; null if the run ended before it. */
    synchronized @Nullable AgentStreamEvent await(int index) throws InterruptedException {
        while (items.size() <= index && !ended) {
            wait();
        }
        return index < items.size() ? items.get(index) : null;
    }
}
