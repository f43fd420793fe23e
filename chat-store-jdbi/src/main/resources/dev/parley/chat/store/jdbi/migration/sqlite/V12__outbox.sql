-- The outbox (chat-core's OutboxStore): notifications of runs' ends and input requests, one row per event and
-- destination (a webhook endpoint), written in the transaction that stores the run's end or its input, and
-- removed once delivered. A row holds ids and states only: no message text, no owner.
--
-- Dispatchers of several host instances share the rows by claims: claimed_by and lease_until say who delivers
-- a row until when; a row whose lease ended may be claimed again (its host died). A row given up on keeps
-- failed_at until it is purged. A row belongs to its thread (ON DELETE CASCADE): deleting the thread, and so
-- erasing its owner, removes it, overwritten with zeros as every deleted row (PRAGMA secure_delete, see V7).

CREATE TABLE parley_outbox (
    message_id      TEXT    NOT NULL,
    destination     TEXT    NOT NULL,
    thread_id       TEXT    NOT NULL REFERENCES parley_threads (id) ON DELETE CASCADE,
    run_id          TEXT    NOT NULL,
    type            TEXT    NOT NULL,
    run_status      TEXT    NOT NULL,
    input_id        TEXT,
    input_kind      TEXT,
    occurred_at     INTEGER NOT NULL,
    attempts        INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    claimed_by      TEXT,
    lease_until     INTEGER,
    failed_at       INTEGER,
    PRIMARY KEY (message_id, destination)
) STRICT;

-- the rows due for delivery, oldest first (pending rows have no failed_at)
CREATE INDEX parley_outbox_due ON parley_outbox (next_attempt_at) WHERE failed_at IS NULL;
-- the rows given up on (counts, purges)
CREATE INDEX parley_outbox_failed ON parley_outbox (failed_at) WHERE failed_at IS NOT NULL;
-- a thread's rows (the cascade's lookup)
CREATE INDEX parley_outbox_thread ON parley_outbox (thread_id);
