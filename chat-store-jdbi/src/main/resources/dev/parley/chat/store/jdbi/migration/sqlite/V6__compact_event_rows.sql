-- Compact event rows: a row of parley_run_events may hold a span of a run's events, first_seq .. seq,
-- all text, thinking or tool-argument deltas of one message or tool call (type), stored as one JSON
-- document of their deltas and time offsets. The key's seq is then the span's LAST seq, so that a replay
-- after a cursor still reads one primary-key range (seq > cursor) and a run's last seq is still its
-- greatest key. first_seq is NULL for a row of one event (every row written before this version): its
-- payload is that event's JSON, as before. Old rows are read as they are; nothing is rewritten.
ALTER TABLE parley_run_events ADD COLUMN first_seq INTEGER;
