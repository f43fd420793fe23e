-- Where each run's runtime stream stood as far as its stored events go (ChatStore.findResumePoint): the
-- runtime's resume token and how many of the runtime's items after it are stored already. A restarted
-- host re-attaches to a run the runtime carries on from here, without a gap or a repeat in the run's log.
-- One row per run, replaced with the batch that stores the events it covers; it belongs to its run.
CREATE TABLE parley_resume_points (
    run_id TEXT   NOT NULL PRIMARY KEY REFERENCES parley_runs (id) ON DELETE CASCADE,
    token  TEXT   NOT NULL,
    skip   BIGINT NOT NULL,
    -- 1: a re-attached stream may start here; 0: the token only names the run in the runtime, for stopping it
    followable SMALLINT NOT NULL CHECK (followable IN (0, 1))
);
