-- The outbox (chat-core's OutboxStore): notifications of runs' ends and input requests, one row per event and
-- destination (a webhook endpoint), written in the transaction that stores the run's end or its input, and
-- removed once delivered. A row holds ids and states only: no message text, no owner.
--
-- Dispatchers of several host instances share the rows by claims: claimed_by and lease_until say who delivers
-- a row until when; a row whose lease ended may be claimed again (its host died). A claim is a conditional
-- UPDATE, so of two instances racing for a row one wins. A row given up on keeps failed_at until it is purged.
-- A row belongs to its thread (ON DELETE CASCADE): deleting the thread, and so erasing its owner, removes it.

CREATE TABLE parley_outbox (
    message_id      TEXT    NOT NULL,
    destination     TEXT    NOT NULL,
    thread_id       TEXT    NOT NULL,
    run_id          TEXT    NOT NULL,
    type            TEXT    NOT NULL,
    run_status      TEXT    NOT NULL,
    input_id        TEXT,
    input_kind      TEXT,
    occurred_at     BIGINT  NOT NULL,
    attempts        INTEGER NOT NULL,
    next_attempt_at BIGINT  NOT NULL,
    claimed_by      TEXT,
    lease_until     BIGINT,
    failed_at       BIGINT,
    PRIMARY KEY (message_id, destination),
    CONSTRAINT parley_outbox_thread_fk FOREIGN KEY (thread_id) REFERENCES parley_threads (id) ON DELETE CASCADE
);

-- the rows due for delivery, oldest first (pending rows have no failed_at)
CREATE INDEX parley_outbox_due ON parley_outbox (next_attempt_at) WHERE failed_at IS NULL;
-- the rows given up on (counts, purges)
CREATE INDEX parley_outbox_failed ON parley_outbox (failed_at) WHERE failed_at IS NOT NULL;
-- a thread's rows (the cascade's lookup)
CREATE INDEX parley_outbox_thread ON parley_outbox (thread_id);
