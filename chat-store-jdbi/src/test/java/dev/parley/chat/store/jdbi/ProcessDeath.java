package dev.parley.chat.store.jdbi;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.store.ChatStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;

/**
 * Simulates a host process dying: the store handed to that process's engine stops working at
 * {@link #kill()}, as if the process were gone, while the database keeps what was committed. The engine
 * itself cannot be killed from a test, so its remaining threads find a store that fails every call.
 */
final class ProcessDeath {
    private volatile boolean dead;

    /** The store as the dying process sees it. Closing it does nothing: the test closes the real store. */
    ChatStore wrap(ChatStore store) {
        return (ChatStore) Proxy.newProxyInstance(ChatStore.class.getClassLoader(), new Class<?>[] {ChatStore.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("close")) {
                        return null;
                    }
                    if (dead) {
                        throw new ChatException(ErrorCode.STORE_FAILURE, "the process is gone");
                    }
                    try {
                        return method.invoke(store, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    void kill() {
        dead = true;
    }
}
