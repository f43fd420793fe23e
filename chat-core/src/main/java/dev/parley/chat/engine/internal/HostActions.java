package dev.parley.chat.engine.internal;

import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionScope;
import dev.parley.chat.engine.HostActionSource;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's host actions: the fixed ones, offered to every run, and the sources asked per run. See
 * {@link HostActionSource} for the rules (first name wins, a failing source offers nothing).
 */
public final class HostActions {
    private static final Logger log = LoggerFactory.getLogger(HostActions.class);

    private final Map<String, HostAction> fixed;
    private final List<HostActionSource> sources;

    public HostActions(Map<String, HostAction> fixed, List<HostActionSource> sources) {
        this.fixed = Map.copyOf(fixed);
        this.sources = List.copyOf(sources);
    }

    /** The fixed actions, by name. */
    public Map<String, HostAction> fixed() {
        return fixed;
    }

    /** True if any action is registered, or any source that may offer some. */
    public boolean any() {
        return !fixed.isEmpty() || !sources.isEmpty();
    }

    /** The actions of one run attempt, by name, in the order offered; names in {@code clientTools} are left out. */
    Map<String, HostAction> resolve(HostActionScope scope, Set<String> clientTools) {
        if (sources.isEmpty()) {
            return fixed;
        }
        Map<String, HostAction> resolved = new LinkedHashMap<>(fixed);
        for (HostActionSource source : sources) {
            List<HostAction> offered;
            try {
                offered = source.actionsFor(scope);
            } catch (RuntimeException e) {
                log.warn("Run {}: a host action source failed; the run is offered none of its actions", scope.runId(), e);
                continue;
            }
            add(scope, offered == null ? List.of() : offered, clientTools, resolved);
        }
        return Collections.unmodifiableMap(resolved);
    }

    private static void add(HostActionScope scope, Collection<HostAction> offered, Set<String> clientTools,
            Map<String, HostAction> resolved) {
        for (HostAction action : offered) {
            String name = action.spec().name();
            if (clientTools.contains(name)) {
                log.warn("Run {}: host action {} is left out: the page offers a tool of that name", scope.runId(), name);
            } else if (resolved.putIfAbsent(name, action) != null) {
                log.warn("Run {}: host action {} is offered twice; the first one is kept", scope.runId(), name);
            }
        }
    }
}
