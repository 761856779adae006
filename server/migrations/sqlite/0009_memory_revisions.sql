-- The history of every memory: each create, merge, update, delete and
-- expiry, with its time, who made it (API key id and agent) and the fields
-- it changed. Triggers write it, so every path that changes a memory — one
-- create or a group commit's multi-row upsert, an update, a delete, the
-- retention purge — is recorded in the same transaction as the change.

-- Who last wrote each memory: the writes set them with the row, so a
-- multi-row statement of several callers records each caller.
ALTER TABLE memories ADD COLUMN actor_key TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN actor_agent TEXT NOT NULL DEFAULT '';

CREATE TABLE memory_revisions (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace TEXT    NOT NULL,
    memory_id TEXT    NOT NULL,
    version   INTEGER NOT NULL,  -- the memory's version after the change (before, when removed)
    action    INTEGER NOT NULL,  -- engram.v1.RevisionAction: 1 created, 2 updated, 3 merged, 4 deleted, 5 expired
    time      INTEGER NOT NULL,  -- microseconds since the epoch
    key_id    TEXT    NOT NULL,  -- the API key's id ('' without keys, or for an expiry)
    agent_id  TEXT    NOT NULL,  -- the caller's scope agent_id
    changed   TEXT    NOT NULL   -- comma-separated names of the changed fields ('' when created or removed)
);
CREATE INDEX memory_revisions_by_memory ON memory_revisions (namespace, memory_id, seq);

CREATE TRIGGER memories_revision_created AFTER INSERT ON memories BEGIN
    INSERT INTO memory_revisions (namespace, memory_id, version, action, time, key_id, agent_id, changed)
    VALUES (new.namespace, new.id, new.version, 1, new.create_time, new.actor_key, new.actor_agent, '');
END;

-- A write bumps the version; bookkeeping that does not is no revision.
CREATE TRIGGER memories_revision_changed AFTER UPDATE ON memories
WHEN new.version IS NOT old.version BEGIN
    INSERT INTO memory_revisions (namespace, memory_id, version, action, time, key_id, agent_id, changed)
    VALUES (
        new.namespace, new.id, new.version,
        CASE WHEN new.seen_count > old.seen_count THEN 3 ELSE 2 END,
        new.update_time, new.actor_key, new.actor_agent,
        ltrim(
            CASE WHEN new.memory_type IS NOT old.memory_type THEN ',memory_type' ELSE '' END ||
            CASE WHEN new.content IS NOT old.content THEN ',content' ELSE '' END ||
            CASE WHEN new.summary IS NOT old.summary THEN ',summary' ELSE '' END ||
            CASE WHEN new.tags IS NOT old.tags THEN ',tags' ELSE '' END ||
            CASE WHEN new.metadata IS NOT old.metadata THEN ',metadata' ELSE '' END ||
            CASE WHEN new.importance IS NOT old.importance THEN ',importance' ELSE '' END ||
            CASE WHEN new.confidence IS NOT old.confidence THEN ',confidence' ELSE '' END ||
            CASE WHEN new.seen_count IS NOT old.seen_count THEN ',seen_count' ELSE '' END ||
            CASE WHEN new.expire_time IS NOT old.expire_time THEN ',expire_time' ELSE '' END ||
            CASE WHEN new.occurred_at IS NOT old.occurred_at THEN ',occurred_at' ELSE '' END,
            ','
        )
    );
END;

-- A memory past its expiry leaves by retention (or to make room for a live
-- twin): an expiry, by no one. Any other removal is a delete, by whoever
-- the deleting write named on the row just before.
CREATE TRIGGER memories_revision_removed AFTER DELETE ON memories BEGIN
    INSERT INTO memory_revisions (namespace, memory_id, version, action, time, key_id, agent_id, changed)
    SELECT old.namespace, old.id, old.version,
           CASE WHEN expired THEN 5 ELSE 4 END,
           now,
           CASE WHEN expired THEN '' ELSE old.actor_key END,
           CASE WHEN expired THEN '' ELSE old.actor_agent END,
           ''
    FROM (SELECT CAST(unixepoch('subsec') * 1000000 AS INTEGER) AS now) AS clock,
         (SELECT old.expire_time IS NOT NULL
                 AND old.expire_time <= CAST(unixepoch('subsec') * 1000000 AS INTEGER) AS expired) AS state;
END;
