package dev.parley.chaos;

import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/**
 * A SQLite data source whose disk can be "full": while {@link #full(boolean)} is set, every statement that
 * writes and every commit fails as SQLite fails on a full disk ({@code SQLITE_FULL}); reads go on. There is
 * no small filesystem to fill on this machine, so the failure is raised where the driver would raise it.
 */
final class DiskFullDataSource implements DataSource {
    private final DataSource delegate;
    private volatile boolean full;
    private final AtomicLong refused = new AtomicLong();

    DiskFullDataSource(DataSource delegate) {
        this.delegate = delegate;
    }

    void full(boolean value) {
        full = value;
    }

    /** Writes and commits refused so far. */
    long refused() {
        return refused.get();
    }

    @Override
    public Connection getConnection() throws SQLException {
        return connection(delegate.getConnection());
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return connection(delegate.getConnection(username, password));
    }

    private Connection connection(Connection real) {
        return proxy(Connection.class, real, (method, args) -> {
            if (method.getName().equals("commit")) {
                refuseIfFull();
            }
            Object result = method.invoke(real, args);
            if (result instanceof PreparedStatement statement && args != null && args.length > 0
                    && args[0] instanceof String sql) {
                Class<? extends PreparedStatement> type = statement instanceof CallableStatement
                        ? CallableStatement.class : PreparedStatement.class;
                return proxy(type, statement, (m, a) -> {
                    if (m.getName().startsWith("execute") && writes(sql)) {
                        refuseIfFull();
                    }
                    return m.invoke(statement, a);
                });
            }
            if (result instanceof Statement statement) {
                return proxy(Statement.class, statement, (m, a) -> {
                    if (m.getName().startsWith("execute") && a != null && a.length > 0 && a[0] instanceof String sql
                            && writes(sql)) {
                        refuseIfFull();
                    }
                    return m.invoke(statement, a);
                });
            }
            return result;
        });
    }

    private void refuseIfFull() throws SQLiteException {
        if (full) {
            refused.incrementAndGet();
            throw new SQLiteException("[SQLITE_FULL] Insertion failed because database is full (database or disk is full)",
                    SQLiteErrorCode.SQLITE_FULL);
        }
    }

    private static boolean writes(String sql) {
        String head = sql.stripLeading().toUpperCase(Locale.ROOT);
        return head.startsWith("INSERT") || head.startsWith("UPDATE") || head.startsWith("DELETE")
                || head.startsWith("REPLACE") || head.startsWith("WITH");
    }

    /** One call of the proxied object; {@code invoke}'s InvocationTargetException is unwrapped by the proxy. */
    @FunctionalInterface
    private interface Call {
        Object on(Method method, Object[] args) throws Exception;
    }

    private static <T> T proxy(Class<T> type, Object target, Call call) {
        InvocationHandler handler = (self, method, args) -> {
            if (method.getName().equals("unwrap") || method.getName().equals("isWrapperFor")) {
                return method.invoke(target, args);
            }
            try {
                return call.on(method, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        return type.cast(Proxy.newProxyInstance(DiskFullDataSource.class.getClassLoader(), new Class<?>[] {type}, handler));
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return delegate.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        delegate.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        delegate.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return delegate.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() {
        return Logger.getGlobal();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return delegate.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return delegate.isWrapperFor(iface);
    }
}
