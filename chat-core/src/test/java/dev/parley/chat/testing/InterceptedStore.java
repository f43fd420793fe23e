package dev.parley.chat.testing;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.attachment.AttachmentStore;
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

    /**
     * The store the engine under test gets; the real store's exceptions pass through unchanged. It keeps no
     * attachments, whatever the real store does (see {@link #keepingAttachments}).
     */
    public static ChatStore of(ChatStore delegate, Interceptor interceptor) {
        return proxy(delegate, interceptor, ChatStore.class);
    }

    /**
     * As {@link #of}, but an {@link AttachmentStore} too when the real store is one: the interceptor sees its
     * attachment calls as well.
     */
    public static ChatStore keepingAttachments(ChatStore delegate, Interceptor interceptor) {
        return delegate instanceof AttachmentStore ? proxy(delegate, interceptor, ChatStore.class, AttachmentStore.class)
                : of(delegate, interceptor);
    }

    /**
     * As {@link #of}, but an {@link dev.parley.chat.outbox.OutboxStore} too when the real store is one: the
     * interceptor sees its outbox calls as well.
     */
    public static ChatStore keepingOutbox(ChatStore delegate, Interceptor interceptor) {
        return delegate instanceof dev.parley.chat.outbox.OutboxStore
                ? proxy(delegate, interceptor, ChatStore.class, dev.parley.chat.outbox.OutboxStore.class)
                : of(delegate, interceptor);
    }

    /**
     * As {@link #of}, but also every other store capability the real store has ({@link AttachmentStore},
     * {@link dev.parley.chat.outbox.OutboxStore}): the interceptor sees those calls as well.
     */
    public static ChatStore keepingEverything(ChatStore delegate, Interceptor interceptor) {
        java.util.List<Class<?>> kinds = new java.util.ArrayList<>(java.util.List.of(ChatStore.class));
        if (delegate instanceof AttachmentStore) {
            kinds.add(AttachmentStore.class);
        }
        if (delegate instanceof dev.parley.chat.outbox.OutboxStore) {
            kinds.add(dev.parley.chat.outbox.OutboxStore.class);
        }
        return proxy(delegate, interceptor, kinds.toArray(Class<?>[]::new));
    }

    private static ChatStore proxy(ChatStore delegate, Interceptor interceptor, Class<?>... kinds) {
        return (ChatStore) Proxy.newProxyInstance(ChatStore.class.getClassLoader(), kinds,
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
