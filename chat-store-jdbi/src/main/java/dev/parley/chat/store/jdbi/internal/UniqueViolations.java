package dev.parley.chat.store.jdbi.internal;

import java.sql.SQLException;
import java.util.function.Predicate;

/** Reading which unique index a failed statement broke, as each driver reports it. */
final class UniqueViolations {
    private UniqueViolations() {
    }

    /**
     * True if somewhere in a failure's causes (and, for a JDBC batch, their next exceptions) is a
     * {@link SQLException} that {@code violation} recognises.
     */
    static boolean any(Throwable failure, Predicate<SQLException> violation) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException) {
                for (SQLException e = (SQLException) t; e != null; e = e.getNextException()) {
                    if (violation.test(e)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** sqlite-jdbc: {@code [SQLITE_CONSTRAINT_UNIQUE] … (UNIQUE constraint failed: t.a, t.b)}, naming the last column. */
    static boolean sqlite(SQLException e, String tableDotColumn) {
        String message = String.valueOf(e.getMessage());
        return message.contains("SQLITE_CONSTRAINT_UNIQUE") && message.contains(tableDotColumn);
    }

    /** PostgreSQL: SQLSTATE 23505 (unique_violation), its message naming the index (in any server language). */
    static boolean postgres(SQLException e, String index) {
        return "23505".equals(e.getSQLState()) && String.valueOf(e.getMessage()).contains(index);
    }
}
