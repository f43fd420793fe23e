package dev.parley.chat.engine.internal;

import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionScope;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.HostToolSpec;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The tools of one run whose results the host side supplies — the host's actions (its own, MCP tools) and the
 * tools the person's browser runs — and where each call of one starts its {@link ToolCallFlow}. Thread-safe.
 */
final class ToolRunner {
    private final EngineContext ctx;
    private final ActiveRun run;
    /** The tools the person's browser runs for this run, by name. */
    private final Map<String, HostToolSpec> clientTools;

    /** The run's host actions, asked of the engine's sources once for this attempt (see {@link #hostActions}). */
    private final HostActionScope scope;
    private volatile @Nullable Map<String, HostAction> hostActions;

    ToolRunner(EngineContext ctx, ActiveRun run, List<HostToolSpec> clientTools, HostActionScope scope) {
        this.ctx = ctx;
        this.run = run;
        Map<String, HostToolSpec> byName = new LinkedHashMap<>();
        clientTools.forEach(tool -> byName.put(tool.name(), tool));
        this.clientTools = Map.copyOf(byName);
        this.scope = scope;
    }

    /**
     * The host actions of this run attempt, by name: found the first time they are needed (offered to the
     * runtime, or looked up after a restart) and kept, so that a call runs the action its model was offered.
     * Where the runtime cannot call host tools, the sources are not asked (nothing is offered to it; the
     * fixed actions still tell a restart which calls were the host's, as before sources existed).
     */
    Map<String, HostAction> hostActions() {
        Map<String, HostAction> known = hostActions;
        if (known == null) {
            synchronized (this) {
                known = hostActions;
                if (known == null) {
                    known = ctx.can(Capability.HOST_TOOLS) ? ctx.hostActions.resolve(scope, clientTools.keySet())
                            : ctx.hostActions.fixed();
                    hostActions = known;
                }
            }
        }
        return known;
    }

    /** True if the person's browser runs tool {@code name} for this run. */
    boolean isClientTool(String name) {
        return clientTools.containsKey(name);
    }

    /** The client tools, for the runtime's request. */
    Collection<HostToolSpec> clientTools() {
        return clientTools.values();
    }

    /**
     * The agent finished calling {@code call}: a client tool or a host action starts its {@link ToolCallFlow};
     * other tools are the runtime's own.
     */
    void called(ActionExecutionMessage call) {
        HostToolSpec clientTool = clientTools.get(call.name());
        if (clientTool != null) {
            ToolCallFlow.clientTool(ctx, run, call, clientTool).start();
            return;
        }
        HostAction action = hostActions().get(call.name());
        if (action != null) {
            ToolCallFlow.hostAction(ctx, run, call, action).start();
        }
    }

    /**
     * After a restart: the approval the engine asked before the host stopped is still pending; it is waited
     * for again (nothing is asked again), and the action runs once it is allowed.
     *
     * @return false if {@code call} is not a host action this engine knows
     */
    boolean awaitApprovalAgain(ActionExecutionMessage call) {
        HostAction action = hostActions().get(call.name());
        if (action == null) {
            return false;
        }
        ToolCallFlow.hostAction(ctx, run, call, action).awaitApprovalAgain();
        return true;
    }
}
