-- WatchMemories (DESIGN §4, §7) follows the change feed of one namespace
-- and shows a watcher only what its scope may see — of memories that are
-- gone too. As SQLite's migration 0010: every change of a memory names its
-- namespace and memory, an index walks one namespace's changes in feed
-- order, and a removed memory leaves a tombstone with what visibility and
-- the watch filters read of it.

-- '' on the changes recorded before this migration (no watch can start
-- before it: cursors are handed out from now on) and on stored vectors,
-- which are nothing a watcher is told about. Adding a column with a
-- constant default rewrites no rows.
ALTER TABLE memory_changes ADD COLUMN namespace text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE memory_changes ADD COLUMN memory_id text COLLATE "C" NOT NULL DEFAULT '';

-- Partial: unnamed changes cost nothing here. A query uses it only when it
-- repeats the condition.
CREATE INDEX memory_changes_by_namespace ON memory_changes (namespace, seq)
    WHERE namespace <> '';

-- What a removed memory leaves: who could see it and what the watch
-- filters match (its level, type and tags, as they were when it went) —
-- never its content, summary or metadata. A memory id removed again (after
-- an import brought it back) keeps its latest tombstone.
CREATE TABLE memory_tombstones (
    namespace   text COLLATE "C" NOT NULL,
    memory_id   text COLLATE "C" NOT NULL,
    agent_id    text COLLATE "C" NOT NULL,
    user_id     text COLLATE "C" NOT NULL,
    project_id  text COLLATE "C" NOT NULL,
    session_id  text COLLATE "C" NOT NULL,
    level       integer NOT NULL,
    memory_type integer NOT NULL,
    tags        jsonb NOT NULL,  -- array of strings
    PRIMARY KEY (namespace, memory_id)
);

-- The feed's append, naming the memory (0001's three-argument form stays
-- for the vector trigger, whose changes are unnamed).
CREATE FUNCTION memory_changes_append(changed_seq bigint, changed_version bigint, change_kind integer,
                                      changed_namespace text, changed_memory_id text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(1701734258, 2);
    INSERT INTO memory_changes (memory_seq, version, kind, namespace, memory_id)
        VALUES (changed_seq, changed_version, change_kind, changed_namespace, changed_memory_id);
    PERFORM pg_notify('engram_changes', '');
END
$$;

-- The tombstone is written by the deferred feed trigger, in the transaction
-- that removed the memory, so a watcher reading the feed finds it with the
-- deletion (both commit together).
CREATE OR REPLACE FUNCTION memories_feed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM memory_changes_append(NEW.seq, NEW.version, 1, NEW.namespace, NEW.id);
    ELSIF TG_OP = 'UPDATE' THEN
        PERFORM memory_changes_append(NEW.seq, NEW.version,
            CASE WHEN NEW.seen_count > OLD.seen_count THEN 3 ELSE 2 END, NEW.namespace, NEW.id);
    ELSE
        PERFORM memory_changes_append(OLD.seq, OLD.version, 4, OLD.namespace, OLD.id);
        INSERT INTO memory_tombstones
            (namespace, memory_id, agent_id, user_id, project_id, session_id, level, memory_type, tags)
        VALUES (OLD.namespace, OLD.id, OLD.agent_id, OLD.user_id, OLD.project_id, OLD.session_id,
                OLD.level, OLD.memory_type, OLD.tags)
        ON CONFLICT (namespace, memory_id) DO UPDATE SET
            agent_id = EXCLUDED.agent_id, user_id = EXCLUDED.user_id,
            project_id = EXCLUDED.project_id, session_id = EXCLUDED.session_id,
            level = EXCLUDED.level, memory_type = EXCLUDED.memory_type, tags = EXCLUDED.tags;
    END IF;
    RETURN NULL;
END
$$;
