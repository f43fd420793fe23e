package dev.parley.chat.testing;

import dev.parley.chat.runtime.RunThreads;
import java.lang.reflect.Method;

/**
 * Which kind of thread the tests expect from {@code RunThreads}, worked out apart from it. The normal test run
 * is on Java 17 (platform threads); the modules' {@code java-25} Surefire execution runs on a JDK 21+ and sets
 * {@value #EXPECT_VIRTUAL}, so that its tests insist on virtual threads (and fail with the switch off).
 */
public final class ThreadKinds {
    /** Set to {@code true} by the Java 25 executions. */
    public static final String EXPECT_VIRTUAL = "parley.test.expectVirtualThreads";

    private ThreadKinds() {
    }

    /** Whether this JVM's run threads should be virtual. */
    public static boolean expectVirtual() {
        int feature = Runtime.version().feature();
        if (Boolean.getBoolean(EXPECT_VIRTUAL)) {
            if (feature < 21) {
                throw new AssertionError("the execution that expects virtual threads runs on Java " + feature
                        + "; point -Dparley.jdk25.home at a JDK 21 or newer");
            }
            return true;
        }
        return feature >= 21 && !"false".equalsIgnoreCase(System.getProperty(RunThreads.PROPERTY));
    }

    /** {@code Thread.isVirtual()}, false where the JVM has no virtual threads. */
    public static boolean isVirtual(Thread thread) {
        try {
            Method isVirtual = Thread.class.getMethod("isVirtual");
            return (Boolean) isVirtual.invoke(thread);
        } catch (NoSuchMethodException e) {
            return false;
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }
}
