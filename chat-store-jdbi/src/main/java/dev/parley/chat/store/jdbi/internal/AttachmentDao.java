package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.attachment.Attachment;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.SqlStatement;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.sqlobject.config.RegisterRowMapper;
import org.jdbi.v3.sqlobject.customizer.BindList;
import org.jdbi.v3.sqlobject.statement.SqlQuery;
import org.jdbi.v3.sqlobject.statement.SqlUpdate;

/**
 * Attachments ({@code parley_attachments}, migration V10) and the uses of their blobs: {@code parley_blobs}
 * holds each blob in use with how many attachment rows use it, {@code parley_unreferenced_blobs} the blobs
 * deleted threads left unused until their bytes are deleted. An owner's uploads with equal bytes share a blob
 * (the unique index on {@code (owner_id, sha256)}); a freed blob is never used again.
 *
 * <p>Saving an attachment ({@link #save}) and deleting a thread ({@link #releaseBlobsOf}, {@link #free}) are
 * atomic with respect to each other: the save adds its use with one upsert, which locks the blob's row; the
 * delete lowers the uses with an UPDATE, which locks the rows too, and frees a blob at 0 in the same
 * transaction. A save waiting for a blob being freed inserts a blob of its own once the delete commits. On
 * PostgreSQL both first lock the thread's row, a delete then the blobs' rows in key order, so that no two of
 * them wait for each other ({@link Postgres}); SQLite has one writer and starts each with a write
 * ({@link Sqlite}).
 */
@RegisterRowMapper(AttachmentDao.Mapper.class)
@RegisterRowMapper(AttachmentDao.BlobUses.Mapper.class)
public interface AttachmentDao {
    String COLUMNS = "id, owner_id, thread_id, name, media_type, size, sha256, blob_key, created_at";

    /**
     * Adds a use to the owner's blob with these bytes, or inserts the given blob with one use; the key of
     * the blob used. One statement: of racing saves of equal bytes one inserts, the others add their use; a
     * save racing the delete that frees the blob waits for it and then inserts (the row is gone).
     */
    String USE_BLOB = "INSERT INTO parley_blobs (blob_key, owner_id, sha256, size, uses) "
            + "VALUES (:blobKey, :ownerId, :sha256, :size, 1) "
            + "ON CONFLICT (owner_id, sha256) DO UPDATE SET uses = parley_blobs.uses + 1 RETURNING blob_key";

    String INSERT_ATTACHMENT = "INSERT INTO parley_attachments (" + COLUMNS + ") VALUES (:id, :ownerId, :threadId, "
            + ":name, :mediaType, :size, :sha256, :blobKey, :createdAt) ON CONFLICT (id) DO NOTHING";

    String FIND_ATTACHMENT = "SELECT " + COLUMNS + " FROM parley_attachments WHERE id = :id";

    String FIND_ATTACHMENTS = "SELECT " + COLUMNS + " FROM parley_attachments WHERE id IN (<ids>)";

    /** Each blob in use once (the owner's prefix of the unique index). */
    String STORED_BYTES = "SELECT COALESCE(SUM(size), 0) FROM parley_blobs WHERE owner_id = :ownerId";

    /**
     * Takes from each blob the uses the thread's attachments make of it (before the thread's delete cascades
     * to them); each blob's key and the uses it has left.
     */
    String RELEASE_THREAD_BLOBS = "UPDATE parley_blobs SET uses = uses - released.released_uses FROM "
            + "(SELECT blob_key AS released_key, COUNT(*) AS released_uses FROM parley_attachments "
            + "WHERE thread_id = :threadId GROUP BY blob_key) released "
            + "WHERE blob_key = released.released_key RETURNING blob_key, uses";

    /** Lists blobs no attachment uses any more (after their thread's delete removed the attachments). */
    String LIST_FREED = "INSERT INTO parley_unreferenced_blobs (blob_key, owner_id, since) "
            + "SELECT blob_key, owner_id, :since FROM parley_blobs WHERE blob_key IN (<blobKeys>) AND uses = 0";

    String DELETE_FREED = "DELETE FROM parley_blobs WHERE blob_key IN (<blobKeys>) AND uses = 0";

    String UNREFERENCED = "SELECT blob_key FROM parley_unreferenced_blobs ORDER BY since, blob_key LIMIT :limit";

    String FORGET = "DELETE FROM parley_unreferenced_blobs WHERE blob_key IN (<blobKeys>)";

    /** The interface to attach on a database. */
    static Class<? extends AttachmentDao> of(Dialect dialect) {
        return switch (dialect) {
            case SQLITE -> Sqlite.class;
            case POSTGRESQL -> Postgres.class;
        };
    }

    /**
     * Before a save: false if the thread does not exist. PostgreSQL locks its row ({@code FOR KEY SHARE}, as
     * the foreign key's check would), so a delete of the thread waits for the save or the save for the delete.
     * SQLite answers true and leaves it to the foreign key.
     */
    boolean lockThreadToAttach(String threadId);

    /**
     * Before a thread's delete: PostgreSQL locks the thread's row (no attachment can be added to it meanwhile)
     * and then its blobs' rows, in key order. SQLite does nothing.
     */
    void lockThreadToDelete(String threadId);

    @SqlQuery(USE_BLOB)
    String useBlob(@BindRow(Columns.class) Attachment attachment);

    @SqlUpdate(INSERT_ATTACHMENT)
    int insertUnlessExists(@BindRow(Columns.class) Attachment attachment);

    /**
     * Records an attachment, using the owner's blob of equal bytes if there is one.
     *
     * @return the attachment as stored: its blob key is the one it uses
     * @throws ChatException NOT_FOUND if the thread does not exist (on SQLite: a foreign key violation, which
     *     the caller turns into NOT_FOUND); CONFLICT if the id exists. Either way the transaction rolls back.
     */
    default Attachment save(Attachment attachment) {
        if (!lockThreadToAttach(attachment.threadId())) {
            throw ChatException.notFound("thread", attachment.threadId());
        }
        Attachment stored = attachment.withBlobKey(useBlob(attachment));
        if (insertUnlessExists(stored) == 0) {
            throw ChatException.conflict("attachment " + attachment.id() + " exists");
        }
        return stored;
    }

    @SqlQuery(FIND_ATTACHMENT)
    Optional<Attachment> find(String id);

    @SqlQuery(FIND_ATTACHMENTS)
    List<Attachment> findIn(@BindList List<String> ids);

    /** The attachments with these ids that exist (long id lists are read in chunks). */
    default List<Attachment> find(Collection<String> ids) {
        List<Attachment> found = new ArrayList<>();
        for (List<String> chunk : InLists.chunks(ids)) {
            found.addAll(findIn(chunk));
        }
        return found;
    }

    @SqlQuery(STORED_BYTES)
    long storedBytes(String ownerId);

    @SqlQuery(RELEASE_THREAD_BLOBS)
    List<BlobUses> releaseThreadBlobs(String threadId);

    /**
     * The first step of a thread's delete, in its transaction: takes the thread's uses from its blobs.
     *
     * @return the blobs no attachment uses once the thread's are deleted: pass them to {@link #free} after
     *     the thread's row (and by the cascade, its attachments) is deleted
     */
    default List<String> releaseBlobsOf(String threadId) {
        lockThreadToDelete(threadId);
        List<String> freed = new ArrayList<>();
        for (BlobUses blob : releaseThreadBlobs(threadId)) {
            if (blob.uses() == 0) {
                freed.add(blob.blobKey());
            }
        }
        return freed;
    }

    @SqlUpdate(LIST_FREED)
    int listFreed(@BindList List<String> blobKeys, long since);

    @SqlUpdate(DELETE_FREED)
    int deleteFreed(@BindList List<String> blobKeys);

    /** Moves blobs {@link #releaseBlobsOf} freed to the unreferenced ones, listed as freed at {@code since}. */
    default void free(List<String> blobKeys, long since) {
        for (List<String> chunk : InLists.chunks(blobKeys)) {
            listFreed(chunk, since);
            deleteFreed(chunk);
        }
    }

    @SqlQuery(UNREFERENCED)
    List<String> unreferenced(int limit);

    @SqlUpdate(FORGET)
    int forgetIn(@BindList List<String> blobKeys);

    /** Forgets unreferenced blobs (long key lists in chunks); how many were listed. */
    default int forget(Collection<String> blobKeys) {
        int forgotten = 0;
        for (List<String> chunk : InLists.chunks(blobKeys)) {
            forgotten += forgetIn(chunk);
        }
        return forgotten;
    }

    /** SQLite: one writer, so no locks; a missing thread fails the attachment's foreign key. */
    interface Sqlite extends AttachmentDao {
        @Override
        default boolean lockThreadToAttach(String threadId) {
            return true;
        }

        @Override
        default void lockThreadToDelete(String threadId) {
        }
    }

    /**
     * PostgreSQL: the locks that order a save and a delete. Both lock the thread's row first, as every write of
     * a thread's rows does (see {@link RunDao.Postgres}); a delete then locks its blobs' rows in key order
     * ({@code ORDER BY} before the lock), so two deletes sharing blobs take them in one order, and a save holds
     * at most one blob's row.
     */
    interface Postgres extends AttachmentDao {
        @SqlQuery("SELECT id FROM parley_threads WHERE id = :threadId FOR KEY SHARE")
        Optional<String> lockThreadKey(String threadId);

        @SqlQuery("SELECT id FROM parley_threads WHERE id = :threadId FOR UPDATE")
        Optional<String> lockThreadRow(String threadId);

        @SqlQuery("SELECT blob_key FROM parley_blobs WHERE blob_key IN "
                + "(SELECT blob_key FROM parley_attachments WHERE thread_id = :threadId) "
                + "ORDER BY blob_key FOR NO KEY UPDATE")
        List<String> lockBlobsOf(String threadId);

        @Override
        default boolean lockThreadToAttach(String threadId) {
            return lockThreadKey(threadId).isPresent();
        }

        @Override
        default void lockThreadToDelete(String threadId) {
            if (lockThreadRow(threadId).isPresent()) {
                lockBlobsOf(threadId);
            }
        }
    }

    /** A blob's key and the uses it has left. */
    record BlobUses(String blobKey, long uses) {
        /** Reads a blob's key and uses. */
        public static final class Mapper implements RowMapper<BlobUses> {
            @Override
            public BlobUses map(ResultSet rs, StatementContext ctx) throws SQLException {
                return new BlobUses(rs.getString("blob_key"), rs.getLong("uses"));
            }
        }
    }

    /** Binds every column of an attachment. */
    final class Columns implements BindRow.Binder<Attachment> {
        @Override
        public void bind(SqlStatement<?> statement, Attachment attachment) {
            statement.bind("id", attachment.id())
                    .bind("ownerId", attachment.ownerId())
                    .bind("threadId", attachment.threadId())
                    .bind("name", attachment.name())
                    .bind("mediaType", attachment.mediaType())
                    .bind("size", attachment.size())
                    .bind("sha256", attachment.sha256())
                    .bind("blobKey", attachment.blobKey())
                    .bind("createdAt", attachment.createdAt().toEpochMilli());
        }
    }

    /** Reads an attachment row. */
    final class Mapper implements RowMapper<Attachment> {
        @Override
        public Attachment map(ResultSet rs, StatementContext ctx) throws SQLException {
            return new Attachment(rs.getString("id"), rs.getString("owner_id"), rs.getString("thread_id"),
                    rs.getString("name"), rs.getString("media_type"), rs.getLong("size"), rs.getString("sha256"),
                    rs.getString("blob_key"), Rows.instant(rs, "created_at"));
        }
    }
}
