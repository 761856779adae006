-- WatchMemories (DESIGN §4, §7) follows the change feed of one namespace
-- and shows a watcher only what its scope may see — of memories that are
-- gone too. So every change of a memory names its namespace and memory, an
-- index walks one namespace's changes in feed order, and a removed memory
-- leaves a tombstone with what visibility and the watch filters read of it.

-- '' on the changes recorded before this migration: no watch can start
-- before it (cursors are handed out from now on), and naming them after
-- memories.seq could name the wrong memory, since the sequence number of a
-- deleted memory may be reused. The vector triggers (0005) leave their
-- changes unnamed too: a stored vector is nothing a watcher is told about.
ALTER TABLE memory_changes ADD COLUMN namespace TEXT NOT NULL DEFAULT '';
ALTER TABLE memory_changes ADD COLUMN memory_id TEXT NOT NULL DEFAULT '';

-- Partial: unnamed changes cost nothing here. A query uses it only when it
-- repeats the literal condition.
CREATE INDEX memory_changes_by_namespace ON memory_changes (namespace, seq)
    WHERE namespace <> '';

-- What a removed memory leaves: who could see it and what the watch
-- filters match (its level, type and tags, as they were when it went) —
-- never its content, summary or metadata. A memory id removed again (after
-- an import brought it back) keeps its latest tombstone.
CREATE TABLE memory_tombstones (
    namespace   TEXT    NOT NULL,
    memory_id   TEXT    NOT NULL,
    agent_id    TEXT    NOT NULL,
    user_id     TEXT    NOT NULL,
    project_id  TEXT    NOT NULL,
    session_id  TEXT    NOT NULL,
    level       INTEGER NOT NULL,
    memory_type INTEGER NOT NULL,
    tags        TEXT    NOT NULL,  -- JSON array of strings
    PRIMARY KEY (namespace, memory_id)
) WITHOUT ROWID;

DROP TRIGGER memories_created;
CREATE TRIGGER memories_created AFTER INSERT ON memories BEGIN
    INSERT INTO memory_changes (memory_seq, version, kind, namespace, memory_id)
    VALUES (new.seq, new.version, 1, new.namespace, new.id);
END;

-- Every column a caller can see (as in 0006).
DROP TRIGGER memories_changed;
CREATE TRIGGER memories_changed AFTER UPDATE OF
    level, memory_type, content, summary, tags, metadata, importance, confidence, source,
    seen_count, update_time, expire_time, occurred_at, version
ON memories BEGIN
    INSERT INTO memory_changes (memory_seq, version, kind, namespace, memory_id)
    VALUES (new.seq, new.version, CASE WHEN new.seen_count > old.seen_count THEN 3 ELSE 2 END,
            new.namespace, new.id);
END;

DROP TRIGGER memories_deleted;
CREATE TRIGGER memories_deleted AFTER DELETE ON memories BEGIN
    INSERT INTO memory_changes (memory_seq, version, kind, namespace, memory_id)
    VALUES (old.seq, old.version, 4, old.namespace, old.id);
    INSERT OR REPLACE INTO memory_tombstones
        (namespace, memory_id, agent_id, user_id, project_id, session_id, level, memory_type, tags)
    VALUES (old.namespace, old.id, old.agent_id, old.user_id, old.project_id, old.session_id,
            old.level, old.memory_type, old.tags);
    DELETE FROM memory_access WHERE memory_seq = old.seq;
END;
