package dev.parley.chat.store.jdbi.internal;

/** Reading whether the database failed a statement to break a deadlock between two transactions. */
public final class Deadlocks {
    private Deadlocks() {
    }

    /** True if somewhere in a failure's causes is PostgreSQL's deadlock_detected (SQLSTATE 40P01). */
    public static boolean any(Throwable failure) {
        return UniqueViolations.any(failure, e -> "40P01".equals(e.getSQLState()));
    }
}
