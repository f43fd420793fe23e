-- Search answers its first page at the cost of that page, however many texts match (see the module's README,
-- "Search"): a search reads the owner's matching texts newest first and stops once the page's threads are
-- found, instead of scoring every match.
--
-- Both FTS5 indexes are made again with a second column, owner_key: the owner's id as one word (the hex of
-- its UTF-8 bytes, so that no id is cut into several words or matches another's), so that a search asks the
-- index for the owner's texts only and another owner's texts cost it nothing. FTS5 hands out its matches in
-- rowid order, newest first when asked: the rowid is save_order, the first-save order.
--
-- The owner is not a column of parley_messages: each index reads its content from a view that adds it
-- (external content; the index holds only the tokens, as before). An external content index must be told a
-- deleted entry's old values: a message's are read from its thread, except when the thread itself is being
-- deleted (its row is gone when the cascade deletes the messages), so a thread's delete first takes its
-- messages' entries out (BEFORE DELETE), and a message's delete trigger does nothing once its thread is gone.
-- 'secure-delete' keeps deleted words out of the file, as since V7.

DROP TRIGGER parley_messages_search_insert;
DROP TRIGGER parley_messages_search_update;
DROP TRIGGER parley_messages_search_delete;
DROP TRIGGER parley_threads_search_insert;
DROP TRIGGER parley_threads_search_update;
DROP TRIGGER parley_threads_search_delete;
DROP TABLE parley_message_search;
DROP TABLE parley_title_search;

CREATE VIEW parley_message_search_content (save_order, text, owner_key) AS
SELECT m.save_order, m.search_text, hex(t.owner_id)
FROM parley_messages m JOIN parley_threads t ON t.id = m.thread_id;

CREATE VIEW parley_title_search_content (save_order, text, owner_key) AS
SELECT save_order, title, hex(owner_id) FROM parley_threads;

CREATE VIRTUAL TABLE parley_message_search USING fts5(
    text, owner_key, content = 'parley_message_search_content', content_rowid = 'save_order',
    tokenize = "unicode61 remove_diacritics 0 categories 'L* N*'");

CREATE VIRTUAL TABLE parley_title_search USING fts5(
    text, owner_key, content = 'parley_title_search_content', content_rowid = 'save_order',
    tokenize = "unicode61 remove_diacritics 0 categories 'L* N*'");

INSERT INTO parley_message_search (parley_message_search, rank) VALUES ('secure-delete', 1);
INSERT INTO parley_title_search (parley_title_search, rank) VALUES ('secure-delete', 1);

INSERT INTO parley_message_search (rowid, text, owner_key)
SELECT save_order, text, owner_key FROM parley_message_search_content WHERE text IS NOT NULL ORDER BY save_order;

INSERT INTO parley_title_search (rowid, text, owner_key)
SELECT save_order, text, owner_key FROM parley_title_search_content WHERE text IS NOT NULL ORDER BY save_order;

CREATE TRIGGER parley_messages_search_insert AFTER INSERT ON parley_messages
WHEN new.search_text IS NOT NULL BEGIN
    INSERT INTO parley_message_search (rowid, text, owner_key)
    SELECT new.save_order, new.search_text, hex(t.owner_id) FROM parley_threads t WHERE t.id = new.thread_id;
END;

CREATE TRIGGER parley_messages_search_update AFTER UPDATE OF search_text, thread_id ON parley_messages
WHEN old.search_text IS NOT new.search_text OR old.thread_id IS NOT new.thread_id BEGIN
    INSERT INTO parley_message_search (parley_message_search, rowid, text, owner_key)
    SELECT 'delete', old.save_order, old.search_text, hex(t.owner_id) FROM parley_threads t
    WHERE t.id = old.thread_id AND old.search_text IS NOT NULL;
    INSERT INTO parley_message_search (rowid, text, owner_key)
    SELECT new.save_order, new.search_text, hex(t.owner_id) FROM parley_threads t
    WHERE t.id = new.thread_id AND new.search_text IS NOT NULL;
END;

CREATE TRIGGER parley_messages_search_delete AFTER DELETE ON parley_messages
WHEN old.search_text IS NOT NULL BEGIN
    INSERT INTO parley_message_search (parley_message_search, rowid, text, owner_key)
    SELECT 'delete', old.save_order, old.search_text, hex(t.owner_id) FROM parley_threads t WHERE t.id = old.thread_id;
END;

CREATE TRIGGER parley_threads_search_insert AFTER INSERT ON parley_threads
WHEN new.title IS NOT NULL BEGIN
    INSERT INTO parley_title_search (rowid, text, owner_key) VALUES (new.save_order, new.title, hex(new.owner_id));
END;

CREATE TRIGGER parley_threads_search_update AFTER UPDATE OF title ON parley_threads
WHEN old.title IS NOT new.title BEGIN
    INSERT INTO parley_title_search (parley_title_search, rowid, text, owner_key)
    SELECT 'delete', old.save_order, old.title, hex(old.owner_id) WHERE old.title IS NOT NULL;
    INSERT INTO parley_title_search (rowid, text, owner_key)
    SELECT new.save_order, new.title, hex(new.owner_id) WHERE new.title IS NOT NULL;
END;

CREATE TRIGGER parley_threads_search_delete BEFORE DELETE ON parley_threads BEGIN
    INSERT INTO parley_message_search (parley_message_search, rowid, text, owner_key)
    SELECT 'delete', m.save_order, m.search_text, hex(old.owner_id) FROM parley_messages m
    WHERE m.thread_id = old.id AND m.search_text IS NOT NULL;
    INSERT INTO parley_title_search (parley_title_search, rowid, text, owner_key)
    SELECT 'delete', old.save_order, old.title, hex(old.owner_id) WHERE old.title IS NOT NULL;
END;
