package dev.parley.chat.testing;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.store.ChatStore;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Wraps a store so that a test can cut an instance off it: {@link #kill()} makes every call fail, as
 * when a process dies with its connection pool; {@link #fail(String)} makes only the named methods fail,
 * as in a partial outage.
 */
public final class FailingStore {
    private final Set<String> failing = ConcurrentHashMap.newKeySet();
    private volatile boolean dead;
    private final ChatStore proxy;

    public FailingStore(ChatStore delegate) {
        this.proxy = InterceptedStore.of(delegate, (method, args, proceed) -> {
            if (method.equals("close")) {
                return null;
            }
            if (dead || failing.contains(method)) {
                throw new ChatException(ErrorCode.STORE_FAILURE, "the store is unreachable (" + method + ")");
            }
            return proceed.call();
        });
    }

    /** The store to hand to the engine under test. */
    public ChatStore store() {
        return proxy;
    }

    /** Every call fails from now on. */
    public void kill() {
        dead = true;
    }

    /** Calls of this method fail until {@link #heal(String)}. */
    public void fail(String method) {
        failing.add(method);
    }

    public void heal(String method) {
        failing.remove(method);
    }
}
