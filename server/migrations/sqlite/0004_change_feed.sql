-- The change feed of memories (DESIGN §7), which the search indexes follow,
-- replaces the FTS5 index that was kept inside every write transaction.

DROP TRIGGER memories_fts_insert;
DROP TRIGGER memories_fts_delete;
DROP TRIGGER memories_fts_update;
DROP TABLE memories_fts;

-- Every committed change to a memory, in commit order. AUTOINCREMENT: a
-- sequence number is never reused, even if the newest rows are removed.
CREATE TABLE memory_changes (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_seq INTEGER NOT NULL,  -- memories.seq of the changed memory
    kind       INTEGER NOT NULL   -- 1 created, 2 updated, 3 merged (reinforced), 4 deleted
);

CREATE TRIGGER memories_created AFTER INSERT ON memories BEGIN
    INSERT INTO memory_changes (memory_seq, kind) VALUES (new.seq, 1);
END;

-- Every column a caller can see, but not the access bookkeeping (access_count,
-- last_access_time), which searches update and which no index uses.
CREATE TRIGGER memories_changed AFTER UPDATE OF
    level, memory_type, content, summary, tags, metadata, importance, confidence, source,
    seen_count, update_time, expire_time, version
ON memories BEGIN
    INSERT INTO memory_changes (memory_seq, kind)
    VALUES (new.seq, CASE WHEN new.seen_count > old.seen_count THEN 3 ELSE 2 END);
END;

CREATE TRIGGER memories_deleted AFTER DELETE ON memories BEGIN
    INSERT INTO memory_changes (memory_seq, kind) VALUES (old.seq, 4);
END;

-- Facts about this database itself. `database_id` tells an index which
-- database it was built from, so one built from another (a restored backup,
-- a copied folder) is rebuilt rather than trusted.
CREATE TABLE engram_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO engram_meta (key, value) VALUES ('database_id', lower(hex(randomblob(16))));

-- BuildContext lists preferences by importance: without an index of their
-- own that walks every memory of the namespace. Partial (preferences are
-- memory_type 2), so other memories cost nothing to write.
CREATE INDEX memories_preferences ON memories (namespace, importance, create_time, seq)
    WHERE memory_type = 2;
