package dev.parley.chat.store.jdbi.internal;

import java.sql.SQLException;

/**
 * Reading whether a failed statement broke a foreign key (a row of a thread or run that does not exist,
 * migration V7), as each driver reports it.
 */
public final class ForeignKeyViolations {
    private ForeignKeyViolations() {
    }

    /**
     * True if somewhere in a failure's causes is a foreign key violation: sqlite-jdbc's
     * {@code [SQLITE_CONSTRAINT_FOREIGNKEY]}, PostgreSQL's SQLSTATE 23503.
     */
    public static boolean any(Throwable failure) {
        return UniqueViolations.any(failure, ForeignKeyViolations::isViolation);
    }

    private static boolean isViolation(SQLException e) {
        return "23503".equals(e.getSQLState()) || String.valueOf(e.getMessage()).contains("SQLITE_CONSTRAINT_FOREIGNKEY");
    }
}
