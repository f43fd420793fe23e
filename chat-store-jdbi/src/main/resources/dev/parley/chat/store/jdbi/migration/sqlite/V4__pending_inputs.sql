-- Pending inputs: clarify questions, approvals and tools the person's browser runs, in one table.
-- request and answer are chat-core's JSON of InputRequest and InputAnswer ("kind" names the shape).
-- Every clarify of the previous table moves here as a clarify input (its id is the input id), so a
-- question a run waited on before the upgrade can still be answered after it.
CREATE TABLE parley_inputs (
    save_order   INTEGER NOT NULL PRIMARY KEY,
    run_id       TEXT    NOT NULL,
    input_id     TEXT    NOT NULL,
    message_id   TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    request      TEXT    NOT NULL,
    deadline     INTEGER,
    resume_token TEXT,
    state        TEXT    NOT NULL,
    answer       TEXT,
    created_at   INTEGER NOT NULL,
    resolved_at  INTEGER,
    UNIQUE (run_id, input_id)
) STRICT;

INSERT INTO parley_inputs (run_id, input_id, message_id, kind, request, deadline, resume_token, state, answer,
        created_at, resolved_at)
SELECT run_id, clarify_id, message_id, 'clarify',
       json_object('kind', 'clarify', 'question', question, 'choices', json(choices),
                   'multiSelect', json(CASE WHEN multi_select <> 0 THEN 'true' ELSE 'false' END)),
       NULL, resume_token, state,
       CASE WHEN state = 'ANSWERED' THEN json_object('kind', 'clarify', 'answer', json(answer)) END,
       created_at, answered_at
FROM parley_clarifies
ORDER BY save_order;

DROP TABLE parley_clarifies;

-- "Allow for this conversation": the tools a person allowed for a whole thread.
CREATE TABLE parley_thread_approvals (
    thread_id   TEXT    NOT NULL,
    tool_name   TEXT    NOT NULL,
    approved_at INTEGER NOT NULL,
    PRIMARY KEY (thread_id, tool_name)
) STRICT;
