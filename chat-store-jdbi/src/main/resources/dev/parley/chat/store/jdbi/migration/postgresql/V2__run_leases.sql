-- Which host instance holds an active run, and until when (epoch milliseconds) unless it renews the
-- lease; another instance takes over a run whose lease expired. Empty for a single instance.
ALTER TABLE parley_runs ADD COLUMN lease_owner TEXT;
ALTER TABLE parley_runs ADD COLUMN lease_until BIGINT;
