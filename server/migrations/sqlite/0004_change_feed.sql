-- The change feed of memories (DESIGN §7), which the search indexes follow,
-- replaces the FTS5 index that was kept inside every write transaction; and
-- access bookkeeping moves to a table of its own.

DROP TRIGGER memories_fts_insert;
DROP TRIGGER memories_fts_delete;
DROP TRIGGER memories_fts_update;
DROP TABLE memories_fts;

-- How often searches returned a memory, and when last: bookkeeping that is
-- written in batches for many memories at once, so it lives in rows of its
-- own, about a twentieth of a memory's row, rather than rewriting whole
-- memories (content and all) in the table that holds them.
CREATE TABLE memory_access (
    memory_seq       INTEGER PRIMARY KEY,  -- memories.seq
    access_count     INTEGER NOT NULL,
    last_access_time INTEGER NOT NULL
);
INSERT INTO memory_access (memory_seq, access_count, last_access_time)
    SELECT seq, access_count, coalesce(last_access_time, 0) FROM memories WHERE access_count > 0;
ALTER TABLE memories DROP COLUMN access_count;
ALTER TABLE memories DROP COLUMN last_access_time;

-- Every committed change to a memory, in commit order. AUTOINCREMENT: a
-- sequence number is never reused, even if the newest rows are removed.
CREATE TABLE memory_changes (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_seq INTEGER NOT NULL,  -- memories.seq of the changed memory
    version    INTEGER NOT NULL,  -- memories.version after the change (before, when deleted)
    kind       INTEGER NOT NULL   -- 1 created, 2 updated, 3 merged (reinforced), 4 deleted
);

CREATE TRIGGER memories_created AFTER INSERT ON memories BEGIN
    INSERT INTO memory_changes (memory_seq, version, kind) VALUES (new.seq, new.version, 1);
END;

-- Every column a caller can see.
CREATE TRIGGER memories_changed AFTER UPDATE OF
    level, memory_type, content, summary, tags, metadata, importance, confidence, source,
    seen_count, update_time, expire_time, version
ON memories BEGIN
    INSERT INTO memory_changes (memory_seq, version, kind)
    VALUES (new.seq, new.version, CASE WHEN new.seen_count > old.seen_count THEN 3 ELSE 2 END);
END;

CREATE TRIGGER memories_deleted AFTER DELETE ON memories BEGIN
    INSERT INTO memory_changes (memory_seq, version, kind) VALUES (old.seq, old.version, 4);
    DELETE FROM memory_access WHERE memory_seq = old.seq;
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
