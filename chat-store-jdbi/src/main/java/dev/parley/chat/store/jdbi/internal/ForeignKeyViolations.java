package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.ChatException;
import java.sql.SQLException;
import java.util.function.Function;
import java.util.function.Supplier;

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

    /**
     * Runs a single write whose row belongs to a thread or run: its foreign key failing (the thread or run
     * is gone) becomes {@code notFound}'s exception, NOT_FOUND with the violation as its cause; any other
     * failure passes as it is.
     */
    public static <T> T asNotFound(Supplier<T> write, Function<Throwable, ChatException> notFound) {
        try {
            return write.get();
        } catch (ChatException e) {
            if (any(e)) {
                throw notFound.apply(e);
            }
            throw e;
        }
    }

    private static boolean isViolation(SQLException e) {
        return "23503".equals(e.getSQLState()) || String.valueOf(e.getMessage()).contains("SQLITE_CONSTRAINT_FOREIGNKEY");
    }
}
