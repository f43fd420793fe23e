-- Pending inputs: clarify questions, approvals and tools the person's browser runs, in one table.
-- request and answer are chat-core's JSON of InputRequest and InputAnswer ("kind" names the shape),
-- stored as text like every JSON column here. Every clarify of the previous table moves here as a
-- clarify input (its id is the input id), so a question a run waited on before the upgrade can still be
-- answered after it.
CREATE TABLE parley_inputs (
    save_order   BIGINT GENERATED ALWAYS AS IDENTITY,
    run_id       TEXT   NOT NULL,
    input_id     TEXT   NOT NULL,
    message_id   TEXT   NOT NULL,
    kind         TEXT   NOT NULL,
    request      TEXT   NOT NULL,
    deadline     BIGINT,
    resume_token TEXT,
    state        TEXT   NOT NULL,
    answer       TEXT,
    created_at   BIGINT NOT NULL,
    resolved_at  BIGINT,
    PRIMARY KEY (run_id, input_id)
);

INSERT INTO parley_inputs (run_id, input_id, message_id, kind, request, deadline, resume_token, state, answer,
        created_at, resolved_at)
SELECT run_id, clarify_id, message_id, 'clarify',
       json_build_object('kind', 'clarify', 'question', question, 'choices', choices::json,
                         'multiSelect', multi_select)::text,
       NULL, resume_token, state,
       CASE WHEN state = 'ANSWERED' THEN json_build_object('kind', 'clarify', 'answer', answer::json)::text END,
       created_at, answered_at
FROM parley_clarifies
ORDER BY save_order;

DROP TABLE parley_clarifies;

-- "Allow for this conversation": the tools a person allowed for a whole thread.
CREATE TABLE parley_thread_approvals (
    thread_id   TEXT   NOT NULL,
    tool_name   TEXT   NOT NULL,
    approved_at BIGINT NOT NULL,
    PRIMARY KEY (thread_id, tool_name)
);
