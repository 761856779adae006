-- Validity in time: a memory is true from `valid_from` (when the
-- remembered thing happened, unless said otherwise) until `valid_to`, unset
-- while it is still true. A contradiction or a superseding memory does not
-- remove the old one: it sets `valid_to`, names the memory that replaced it
-- (`invalidated_by`, an id; '' when none did) and why. Nothing true once is
-- deleted by a contradiction, so "what did we believe then?" stays
-- answerable.
ALTER TABLE memories ADD COLUMN valid_from INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN valid_to INTEGER;
ALTER TABLE memories ADD COLUMN invalidated_by TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN invalidation_reason TEXT NOT NULL DEFAULT '';
-- Bookkeeping, not a change a caller made: no revision, no feed change
-- (neither trigger watches valid_from, and the version stays).
UPDATE memories SET valid_from = occurred_at;

-- An invalidation is a revision of its own (engram.v1.RevisionAction 6),
-- with its reason and the memory that replaced it.
ALTER TABLE memory_revisions ADD COLUMN reason TEXT NOT NULL DEFAULT '';
ALTER TABLE memory_revisions ADD COLUMN replaced_by TEXT NOT NULL DEFAULT '';

DROP TRIGGER memories_revision_changed;
CREATE TRIGGER memories_revision_changed AFTER UPDATE ON memories
WHEN new.version IS NOT old.version BEGIN
    INSERT INTO memory_revisions
        (namespace, memory_id, version, action, time, key_id, agent_id, changed, reason, replaced_by)
    SELECT new.namespace, new.id, new.version,
        CASE WHEN invalidated THEN 6 WHEN new.seen_count > old.seen_count THEN 3 ELSE 2 END,
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
            CASE WHEN new.occurred_at IS NOT old.occurred_at THEN ',occurred_at' ELSE '' END ||
            CASE WHEN new.valid_from IS NOT old.valid_from THEN ',valid_from' ELSE '' END ||
            CASE WHEN new.valid_to IS NOT old.valid_to THEN ',valid_to' ELSE '' END,
            ','
        ),
        CASE WHEN invalidated THEN new.invalidation_reason ELSE '' END,
        CASE WHEN invalidated THEN new.invalidated_by ELSE '' END
    FROM (SELECT old.valid_to IS NULL AND new.valid_to IS NOT NULL AS invalidated);
END;
