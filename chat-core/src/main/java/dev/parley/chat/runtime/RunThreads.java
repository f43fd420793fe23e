package dev.parley.chat.runtime;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Threads for work that mostly waits: reading a run's stream while the run waits days for an answer, a run's
 * start-up, an agent loop. On Java 21 and later they are virtual threads, so a waiting run holds no platform
 * thread; on Java 17 they are platform daemon threads, as before. Either way they are named
 * {@code <prefix>-1}, {@code <prefix>-2}, … . The engine's fixed pools (event delivery, timers) stay on
 * platform threads ({@link #platformFactory}), as does its batch writer.
 *
 * <p>Turn virtual threads off with the system property {@value #PROPERTY}{@code =false} (read each time a
 * factory or executor is made, so set it before the engine and adapters are built): for code that blocks
 * while holding a monitor on Java 21 to 23 (a {@code synchronized} block pins a virtual thread to its carrier
 * there; since Java 24 it no longer does), or to compare. Thread-safe; no instances.
 */
public final class RunThreads {
    /** {@code false} turns virtual threads off; unset or {@code true}, they are used where the JVM has them. */
    public static final String PROPERTY = "parley.virtualThreads";

    /**
     * {@code Thread.ofVirtual()}, {@code OfVirtual.name(String, long)}, {@code Builder.factory()} and
     * {@code Executors.newThreadPerTaskExecutor(ThreadFactory)}; null before Java 21.
     */
    private static final Method @Nullable [] LOOM = loomMethods();

    private RunThreads() {
    }

    /**
     * Whether {@link #factory} and {@link #executor} give virtual threads now: the JVM has them (Java 21+)
     * and {@value #PROPERTY} is not {@code false}.
     *
     * @throws ChatException CONFIGURATION if {@value #PROPERTY} is set to something other than true or false
     */
    public static boolean virtual() {
        String value = System.getProperty(PROPERTY);
        if (value != null && !value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
            throw ChatException.configuration("the system property " + PROPERTY + " must be true or false, not '" + value + "'");
        }
        return LOOM != null && !"false".equalsIgnoreCase(value);
    }

    /**
     * A factory of threads named {@code prefix-1}, {@code prefix-2}, …: virtual where {@link #virtual()}, else
     * platform daemon threads.
     *
     * @throws ChatException CONFIGURATION if {@code prefix} is blank
     * @throws ChatException as {@link #virtual()}
     */
    public static ThreadFactory factory(String prefix) {
        checkPrefix(prefix);
        return virtual() ? virtualFactory(prefix) : platformFactory(prefix);
    }

    /**
     * An executor for {@code prefix}'s threads: one new virtual thread per task where {@link #virtual()}, else a
     * cached pool of platform daemon threads. The caller owns it and shuts it down; {@code shutdownNow}
     * interrupts its threads.
     *
     * @throws ChatException CONFIGURATION if {@code prefix} is blank
     * @throws ChatException as {@link #virtual()}
     */
    public static ExecutorService executor(String prefix) {
        checkPrefix(prefix);
        if (!virtual()) {
            return Executors.newCachedThreadPool(platformFactory(prefix));
        }
        return (ExecutorService) invoke(Objects.requireNonNull(LOOM)[3], null, virtualFactory(prefix));
    }

    private static void checkPrefix(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        if (prefix.isBlank()) {
            throw ChatException.configuration("a thread name prefix must not be blank");
        }
    }

    /**
     * A factory of platform daemon threads named {@code prefix-1}, {@code prefix-2}, …, whatever the JVM, for
     * pools that stay on platform threads (a fixed pool, a timer).
     *
     * @throws ChatException CONFIGURATION if {@code prefix} is blank
     */
    public static ThreadFactory platformFactory(String prefix) {
        checkPrefix(prefix);
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, prefix + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    private static ThreadFactory virtualFactory(String prefix) {
        Method[] m = Objects.requireNonNull(LOOM);
        Object builder = invoke(m[1], invoke(m[0], null), prefix + "-", 1L);
        return (ThreadFactory) invoke(m[2], builder);
    }

    private static Object invoke(Method method, @Nullable Object target, Object... args) {
        try {
            return method.invoke(target, args);
        } catch (IllegalAccessException e) {
            throw new ChatException(ErrorCode.INTERNAL, "cannot call " + method, e);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw new ChatException(ErrorCode.INTERNAL, "calling " + method + " failed", cause);
        }
    }

    private static Method @Nullable [] loomMethods() {
        if (Runtime.version().feature() < 21) {
            return null;
        }
        try {
            Class<?> builder = Class.forName("java.lang.Thread$Builder");
            Class<?> ofVirtual = Class.forName("java.lang.Thread$Builder$OfVirtual");
            return new Method[] {Thread.class.getMethod("ofVirtual"), ofVirtual.getMethod("name", String.class, long.class),
                    builder.getMethod("factory"), Executors.class.getMethod("newThreadPerTaskExecutor", ThreadFactory.class)};
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }
}
