-- Parley chat store, PostgreSQL. Times are epoch milliseconds (BIGINT, exact to the model's precision);
-- JSON is text written by chat-core's ChatJson and read back verbatim (no jsonb: the event log is
-- write-heavy and never queried by content). save_order (an identity) is the first-save order:
-- assigned by the first insert and kept when a row is replaced by an upsert.

CREATE TABLE parley_threads (
    id                 TEXT   NOT NULL PRIMARY KEY,
    owner_id           TEXT   NOT NULL,
    title              TEXT,
    runtime_session_id TEXT,
    model_id           TEXT,
    skill              TEXT,
    status             TEXT   NOT NULL,
    created_at         BIGINT NOT NULL,
    last_message_at    BIGINT NOT NULL
);

-- an owner's threads, newest activity first
CREATE INDEX parley_threads_owner_activity ON parley_threads (owner_id, last_message_at DESC, id DESC);

CREATE TABLE parley_messages (
    save_order        BIGINT  GENERATED ALWAYS AS IDENTITY,
    id                TEXT    NOT NULL PRIMARY KEY,
    thread_id         TEXT    NOT NULL,
    run_id            TEXT    NOT NULL,
    parent_message_id TEXT,
    kind              TEXT    NOT NULL,
    top_level         BOOLEAN NOT NULL,
    status            TEXT    NOT NULL,
    created_at        BIGINT  NOT NULL,
    body              TEXT    NOT NULL
);

-- a thread's user and assistant messages, paged backwards from a cursor; also a thread's messages
CREATE INDEX parley_messages_thread_top ON parley_messages (thread_id, top_level, save_order);
-- a run's step messages
CREATE INDEX parley_messages_run ON parley_messages (run_id, save_order);
-- the answers (variants) of a user message
CREATE INDEX parley_messages_variants ON parley_messages (parent_message_id, save_order) WHERE kind = 'assistant';

CREATE TABLE parley_runs (
    save_order                BIGINT  GENERATED ALWAYS AS IDENTITY,
    id                        TEXT    NOT NULL PRIMARY KEY,
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
    created_at                BIGINT  NOT NULL,
    started_at                BIGINT,
    finished_at               BIGINT,
    error_code                TEXT,
    error_message             TEXT,
    input_tokens              BIGINT,
    output_tokens             BIGINT,
    total_tokens              BIGINT,
    guardrails_failure_reason TEXT
);

-- runs by status (recovery at start-up), and a thread's runs by status (is the thread busy?)
CREATE INDEX parley_runs_status ON parley_runs (status, save_order);
CREATE INDEX parley_runs_thread_status ON parley_runs (thread_id, status, save_order);

-- The run event log; the primary key is the replay index: a reconnect reads a range of it.
CREATE TABLE parley_run_events (
    run_id     TEXT   NOT NULL,
    seq        BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    type       TEXT   NOT NULL,
    payload    TEXT   NOT NULL,
    PRIMARY KEY (run_id, seq)
);

-- The highest seq a run may have handed out (ChatStore.reserveSeq); only ever grows.
CREATE TABLE parley_seq_reservations (
    run_id       TEXT   NOT NULL PRIMARY KEY,
    reserved_seq BIGINT NOT NULL
);

CREATE TABLE parley_clarifies (
    save_order   BIGINT  GENERATED ALWAYS AS IDENTITY,
    run_id       TEXT    NOT NULL,
    clarify_id   TEXT    NOT NULL,
    message_id   TEXT    NOT NULL,
    question     TEXT    NOT NULL,
    choices      TEXT    NOT NULL,
    multi_select BOOLEAN NOT NULL,
    resume_token TEXT,
    state        TEXT    NOT NULL,
    answer       TEXT    NOT NULL,
    created_at   BIGINT  NOT NULL,
    answered_at  BIGINT,
    PRIMARY KEY (run_id, clarify_id)
);

CREATE TABLE parley_feedback (
    message_id TEXT   NOT NULL,
    owner_id   TEXT   NOT NULL,
    thread_id  TEXT   NOT NULL,
    run_id     TEXT   NOT NULL,
    rating     TEXT   NOT NULL,
    comment    TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (message_id, owner_id)
);

CREATE INDEX parley_feedback_thread ON parley_feedback (thread_id);

CREATE TABLE parley_host_actions (
    run_id       TEXT    NOT NULL,
    execution_id TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    arguments    TEXT    NOT NULL,
    result       TEXT,
    error        BOOLEAN NOT NULL,
    claimed_at   BIGINT  NOT NULL,
    completed_at BIGINT,
    PRIMARY KEY (run_id, execution_id)
);
