-- Search answers its first page at the cost of that page, however many texts match (see the module's README,
-- "Search"): a search lists the owner's matching texts newest first and stops once the page's threads are
-- found, instead of scoring every match.
--
-- A message row names its thread's owner (written with the row from the thread's, which the upsert reads
-- anyway; a thread never changes owner), and a B-tree over the searchable messages by owner and first-save
-- order lets PostgreSQL read one owner's texts newest first and stop at the page. The planner still takes
-- the GIN index where the query's words are rare (then every match is read, and there are few); the B-tree
-- where they are common (then the first matches read fill the page). Another owner's texts are in neither
-- path.

ALTER TABLE parley_messages ADD COLUMN owner_id TEXT;

UPDATE parley_messages m SET owner_id = t.owner_id FROM parley_threads t WHERE t.id = m.thread_id;

CREATE INDEX parley_messages_search_newest ON parley_messages (owner_id, save_order)
    WHERE search_vector IS NOT NULL;
