package dev.parley.chat.store.jdbi.internal;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.sqlobject.config.RegisterRowMapper;
import org.jdbi.v3.sqlobject.statement.SqlQuery;
import org.jdbi.v3.sqlobject.statement.SqlUpdate;

/**
 * The bytes of the default blob store ({@code parley_blob_chunks}, migration V10): a blob is its chunks in
 * {@code seq} order, each written in a transaction of its own as the upload arrives, and read one at a time.
 * The same SQL on SQLite and PostgreSQL ({@code length} of a BLOB or BYTEA is its size in bytes, read without
 * its content).
 */
@RegisterRowMapper(BlobDao.Chunk.Mapper.class)
public interface BlobDao {
    String INSERT_CHUNK = "INSERT INTO parley_blob_chunks (blob_key, seq, owner_id, data) "
            + "VALUES (:blobKey, :seq, :ownerId, :data)";

    /** A blob's chunks and their sizes, without their bytes: where a read from an offset starts. */
    String CHUNKS = "SELECT seq, length(data) AS size FROM parley_blob_chunks WHERE blob_key = :blobKey ORDER BY seq";

    String READ_CHUNK = "SELECT data FROM parley_blob_chunks WHERE blob_key = :blobKey AND seq = :seq";

    String DELETE_BLOB = "DELETE FROM parley_blob_chunks WHERE blob_key = :blobKey";

    /** An owner's blobs, also any an interrupted upload left. */
    String BLOBS_OF_OWNER = "SELECT DISTINCT blob_key FROM parley_blob_chunks WHERE owner_id = :ownerId";

    @SqlUpdate(INSERT_CHUNK)
    int insertChunk(String blobKey, int seq, String ownerId, byte[] data);

    @SqlQuery(CHUNKS)
    List<Chunk> chunks(String blobKey);

    @SqlQuery(READ_CHUNK)
    Optional<byte[]> readChunk(String blobKey, int seq);

    @SqlUpdate(DELETE_BLOB)
    int delete(String blobKey);

    @SqlQuery(BLOBS_OF_OWNER)
    List<String> blobsOf(String ownerId);

    /** A chunk's place in its blob and its size in bytes. */
    record Chunk(int seq, long size) {
        /** Reads a chunk's seq and size. */
        public static final class Mapper implements RowMapper<Chunk> {
            @Override
            public Chunk map(ResultSet rs, StatementContext ctx) throws SQLException {
                return new Chunk(rs.getInt("seq"), rs.getLong("size"));
            }
        }
    }
}
