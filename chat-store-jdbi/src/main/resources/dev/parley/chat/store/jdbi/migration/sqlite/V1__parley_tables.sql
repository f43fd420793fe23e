-- Parley chat store, SQLite. Times are epoch milliseconds; booleans are 0/1; JSON is text written by
-- chat-core's ChatJson. save_order (the rowid) is the first-save order: assigned by the first insert and
-- kept when a row is replaced by an upsert.

CREATE TABLE parley_threads (
    id                 TEXT    NOT NULL PRIMARY KEY,
    owner_id           TEXT    NOT NULL,
    title              TEXT,
    runtime_session_id TEXT,
    model_id           TEXT,
    skill              TEXT,
    status             TEXT    NOT NULL,
    created_at         INTEGER NOT NULL,
    last_message_at    INTEGER NOT NULL
) STRICT;

-- an owner's threads, newest activity first
CREATE INDEX parley_threads_owner_activity ON parley_threads (owner_id, last_message_at DESC, id DESC);

CREATE TABLE parley_messages (
    save_order        INTEGER NOT NULL PRIMARY KEY,
    id                TEXT    NOT NULL UNIQUE,
    thread_id         TEXT    NOT NULL,
    run_id            TEXT    NOT NULL,
    parent_message_id TEXT,
    kind              TEXT    NOT NULL,
    top_level         INTEGER NOT NULL,
    status            TEXT    NOT NULL,
    created_at        INTEGER NOT NULL,
    body              TEXT    NOT NULL
) STRICT;

-- a thread's user and assistant messages, paged backwards from a cursor; also a thread's messages
CREATE INDEX parley_messages_thread_top ON parley_messages (thread_id, top_level, save_order);
-- a run's step messages
CREATE INDEX parley_messages_run ON parley_messages (run_id, save_order);
-- the answers (variants) of a user message
CREATE INDEX parley_messages_variants ON parley_messages (parent_message_id, save_order) WHERE kind = 'assistant';

CREATE TABLE parley_runs (
    save_order                INTEGER NOT NULL PRIMARY KEY,
    id                        TEXT    NOT NULL UNIQUE,
    thread_id                 TEXT    NOT NULL,
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
    guardrails_failure_reason TEXT
) STRICT;

-- runs by status (recovery at start-up), and a thread's runs by status (is the thread busy?)
CREATE INDEX parley_runs_status ON parley_runs (status, save_order);
CREATE INDEX parley_runs_thread_status ON parley_runs (thread_id, status, save_order);

-- The run event log; the primary key is the replay index: a reconnect reads a range of it.
CREATE TABLE parley_run_events (
    run_id     TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    type       TEXT    NOT NULL,
    payload    TEXT    NOT NULL,
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

-- The highest seq a run may have handed out (ChatStore.reserveSeq); only ever grows.
CREATE TABLE parley_seq_reservations (
    run_id       TEXT    NOT NULL PRIMARY KEY,
    reserved_seq INTEGER NOT NULL
) STRICT;

CREATE TABLE parley_clarifies (
    save_order   INTEGER NOT NULL PRIMARY KEY,
    run_id       TEXT    NOT NULL,
    clarify_id   TEXT    NOT NULL,
    message_id   TEXT    NOT NULL,
    question     TEXT    NOT NULL,
    choices      TEXT    NOT NULL,
    multi_select INTEGER NOT NULL,
    resume_token TEXT,
    state        TEXT    NOT NULL,
    answer       TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    answered_at  INTEGER,
    UNIQUE (run_id, clarify_id)
) STRICT;

CREATE TABLE parley_feedback (
    message_id TEXT    NOT NULL,
    owner_id   TEXT    NOT NULL,
    thread_id  TEXT    NOT NULL,
    run_id     TEXT    NOT NULL,
    rating     TEXT    NOT NULL,
    comment    TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (message_id, owner_id)
) STRICT;

CREATE INDEX parley_feedback_thread ON parley_feedback (thread_id);

CREATE TABLE parley_host_actions (
    run_id       TEXT    NOT NULL,
    execution_id TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    arguments    TEXT    NOT NULL,
    result       TEXT,
    error        INTEGER NOT NULL,
    claimed_at   INTEGER NOT NULL,
    completed_at INTEGER,
    PRIMARY KEY (run_id, execution_id)
) STRICT;
