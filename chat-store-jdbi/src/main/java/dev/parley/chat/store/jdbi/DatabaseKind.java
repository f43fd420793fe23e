package dev.parley.chat.store.jdbi;

/**
 * The databases {@link JdbiChatStore} runs on. The kind is detected from the JDBC driver's
 * {@link java.sql.DatabaseMetaData#getDatabaseProductName() product name}; anything else is refused.
 */
public enum DatabaseKind {
    /** A SQLite file (driver {@code org.xerial:sqlite-jdbc}): one host process, the embedded default. */
    SQLITE("SQLite"),
    /** PostgreSQL (driver {@code org.postgresql:postgresql}): one or many host instances. */
    POSTGRESQL("PostgreSQL");

    private final String productName;

    DatabaseKind(String productName) {
        this.productName = productName;
    }

    /** The product name the JDBC driver reports for this database. */
    public String productName() {
        return productName;
    }
}
