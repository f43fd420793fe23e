-- Attachments: the files people send with their messages (chat-core's AttachmentStore), and the bytes of
-- the default blob store (JdbiBlobStore).
--
-- An owner's uploads with equal bytes (equal SHA-256) share one blob. parley_blobs holds one row per blob in
-- use, with how many attachment rows use it; deleting a thread lowers the count of each blob its attachments
-- use, in the delete's transaction, and a blob no row uses any more leaves parley_blobs for
-- parley_unreferenced_blobs, where it waits until its bytes are deleted from the blob store. A freed blob is
-- never used again: a later upload of the same bytes gets a blob of its own.
--
-- Deletion stays final: an attachment belongs to its thread (ON DELETE CASCADE), and the foreign key to its
-- blob makes the database refuse to free a blob a row still uses. What deleted chunks leave in the files until
-- a VACUUM: see the module's README, "Erasure".

-- The blobs in use. (owner_id, sha256) is unique: an upload of bytes the owner has stored already adds a use
-- to that blob (INSERT … ON CONFLICT DO UPDATE, atomic also against a delete freeing it). uses is 0 only
-- inside the transaction that frees the blob.
CREATE TABLE parley_blobs (
    blob_key TEXT   NOT NULL PRIMARY KEY,
    owner_id TEXT   NOT NULL,
    sha256   TEXT   NOT NULL,
    size     BIGINT NOT NULL,
    uses     BIGINT NOT NULL CHECK (uses >= 0)
);

-- the blob an owner's upload reuses; the bytes an owner's blobs take
CREATE UNIQUE INDEX parley_blobs_owner_content ON parley_blobs (owner_id, sha256);

CREATE TABLE parley_attachments (
    id         TEXT   NOT NULL PRIMARY KEY,
    owner_id   TEXT   NOT NULL,
    thread_id  TEXT   NOT NULL,
    name       TEXT   NOT NULL,
    media_type TEXT   NOT NULL,
    size       BIGINT NOT NULL,
    sha256     TEXT   NOT NULL,
    blob_key   TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    CONSTRAINT parley_attachments_thread_fk FOREIGN KEY (thread_id) REFERENCES parley_threads (id) ON DELETE CASCADE,
    CONSTRAINT parley_attachments_blob_fk FOREIGN KEY (blob_key) REFERENCES parley_blobs (blob_key)
);

-- a thread's attachments by blob (what a delete releases; the cascade's lookup)
CREATE INDEX parley_attachments_thread ON parley_attachments (thread_id, blob_key);
-- the foreign key's check when a blob row is deleted
CREATE INDEX parley_attachments_blob ON parley_attachments (blob_key);

-- Blobs no attachment uses any more, oldest first: the engine deletes their bytes from the blob store and then
-- forgets them here. A blob whose delete failed stays listed and is tried again.
CREATE TABLE parley_unreferenced_blobs (
    blob_key TEXT   NOT NULL PRIMARY KEY,
    owner_id TEXT   NOT NULL,
    since    BIGINT NOT NULL
);

CREATE INDEX parley_unreferenced_blobs_age ON parley_unreferenced_blobs (since, blob_key);

-- JdbiBlobStore: a blob's bytes in chunks (seq 0, 1, …), each written as it arrives. No key to parley_blobs:
-- the bytes are written before the attachment is recorded, and a host may use either table without the other.
CREATE TABLE parley_blob_chunks (
    blob_key TEXT    NOT NULL,
    seq      INTEGER NOT NULL,
    owner_id TEXT    NOT NULL,
    data     BYTEA   NOT NULL,
    PRIMARY KEY (blob_key, seq)
);

-- Kept out of line and uncompressed: most attachments (images, PDFs, audio, video) are compressed already,
-- and an uncompressed chunk costs no CPU to write or read.
ALTER TABLE parley_blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

-- an owner's blobs, also those an interrupted upload left (erasure)
CREATE INDEX parley_blob_chunks_owner ON parley_blob_chunks (owner_id, blob_key);
