-- Deletion is final, and leaves no copy.
--
-- 1. Every row belongs to its thread, and the database says so: foreign keys with ON DELETE CASCADE from
--    runs, messages, remembered approvals and feedback to their thread, and from events, seq reservations,
--    pending inputs and host-action executions to their run. Deleting a thread's row deletes all of it in
--    the same statement, and a write of a row whose thread (or run) is gone fails (ChatStore.write then
--    throws ThreadGoneException) instead of bringing erased data back. SQLite checks foreign keys only on a
--    connection with PRAGMA foreign_keys = ON: the store sets it on every connection it uses.
--
--    SQLite cannot add a foreign key to a table, so each child table is rebuilt: created anew with its keys,
--    filled from the old one in its order (save_order kept: the search index refers to messages by it), the
--    old one dropped and the new one renamed; its indexes and triggers are made again.
--
-- 2. Rows left behind by older versions would fail the new keys: a write of a stopped run could store rows
--    after its thread was deleted. Those orphans (rows of a thread or run that does not exist) are deleted
--    first, so the upgrade cannot fail on them; nobody could read them anyway, every read goes through the
--    thread.
--
-- 3. The search indexes forget deleted words for good: FTS5's 'secure-delete' option removes a deleted
--    row's tokens from the index instead of adding a tombstone beside them, and both indexes are rebuilt, so
--    the words of threads deleted before this version leave the index too. (PRAGMA secure_delete, which
--    overwrites deleted content in the file with zeros, is a setting of the connection: the store sets it
--    on every connection it uses, and here for the rebuild.)

PRAGMA secure_delete = ON;

-- ---- 2. the orphans

DELETE FROM parley_runs WHERE thread_id NOT IN (SELECT id FROM parley_threads);
DELETE FROM parley_messages WHERE thread_id NOT IN (SELECT id FROM parley_threads);
DELETE FROM parley_thread_approvals WHERE thread_id NOT IN (SELECT id FROM parley_threads);
DELETE FROM parley_feedback WHERE thread_id NOT IN (SELECT id FROM parley_threads);
DELETE FROM parley_run_events WHERE run_id NOT IN (SELECT id FROM parley_runs);
DELETE FROM parley_seq_reservations WHERE run_id NOT IN (SELECT id FROM parley_runs);
DELETE FROM parley_inputs WHERE run_id NOT IN (SELECT id FROM parley_runs);
DELETE FROM parley_host_actions WHERE run_id NOT IN (SELECT id FROM parley_runs);

-- ---- 1. the keys: runs first (the parent of four tables), then its children, then the thread's others

CREATE TABLE parley_runs_v7 (
    save_order                INTEGER NOT NULL PRIMARY KEY,
    id                        TEXT    NOT NULL UNIQUE,
    thread_id                 TEXT    NOT NULL REFERENCES parley_threads (id) ON DELETE CASCADE,
    owner_id                  TEXT    NOT NULL,
    status                    TEXT    NOT NULL,
    user_message_id           TEXT,
    assistant_message_id      TEXT    NOT NULL,
    input                     TEXT    NOT NULL,
    model_id                  TEXT,
    skill                     TEXT,
    max_iterations            INTEGER,
    context                   TEXT    NOT NULL,
    created_at                INTEGER NOT NULL,
    started_at                INTEGER,
    finished_at               INTEGER,
    error_code                TEXT,
    error_message             TEXT,
    input_tokens              INTEGER,
    output_tokens             INTEGER,
    total_tokens              INTEGER,
    guardrails_failure_reason TEXT,
    lease_owner               TEXT,
    lease_until               INTEGER,
    events_compacted_at       INTEGER
) STRICT;

INSERT INTO parley_runs_v7 (save_order, id, thread_id, owner_id, status, user_message_id, assistant_message_id,
        input, model_id, skill, max_iterations, context, created_at, started_at, finished_at, error_code,
        error_message, input_tokens, output_tokens, total_tokens, guardrails_failure_reason, lease_owner,
        lease_until, events_compacted_at)
SELECT save_order, id, thread_id, owner_id, status, user_message_id, assistant_message_id,
       input, model_id, skill, max_iterations, context, created_at, started_at, finished_at, error_code,
       error_message, input_tokens, output_tokens, total_tokens, guardrails_failure_reason, lease_owner,
       lease_until, events_compacted_at
FROM parley_runs ORDER BY save_order;

DROP TABLE parley_runs;
ALTER TABLE parley_runs_v7 RENAME TO parley_runs;

CREATE INDEX parley_runs_status ON parley_runs (status, save_order);
CREATE INDEX parley_runs_thread_status ON parley_runs (thread_id, status, save_order);
CREATE UNIQUE INDEX parley_runs_one_active_per_thread ON parley_runs (thread_id)
    WHERE status IN ('RUNNING', 'WAITING_FOR_INPUT');
CREATE INDEX parley_runs_to_compact ON parley_runs (finished_at, save_order) WHERE events_compacted_at IS NULL;

CREATE TABLE parley_run_events_v7 (
    run_id     TEXT    NOT NULL REFERENCES parley_runs (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    type       TEXT    NOT NULL,
    payload    TEXT    NOT NULL,
    first_seq  INTEGER,
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

INSERT INTO parley_run_events_v7 (run_id, seq, created_at, type, payload, first_seq)
SELECT run_id, seq, created_at, type, payload, first_seq FROM parley_run_events ORDER BY run_id, seq;

DROP TABLE parley_run_events;
ALTER TABLE parley_run_events_v7 RENAME TO parley_run_events;

CREATE TABLE parley_seq_reservations_v7 (
    run_id       TEXT    NOT NULL PRIMARY KEY REFERENCES parley_runs (id) ON DELETE CASCADE,
    reserved_seq INTEGER NOT NULL
) STRICT;

INSERT INTO parley_seq_reservations_v7 (run_id, reserved_seq)
SELECT run_id, reserved_seq FROM parley_seq_reservations;

DROP TABLE parley_seq_reservations;
ALTER TABLE parley_seq_reservations_v7 RENAME TO parley_seq_reservations;

CREATE TABLE parley_inputs_v7 (
    save_order   INTEGER NOT NULL PRIMARY KEY,
    run_id       TEXT    NOT NULL REFERENCES parley_runs (id) ON DELETE CASCADE,
    input_id     TEXT    NOT NULL,
    message_id   TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    request      TEXT    NOT NULL,
    deadline     INTEGER,
    resume_token TEXT,
    state        TEXT    NOT NULL,
    answer       TEXT,
    created_at   INTEGER NOT NULL,
    resolved_at  INTEGER,
    UNIQUE (run_id, input_id)
) STRICT;

INSERT INTO parley_inputs_v7 (save_order, run_id, input_id, message_id, kind, request, deadline, resume_token,
        state, answer, created_at, resolved_at)
SELECT save_order, run_id, input_id, message_id, kind, request, deadline, resume_token,
       state, answer, created_at, resolved_at
FROM parley_inputs ORDER BY save_order;

DROP TABLE parley_inputs;
ALTER TABLE parley_inputs_v7 RENAME TO parley_inputs;

CREATE TABLE parley_host_actions_v7 (
    run_id       TEXT    NOT NULL REFERENCES parley_runs (id) ON DELETE CASCADE,
    execution_id TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    arguments    TEXT    NOT NULL,
    result       TEXT,
    error        INTEGER NOT NULL,
    claimed_at   INTEGER NOT NULL,
    completed_at INTEGER,
    PRIMARY KEY (run_id, execution_id)
) STRICT;

INSERT INTO parley_host_actions_v7 (run_id, execution_id, name, arguments, result, error, claimed_at, completed_at)
SELECT run_id, execution_id, name, arguments, result, error, claimed_at, completed_at FROM parley_host_actions;

DROP TABLE parley_host_actions;
ALTER TABLE parley_host_actions_v7 RENAME TO parley_host_actions;

CREATE TABLE parley_thread_approvals_v7 (
    thread_id   TEXT    NOT NULL REFERENCES parley_threads (id) ON DELETE CASCADE,
    tool_name   TEXT    NOT NULL,
    approved_at INTEGER NOT NULL,
    PRIMARY KEY (thread_id, tool_name)
) STRICT;

INSERT INTO parley_thread_approvals_v7 (thread_id, tool_name, approved_at)
SELECT thread_id, tool_name, approved_at FROM parley_thread_approvals;

DROP TABLE parley_thread_approvals;
ALTER TABLE parley_thread_approvals_v7 RENAME TO parley_thread_approvals;

CREATE TABLE parley_feedback_v7 (
    message_id TEXT    NOT NULL,
    owner_id   TEXT    NOT NULL,
    thread_id  TEXT    NOT NULL REFERENCES parley_threads (id) ON DELETE CASCADE,
    run_id     TEXT    NOT NULL,
    rating     TEXT    NOT NULL,
    comment    TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (message_id, owner_id)
) STRICT;

INSERT INTO parley_feedback_v7 (message_id, owner_id, thread_id, run_id, rating, comment, created_at)
SELECT message_id, owner_id, thread_id, run_id, rating, comment, created_at FROM parley_feedback;

DROP TABLE parley_feedback;
ALTER TABLE parley_feedback_v7 RENAME TO parley_feedback;

CREATE INDEX parley_feedback_thread ON parley_feedback (thread_id);

-- Messages: the same columns and rowids (save_order, which the search index refers to); the search
-- triggers go with the old table and are made again below.
CREATE TABLE parley_messages_v7 (
    save_order        INTEGER NOT NULL PRIMARY KEY,
    id                TEXT    NOT NULL UNIQUE,
    thread_id         TEXT    NOT NULL REFERENCES parley_threads (id) ON DELETE CASCADE,
    run_id            TEXT    NOT NULL,
    parent_message_id TEXT,
    kind              TEXT    NOT NULL,
    top_level         INTEGER NOT NULL,
    status            TEXT    NOT NULL,
    created_at        INTEGER NOT NULL,
    body              TEXT    NOT NULL,
    client_message_id TEXT,
    search_text       TEXT,
    branch_depth      INTEGER,
    branch_jump       TEXT,
    branch_jump_depth INTEGER
) STRICT;

INSERT INTO parley_messages_v7 (save_order, id, thread_id, run_id, parent_message_id, kind, top_level, status,
        created_at, body, client_message_id, search_text, branch_depth, branch_jump, branch_jump_depth)
SELECT save_order, id, thread_id, run_id, parent_message_id, kind, top_level, status,
       created_at, body, client_message_id, search_text, branch_depth, branch_jump, branch_jump_depth
FROM parley_messages ORDER BY save_order;

DROP TABLE parley_messages;
ALTER TABLE parley_messages_v7 RENAME TO parley_messages;

CREATE INDEX parley_messages_thread_top ON parley_messages (thread_id, top_level, save_order);
CREATE INDEX parley_messages_run ON parley_messages (run_id, save_order);
CREATE INDEX parley_messages_variants ON parley_messages (parent_message_id, save_order) WHERE kind = 'assistant';
CREATE UNIQUE INDEX parley_messages_client_id ON parley_messages (thread_id, client_message_id)
    WHERE client_message_id IS NOT NULL;
CREATE INDEX parley_messages_children ON parley_messages (thread_id, parent_message_id, save_order)
    WHERE top_level = TRUE;
CREATE INDEX parley_messages_search_thread ON parley_messages (save_order, thread_id);

CREATE TRIGGER parley_messages_search_insert AFTER INSERT ON parley_messages
WHEN new.search_text IS NOT NULL BEGIN
    INSERT INTO parley_message_search (rowid, search_text) VALUES (new.save_order, new.search_text);
END;

CREATE TRIGGER parley_messages_search_update AFTER UPDATE OF search_text ON parley_messages
WHEN old.search_text IS NOT new.search_text BEGIN
    INSERT INTO parley_message_search (parley_message_search, rowid, search_text)
    SELECT 'delete', old.save_order, old.search_text WHERE old.search_text IS NOT NULL;
    INSERT INTO parley_message_search (rowid, search_text)
    SELECT new.save_order, new.search_text WHERE new.search_text IS NOT NULL;
END;

CREATE TRIGGER parley_messages_search_delete AFTER DELETE ON parley_messages
WHEN old.search_text IS NOT NULL BEGIN
    INSERT INTO parley_message_search (parley_message_search, rowid, search_text)
    VALUES ('delete', old.save_order, old.search_text);
END;

-- ---- 3. the search indexes

INSERT INTO parley_message_search (parley_message_search, rank) VALUES ('secure-delete', 1);
INSERT INTO parley_title_search (parley_title_search, rank) VALUES ('secure-delete', 1);
INSERT INTO parley_message_search (parley_message_search) VALUES ('rebuild');
INSERT INTO parley_title_search (parley_title_search) VALUES ('rebuild');
