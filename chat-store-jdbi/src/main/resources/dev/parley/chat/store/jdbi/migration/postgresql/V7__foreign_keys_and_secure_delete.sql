-- Deletion is final: every row belongs to its thread, and the database says so. Foreign keys with ON DELETE
-- CASCADE go from runs, messages, remembered approvals and feedback to their thread, and from events, seq
-- reservations, pending inputs and host-action executions to their run. Deleting a thread's row deletes
-- all of it in the same statement, and a write of a row whose thread (or run) is gone fails (ChatStore.write
-- then throws ThreadGoneException) instead of bringing erased data back.
--
-- Rows left behind by older versions would fail the new keys: a write of a stopped run could store rows
-- after its thread was deleted. Those orphans (rows of a thread or run that does not exist) are deleted
-- first, so the upgrade cannot fail on them; nobody could read them anyway, every read goes through the
-- thread.
--
-- Each key is checked against the existing rows once, here; every child column already leads an index
-- (the cascades find a thread's or a run's rows by it).
--
-- (The file's name matches SQLite's version 7, which also makes its search indexes delete for good; here
-- the search vectors are columns of the rows, gone with them. What a deleted row leaves in PostgreSQL's
-- files until VACUUM: see the module's README, "Erasure", and JdbiChatStore.reclaimErasedSpace.)

DELETE FROM parley_runs r WHERE NOT EXISTS (SELECT 1 FROM parley_threads t WHERE t.id = r.thread_id);
DELETE FROM parley_messages m WHERE NOT EXISTS (SELECT 1 FROM parley_threads t WHERE t.id = m.thread_id);
DELETE FROM parley_thread_approvals a WHERE NOT EXISTS (SELECT 1 FROM parley_threads t WHERE t.id = a.thread_id);
DELETE FROM parley_feedback f WHERE NOT EXISTS (SELECT 1 FROM parley_threads t WHERE t.id = f.thread_id);
DELETE FROM parley_run_events e WHERE NOT EXISTS (SELECT 1 FROM parley_runs r WHERE r.id = e.run_id);
DELETE FROM parley_seq_reservations s WHERE NOT EXISTS (SELECT 1 FROM parley_runs r WHERE r.id = s.run_id);
DELETE FROM parley_inputs i WHERE NOT EXISTS (SELECT 1 FROM parley_runs r WHERE r.id = i.run_id);
DELETE FROM parley_host_actions h WHERE NOT EXISTS (SELECT 1 FROM parley_runs r WHERE r.id = h.run_id);

ALTER TABLE parley_runs ADD CONSTRAINT parley_runs_thread
    FOREIGN KEY (thread_id) REFERENCES parley_threads (id) ON DELETE CASCADE;
ALTER TABLE parley_messages ADD CONSTRAINT parley_messages_thread
    FOREIGN KEY (thread_id) REFERENCES parley_threads (id) ON DELETE CASCADE;
ALTER TABLE parley_thread_approvals ADD CONSTRAINT parley_thread_approvals_thread
    FOREIGN KEY (thread_id) REFERENCES parley_threads (id) ON DELETE CASCADE;
ALTER TABLE parley_feedback ADD CONSTRAINT parley_feedback_thread_fk
    FOREIGN KEY (thread_id) REFERENCES parley_threads (id) ON DELETE CASCADE;
ALTER TABLE parley_run_events ADD CONSTRAINT parley_run_events_run
    FOREIGN KEY (run_id) REFERENCES parley_runs (id) ON DELETE CASCADE;
ALTER TABLE parley_seq_reservations ADD CONSTRAINT parley_seq_reservations_run
    FOREIGN KEY (run_id) REFERENCES parley_runs (id) ON DELETE CASCADE;
ALTER TABLE parley_inputs ADD CONSTRAINT parley_inputs_run
    FOREIGN KEY (run_id) REFERENCES parley_runs (id) ON DELETE CASCADE;
ALTER TABLE parley_host_actions ADD CONSTRAINT parley_host_actions_run
    FOREIGN KEY (run_id) REFERENCES parley_runs (id) ON DELETE CASCADE;
