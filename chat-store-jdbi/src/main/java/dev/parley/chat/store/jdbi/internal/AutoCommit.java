package dev.parley.chat.store.jdbi.internal;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * The store owns its transactions whatever the host's pool defaults to. A pool with auto-commit off (a
 * common JPA setting: {@code spring.datasource.hikari.auto-commit=false}) hands out connections that are
 * "in a transaction" already: Jdbi would then neither begin nor commit, and the pool rolls back what is
 * uncommitted when the connection comes back, so writes (and {@code pg_notify}) would be lost without an
 * error. So every connection the store takes is switched to auto-commit, and switched back before it is
 * given back, so that the host's next borrower finds the pool's setting.
 */
public final class AutoCommit {
    private AutoCommit() {
    }

    /**
     * Turns auto-commit on (a connection fresh from a pool holds no uncommitted work; a connection taking
     * part in a host's transaction, from a transaction-aware proxy, is not one to give the store).
     *
     * @return true if auto-commit was off, so {@link #restore} must turn it off again
     */
    public static boolean switchOn(Connection connection) throws SQLException {
        if (connection.getAutoCommit()) {
            return false;
        }
        connection.setAutoCommit(true);
        return true;
    }

    /** Turns auto-commit off again if {@link #switchOn} turned it on. */
    public static void restore(Connection connection, boolean switched) throws SQLException {
        if (switched) {
            connection.setAutoCommit(false);
        }
    }
}
