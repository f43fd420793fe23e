-- The wait a model provider asked for before a failed run is tried again (its Retry-After, whole seconds),
-- kept with the run's error. NULL when it did not say, and for every run stored before this version.
ALTER TABLE parley_runs ADD COLUMN error_retry_after_seconds INTEGER;
