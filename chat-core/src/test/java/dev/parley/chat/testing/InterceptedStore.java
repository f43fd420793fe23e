package dev.parley.chat.testing;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.store.ChatStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiPredicate;
import org.jspecify.annotations.Nullable;

/** A real store with a test's hand on every call: to count calls, fail them, or answer some itself. */
public final class InterceptedStore {
    private InterceptedStore() {
    }

    /** Decides one call: {@code proceed.call()} makes it on the real store. */
    @FunctionalInterface
    public interface Interceptor {
        @Nullable Object intercept(String method, @Nullable Object[] args, Callable<@Nullable Object> proceed)
                throws Exception;
    }

    /** The store the engine under test gets; the real store's exceptions pass through unchanged. */
    public static ChatStore of(ChatStore delegate, Interceptor interceptor) {
        return (ChatStore) Proxy.newProxyInstance(ChatStore.class.getClassLoader(), new Class<?>[] {ChatStore.class},
                (proxy, method, args) -> interceptor.intercept(method.getName(), args, () -> call(delegate, method, args)));
    }

    /**
     * As {@link #of}; the store also keeps the delegate's other interfaces (such as {@code AttachmentStore}), whose
     * calls go through {@code interceptor} too.
     */
    public static ChatStore withExtensions(ChatStore delegate, Interceptor interceptor) {
        java.util.Set<Class<?>> interfaces = new java.util.LinkedHashSet<>();
        for (Class<?> type = delegate.getClass(); type != null; type = type.getSuperclass()) {
            interfaces.addAll(java.util.List.of(type.getInterfaces()));
        }
        interfaces.add(ChatStore.class);
        return (ChatStore) Proxy.newProxyInstance(ChatStore.class.getClassLoader(), interfaces.toArray(new Class<?>[0]),
                (proxy, method, args) -> interceptor.intercept(method.getName(), args, () -> call(delegate, method, args)));
    }

    /**
     * The store whose next call that {@code matches} takes effect but fails as if its answer was lost on the
     * way back (the commit happened; the caller gets STORE_FAILURE). Once, while {@code armed} is set: it is
     * cleared when the fault is injected, so a test can arm it later and see that it happened.
     */
    public static ChatStore losingTheAnswerOnce(ChatStore delegate, AtomicBoolean armed,
            BiPredicate<String, @Nullable Object[]> matches) {
        return of(delegate, (method, args, proceed) -> {
            Object result = proceed.call();
            if (matches.test(method, args) && armed.getAndSet(false)) {
                throw new ChatException(ErrorCode.STORE_FAILURE, "injected: the commit's answer was lost");
            }
            return result;
        });
    }

    private static @Nullable Object call(ChatStore delegate, Method method, @Nullable Object[] args) throws Exception {
        try {
            return method.invoke(delegate, args);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw (Exception) e.getCause();
        }
    }
}
