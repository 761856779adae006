-- When the remembered thing happened (DESIGN §3), which search recency is
-- measured from. A memory stored before this column existed is taken to
-- have happened when it was stored. Microseconds since the epoch.

-- SQLite adds a NOT NULL column only with a default; every insert sets it.
ALTER TABLE memories ADD COLUMN occurred_at INTEGER NOT NULL DEFAULT 0;
UPDATE memories SET occurred_at = create_time;

-- Every column a caller can see, now occurred_at too. Recreated after the
-- fill above, which needs no entries in the change feed: the full-text
-- index format that holds occurred_at is new (index::document::FORMAT 2),
-- so the index is rebuilt from this table, and the vector index is loaded
-- from it at every start.
DROP TRIGGER memories_changed;
CREATE TRIGGER memories_changed AFTER UPDATE OF
    level, memory_type, content, summary, tags, metadata, importance, confidence, source,
    seen_count, update_time, expire_time, occurred_at, version
ON memories BEGIN
    INSERT INTO memory_changes (memory_seq, version, kind)
    VALUES (new.seq, new.version, CASE WHEN new.seen_count > old.seen_count THEN 3 ELSE 2 END);
END;
