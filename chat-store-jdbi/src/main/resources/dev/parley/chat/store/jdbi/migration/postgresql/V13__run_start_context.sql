-- The context a run was started in (W3C trace headers as a JSON object, ChatStore.saveStartContext), so that
-- a run followed again after a restart or by another instance is linked to the request that started it.
-- Null when none was kept. It goes with its run.
ALTER TABLE parley_runs ADD COLUMN start_context TEXT;
