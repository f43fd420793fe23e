package dev.parley.chat.engine;

import java.util.List;

/**
 * Host actions decided per run: which actions one run may call (for example by its owner), from wherever the
 * host keeps them (the tools of MCP servers, a registry that changes while the engine runs).
 * Registered with {@link ChatEngine.Builder#hostActions(HostActionSource)}; the actions given to
 * {@link ChatEngine.Builder#hostAction(HostAction)} are offered to every run before any source's.
 *
 * <p>The engine asks once per run attempt: when the run starts, and again when a run is picked up after a
 * restart or taken over from another instance. It keeps the answer for that attempt, so the actions the model
 * was offered are the ones a call is looked up in when it runs, also after an approval waited. An action
 * whose backing tool has gone by then should fail in its handler, which the model reads as an error result.
 *
 * <p>Names: an action's {@link HostAction#spec() spec} name is what the model calls. When two sources (or a
 * source and the fixed actions) offer the same name in one run, the first one offered wins (the fixed
 * actions, then the sources in the order they were registered) and the others are left out with a warning
 * in the log; an action named like a tool the page offers for the run is left out the same way.
 */
@FunctionalInterface
public interface HostActionSource {

    /**
     * The actions {@code scope}'s run may call. Called on one of the engine's worker threads, possibly from
     * several threads at once for different runs; it may block briefly (for example to connect to a server
     * the first time), which delays the run's start.
     *
     * @return the actions, never null; empty for none
     * @throws RuntimeException if the actions cannot be found: the run is offered none of this source's
     *     actions (the failure is logged) and goes on with the rest
     */
    List<HostAction> actionsFor(HostActionScope scope);
}
