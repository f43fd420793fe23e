-- Conversations as trees, messages sent once, search, and compacted event logs.

-- Threads record the active branch's last message and the last message their runtime session saw, and
-- their title's search vector (see search, below).
ALTER TABLE parley_threads
    ADD COLUMN active_leaf_id  TEXT,
    ADD COLUMN session_head_id TEXT,
    ADD COLUMN title_vector    tsvector;

-- Messages: the id the sending client gave a user message (once per thread); the search vector of a user's
-- or an assistant's text (NULL for steps; the text itself is in the body); and each top-level message's
-- place in its thread's tree: its depth (0 for a first message) and a jump pointer to an ancestor (the
-- message itself for a first message) with that ancestor's depth, chosen so that any ancestor is reached in
-- O(log depth) steps.
ALTER TABLE parley_messages
    ADD COLUMN client_message_id TEXT,
    ADD COLUMN search_vector     tsvector,
    ADD COLUMN branch_depth      INTEGER,
    ADD COLUMN branch_jump       TEXT,
    ADD COLUMN branch_jump_depth INTEGER;

-- a client id is used once per thread (a second user message with it fails the batch: CONFLICT)
CREATE UNIQUE INDEX parley_messages_client_id ON parley_messages (thread_id, client_message_id)
    WHERE client_message_id IS NOT NULL;
-- the tree walked downwards: a message's children (and a thread's first messages, parent NULL)
CREATE INDEX parley_messages_children ON parley_messages (thread_id, parent_message_id, save_order)
    WHERE top_level = TRUE;

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
UPDATE parley_messages m
SET branch_depth = tree.depth,
    branch_jump = CASE WHEN tree.depth = 0 THEN m.id ELSE m.parent_message_id END,
    branch_jump_depth = CASE WHEN tree.depth = 0 THEN 0 ELSE tree.depth - 1 END
FROM tree
WHERE m.id = tree.id;

-- Runs: when their event log was compacted (ChatStore.compactRunEvents); the ended runs not compacted yet.
ALTER TABLE parley_runs ADD COLUMN events_compacted_at BIGINT;
CREATE INDEX parley_runs_to_compact ON parley_runs (finished_at, save_order) WHERE events_compacted_at IS NULL;

-- Search: tsvectors of the messages' texts and the threads' titles, each with a GIN index. The store builds
-- each vector itself from the words of the text (runs of letters and digits, lower-cased: the words of
-- chat-core's SearchQuery; PostgreSQL's parser would keep "src/config.yml" or an e-mail address as one
-- token) and writes it with the row. A search ranks every matching text by its vector, so the vectors stay
-- in the row (STORAGE MAIN: compressed if need be, moved out of line only after the body): read from the
-- TOAST table, ranking a common word cost three times as much. The rows stored before this version get
-- their vectors from to_tsvector with the 'simple' configuration (no stemming, no stop words), which
-- differs only inside such tokens. (JSON escapes a NUL as \u0000, which PostgreSQL's text cannot hold: read
-- as U+FFFD.)
ALTER TABLE parley_messages ALTER COLUMN search_vector SET STORAGE MAIN;

UPDATE parley_messages m
SET search_vector = to_tsvector('simple', s.text)
FROM (SELECT id, NULLIF(left(replace(body, '\u0000', '\uFFFD')::json ->> 'text', 100000), '') AS text
      FROM parley_messages WHERE kind IN ('user', 'assistant')) s
WHERE m.id = s.id AND s.text IS NOT NULL;

UPDATE parley_threads SET title_vector = to_tsvector('simple', title) WHERE title IS NOT NULL;

CREATE INDEX parley_messages_search ON parley_messages USING GIN (search_vector) WHERE search_vector IS NOT NULL;
CREATE INDEX parley_threads_search ON parley_threads USING GIN (title_vector) WHERE title_vector IS NOT NULL;
