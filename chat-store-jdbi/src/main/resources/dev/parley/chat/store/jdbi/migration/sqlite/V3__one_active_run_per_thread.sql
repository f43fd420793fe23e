-- At most one run per thread is RUNNING or WAITING_FOR_INPUT, also across host instances: the engine's
-- "is the thread busy?" check and a run's insert are separate transactions, so only the database can
-- make two instances starting a run on one thread get one winner (ChatStore.write then fails CONFLICT).
--
-- Before this version two instances could both start one, so a database may hold threads with several
-- active runs. Each such thread keeps its newest active run (by save_order); the older ones end as
-- INTERRUPTED, as the engine ends a run whose host stopped (error code INTERRUPTED), and their pending
-- clarifies are closed. Their messages and event logs are left as they are (a terminal run's log needs
-- no end event: a reader stops at a finished run).

UPDATE parley_clarifies SET state = 'CANCELLED'
WHERE state = 'PENDING' AND run_id IN (
    SELECT older.id FROM parley_runs older
    WHERE older.status IN ('RUNNING', 'WAITING_FOR_INPUT')
      AND EXISTS (SELECT 1 FROM parley_runs newer
                  WHERE newer.thread_id = older.thread_id AND newer.save_order > older.save_order
                    AND newer.status IN ('RUNNING', 'WAITING_FOR_INPUT')));

UPDATE parley_runs
SET status = 'INTERRUPTED',
    finished_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER),
    error_code = 'INTERRUPTED',
    error_message = 'another run of the thread was active at the same time; upgrading to at most one '
        || 'active run per thread kept the newest'
WHERE status IN ('RUNNING', 'WAITING_FOR_INPUT')
  AND EXISTS (SELECT 1 FROM parley_runs newer
              WHERE newer.thread_id = parley_runs.thread_id AND newer.save_order > parley_runs.save_order
                AND newer.status IN ('RUNNING', 'WAITING_FOR_INPUT'));

CREATE UNIQUE INDEX parley_runs_one_active_per_thread ON parley_runs (thread_id)
    WHERE status IN ('RUNNING', 'WAITING_FOR_INPUT');
