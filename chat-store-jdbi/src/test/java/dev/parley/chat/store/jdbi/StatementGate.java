package dev.parley.chat.store.jdbi;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * A data source wrapping a real one that holds the first execution of a statement whose SQL contains a
 * fragment until the test opens the gate: a store's transaction can so be paused at a known statement,
 * with everything before it done and nothing after it. Later executions pass.
 */
final class StatementGate {
    private final String fragment;
    private final AtomicBoolean armed = new AtomicBoolean(true);
    private final CountDownLatch reached = new CountDownLatch(1);
    private final CountDownLatch open = new CountDownLatch(1);

    StatementGate(String fragment) {
        this.fragment = fragment;
    }

    /** Waits until a caller is held at the gate. */
    void awaitReached() throws InterruptedException {
        if (!reached.await(20, TimeUnit.SECONDS)) {
            throw new AssertionError("no statement containing \"" + fragment + "\" was executed");
        }
    }

    /** Lets the held caller (and every later one) go on. */
    void open() {
        open.countDown();
    }

    DataSource wrap(DataSource dataSource) {
        return proxy(DataSource.class, dataSource, null);
    }

    @SuppressWarnings("unchecked")
    private <T> T proxy(Class<T> type, T target, String sql) {
        return (T) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, (self, method, args) -> {
            if (sql != null && method.getName().startsWith("execute") && sql.contains(fragment)
                    && armed.compareAndSet(true, false)) {
                reached.countDown();
                if (!open.await(20, TimeUnit.SECONDS)) {
                    throw new AssertionError("the gate was never opened");
                }
            }
            Object result = invoke(method, target, args);
            if (result instanceof Connection) {
                return proxy(Connection.class, (Connection) result, null);
            }
            if (result instanceof PreparedStatement && args != null && args.length > 0 && args[0] instanceof String) {
                return proxy(PreparedStatement.class, (PreparedStatement) result, (String) args[0]);
            }
            return result;
        });
    }

    private static Object invoke(Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
