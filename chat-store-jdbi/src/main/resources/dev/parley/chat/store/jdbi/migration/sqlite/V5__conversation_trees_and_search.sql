-- Conversations as trees, messages sent once, search, and compacted event logs.

-- Threads record the active branch's last message and the last message their runtime session saw. The
-- table is rebuilt with an INTEGER PRIMARY KEY (save_order), as parley_messages and parley_runs have: the
-- title search index refers to a thread by it, and only an INTEGER PRIMARY KEY keeps a row's rowid through
-- a VACUUM.
CREATE TABLE parley_threads_v5 (
    save_order         INTEGER NOT NULL PRIMARY KEY,
    id                 TEXT    NOT NULL UNIQUE,
    owner_id           TEXT    NOT NULL,
    title              TEXT,
    runtime_session_id TEXT,
    model_id           TEXT,
    skill              TEXT,
    status             TEXT    NOT NULL,
    created_at         INTEGER NOT NULL,
    last_message_at    INTEGER NOT NULL,
    active_leaf_id     TEXT,
    session_head_id    TEXT
) STRICT;

INSERT INTO parley_threads_v5 (id, owner_id, title, runtime_session_id, model_id, skill, status, created_at,
        last_message_at)
SELECT id, owner_id, title, runtime_session_id, model_id, skill, status, created_at, last_message_at
FROM parley_threads
ORDER BY rowid;

DROP TABLE parley_threads;
ALTER TABLE parley_threads_v5 RENAME TO parley_threads;

-- an owner's threads, newest activity first
CREATE INDEX parley_threads_owner_activity ON parley_threads (owner_id, last_message_at DESC, id DESC);

-- Messages: the id the sending client gave a user message (once per thread); the plain text a search finds
-- (a user's or an assistant's text, NULL for steps); and each top-level message's place in its thread's
-- tree: its depth (0 for a first message) and a jump pointer to an ancestor (the message itself for a
-- first message) with that ancestor's depth, chosen so that any ancestor is reached in O(log depth) steps.
ALTER TABLE parley_messages ADD COLUMN client_message_id TEXT;
ALTER TABLE parley_messages ADD COLUMN search_text TEXT;
ALTER TABLE parley_messages ADD COLUMN branch_depth INTEGER;
ALTER TABLE parley_messages ADD COLUMN branch_jump TEXT;
ALTER TABLE parley_messages ADD COLUMN branch_jump_depth INTEGER;

-- a client id is used once per thread (a second user message with it fails the batch: CONFLICT)
CREATE UNIQUE INDEX parley_messages_client_id ON parley_messages (thread_id, client_message_id)
    WHERE client_message_id IS NOT NULL;
-- the tree walked downwards: a message's children (and a thread's first messages, parent NULL)
CREATE INDEX parley_messages_children ON parley_messages (thread_id, parent_message_id, save_order)
    WHERE top_level = TRUE;

-- (substr and length stop at a NUL: a text is only cut where it is longer than the store's cap)
UPDATE parley_messages
SET search_text = CASE WHEN length(json_extract(body, '$.text')) > 100000
                       THEN substr(json_extract(body, '$.text'), 1, 100000) ELSE json_extract(body, '$.text') END
WHERE kind IN ('user', 'assistant') AND json_extract(body, '$.text') <> '';

-- The depths of the messages stored so far, from each thread's first messages down. Their jump pointers
-- are their parents (correct, if not the quickest); messages stored from now on get the logarithmic ones.
WITH RECURSIVE tree (id, thread_id, depth) AS (
    SELECT m.id, m.thread_id, 0 FROM parley_messages m
    WHERE m.top_level = TRUE AND NOT EXISTS (
        SELECT 1 FROM parley_messages p
        WHERE p.id = m.parent_message_id AND p.thread_id = m.thread_id AND p.top_level = TRUE)
  UNION ALL
    SELECT c.id, c.thread_id, tree.depth + 1 FROM tree JOIN parley_messages c
        ON c.thread_id = tree.thread_id AND c.parent_message_id = tree.id AND c.top_level = TRUE
)
UPDATE parley_messages
SET branch_depth = tree.depth,
    branch_jump = CASE WHEN tree.depth = 0 THEN parley_messages.id ELSE parley_messages.parent_message_id END,
    branch_jump_depth = CASE WHEN tree.depth = 0 THEN 0 ELSE tree.depth - 1 END
FROM tree
WHERE parley_messages.id = tree.id;

-- Runs: when their event log was compacted (ChatStore.compactRunEvents); the ended runs not compacted yet.
ALTER TABLE parley_runs ADD COLUMN events_compacted_at INTEGER;
CREATE INDEX parley_runs_to_compact ON parley_runs (finished_at, save_order) WHERE events_compacted_at IS NULL;

-- Search: FTS5 indexes over the messages' search_text and the threads' titles (external content: the text
-- stays in its table; the index holds the tokens). Words are runs of letters and digits, case-folded,
-- accents kept: the words of chat-core's SearchQuery. The triggers keep both exact on every insert,
-- upsert, rename and delete.
CREATE VIRTUAL TABLE parley_message_search USING fts5(
    search_text, content = 'parley_messages', content_rowid = 'save_order',
    tokenize = "unicode61 remove_diacritics 0 categories 'L* N*'");

CREATE VIRTUAL TABLE parley_title_search USING fts5(
    title, content = 'parley_threads', content_rowid = 'save_order',
    tokenize = "unicode61 remove_diacritics 0 categories 'L* N*'");

INSERT INTO parley_message_search (rowid, search_text)
SELECT save_order, search_text FROM parley_messages WHERE search_text IS NOT NULL;

INSERT INTO parley_title_search (rowid, title)
SELECT save_order, title FROM parley_threads WHERE title IS NOT NULL;

-- a matching text's thread, read without the message's wide row (the ranking sums per thread over every
-- match); not partial, so that it covers the lookup
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

CREATE TRIGGER parley_threads_search_insert AFTER INSERT ON parley_threads
WHEN new.title IS NOT NULL BEGIN
    INSERT INTO parley_title_search (rowid, title) VALUES (new.save_order, new.title);
END;

CREATE TRIGGER parley_threads_search_update AFTER UPDATE OF title ON parley_threads
WHEN old.title IS NOT new.title BEGIN
    INSERT INTO parley_title_search (parley_title_search, rowid, title)
    SELECT 'delete', old.save_order, old.title WHERE old.title IS NOT NULL;
    INSERT INTO parley_title_search (rowid, title)
    SELECT new.save_order, new.title WHERE new.title IS NOT NULL;
END;

CREATE TRIGGER parley_threads_search_delete AFTER DELETE ON parley_threads
WHEN old.title IS NOT NULL BEGIN
    INSERT INTO parley_title_search (parley_title_search, rowid, title) VALUES ('delete', old.save_order, old.title);
END;
