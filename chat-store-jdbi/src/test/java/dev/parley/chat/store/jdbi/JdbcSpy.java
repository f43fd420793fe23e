package dev.parley.chat.store.jdbi;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * A data source wrapping a real one that counts the JDBC calls a store makes (what reaches the driver,
 * hence the database), and the rows the driver hands over ({@code ResultSet.row}: each {@code next()} that
 * found one), and can pretend to be another database product.
 */
final class JdbcSpy {
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    private final String productName;

    private JdbcSpy(String productName) {
        this.productName = productName;
    }

    /** Counts calls on connections and prepared statements. */
    static JdbcSpy counting() {
        return new JdbcSpy(null);
    }

    /** Reports {@code productName} as the database product; everything else is the real database. */
    static JdbcSpy pretendingToBe(String productName) {
        return new JdbcSpy(productName);
    }

    int count(String call) {
        AtomicInteger count = calls.get(call);
        return count == null ? 0 : count.get();
    }

    Map<String, AtomicInteger> calls() {
        return calls;
    }

    void reset() {
        calls.clear();
    }

    DataSource wrap(DataSource dataSource) {
        return proxy(DataSource.class, dataSource, "");
    }

    @SuppressWarnings("unchecked")
    private <T> T proxy(Class<T> type, T target, String prefix) {
        return (T) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, (self, method, args) -> {
            calls.computeIfAbsent(prefix + method.getName(), k -> new AtomicInteger()).incrementAndGet();
            if (productName != null && method.getName().equals("getDatabaseProductName")) {
                return productName;
            }
            Object result = invoke(method, target, args);
            if (prefix.equals("ResultSet.") && method.getName().equals("next") && Boolean.TRUE.equals(result)) {
                calls.computeIfAbsent("ResultSet.row", k -> new AtomicInteger()).incrementAndGet();
            }
            if (result instanceof ResultSet && method.getReturnType() == ResultSet.class) {
                return proxy(ResultSet.class, (ResultSet) result, "ResultSet.");
            }
            if (result instanceof Connection) {
                return proxy(Connection.class, (Connection) result, "Connection.");
            }
            if (result instanceof PreparedStatement) {
                return proxy(PreparedStatement.class, (PreparedStatement) result, "PreparedStatement.");
            }
            if (result instanceof DatabaseMetaData) {
                return proxy(DatabaseMetaData.class, (DatabaseMetaData) result, "DatabaseMetaData.");
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
