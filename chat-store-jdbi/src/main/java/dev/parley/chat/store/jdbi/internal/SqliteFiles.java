package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import javax.sql.DataSource;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * The data source of a SQLite file the store owns. The only class that names sqlite-jdbc's own types, so a
 * host on PostgreSQL may leave that driver out.
 */
public final class SqliteFiles {
    private SqliteFiles() {
    }

    /**
     * A data source opening {@code file} in WAL mode (readers never wait for the writer), with
     * {@code synchronous=FULL} (a commit survives a power loss: seq reservations must), the busy timeout
     * (another process's writer is waited for), foreign keys enforced and deleted content overwritten
     * ({@code secure_delete}: also on the migrations' connections) and write transactions that take the write lock when they
     * begin ({@code BEGIN IMMEDIATE}). Creates the file's folder if it is missing.
     *
     * @throws ChatException STORE_FAILURE if the folder cannot be created
     */
    public static DataSource dataSource(Path file, Duration busyTimeout) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
        } catch (IOException e) {
            throw new ChatException(ErrorCode.STORE_FAILURE, "cannot create the folder of the SQLite file", e);
        }
        SQLiteConfig config = new SQLiteConfig();
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        config.setSynchronous(SQLiteConfig.SynchronousMode.FULL);
        config.setBusyTimeout((int) Math.min(Integer.MAX_VALUE, busyTimeout.toMillis()));
        config.setTransactionMode(SQLiteConfig.TransactionMode.IMMEDIATE);
        config.enforceForeignKeys(true);
        config.setPragma(SQLiteConfig.Pragma.SECURE_DELETE, "true");
        SQLiteDataSource dataSource = new SQLiteDataSource(config);
        dataSource.setUrl("jdbc:sqlite:" + file.toAbsolutePath());
        return dataSource;
    }
}
