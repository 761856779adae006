-- Validity in time (SQLite's 0012): a memory is true from `valid_from`
-- until `valid_to`, unset while it is still true; an invalidation names the
-- memory that replaced it and why, and removes nothing.
ALTER TABLE memories ADD COLUMN valid_from bigint NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN valid_to bigint;
ALTER TABLE memories ADD COLUMN invalidated_by text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN invalidation_reason text NOT NULL DEFAULT '';
-- Bookkeeping: the version stays, so neither the history nor the feed
-- records it.
UPDATE memories SET valid_from = occurred_at;

ALTER TABLE memory_revisions ADD COLUMN reason text NOT NULL DEFAULT '';
ALTER TABLE memory_revisions ADD COLUMN replaced_by text COLLATE "C" NOT NULL DEFAULT '';

CREATE OR REPLACE FUNCTION memories_revision() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    now_micros  bigint;
    expired     boolean;
    invalidated boolean;
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO memory_revisions (namespace, memory_id, version, action, time, key_id, agent_id, changed)
        VALUES (NEW.namespace, NEW.id, NEW.version, 1, NEW.create_time, NEW.actor_key, NEW.actor_agent, '');
    ELSIF TG_OP = 'UPDATE' THEN
        invalidated := OLD.valid_to IS NULL AND NEW.valid_to IS NOT NULL;
        INSERT INTO memory_revisions
            (namespace, memory_id, version, action, time, key_id, agent_id, changed, reason, replaced_by)
        VALUES (
            NEW.namespace, NEW.id, NEW.version,
            CASE WHEN invalidated THEN 6 WHEN NEW.seen_count > OLD.seen_count THEN 3 ELSE 2 END,
            NEW.update_time, NEW.actor_key, NEW.actor_agent,
            concat_ws(',',
                CASE WHEN NEW.memory_type IS DISTINCT FROM OLD.memory_type THEN 'memory_type' END,
                CASE WHEN NEW.content IS DISTINCT FROM OLD.content THEN 'content' END,
                CASE WHEN NEW.summary IS DISTINCT FROM OLD.summary THEN 'summary' END,
                CASE WHEN NEW.tags IS DISTINCT FROM OLD.tags THEN 'tags' END,
                CASE WHEN NEW.metadata IS DISTINCT FROM OLD.metadata THEN 'metadata' END,
                CASE WHEN NEW.importance IS DISTINCT FROM OLD.importance THEN 'importance' END,
                CASE WHEN NEW.confidence IS DISTINCT FROM OLD.confidence THEN 'confidence' END,
                CASE WHEN NEW.seen_count IS DISTINCT FROM OLD.seen_count THEN 'seen_count' END,
                CASE WHEN NEW.expire_time IS DISTINCT FROM OLD.expire_time THEN 'expire_time' END,
                CASE WHEN NEW.occurred_at IS DISTINCT FROM OLD.occurred_at THEN 'occurred_at' END,
                CASE WHEN NEW.valid_from IS DISTINCT FROM OLD.valid_from THEN 'valid_from' END,
                CASE WHEN NEW.valid_to IS DISTINCT FROM OLD.valid_to THEN 'valid_to' END
            ),
            CASE WHEN invalidated THEN NEW.invalidation_reason ELSE '' END,
            CASE WHEN invalidated THEN NEW.invalidated_by ELSE '' END
        );
    ELSE
        -- A memory past its expiry leaves by retention (or to make room for
        -- a live twin): an expiry, by no one. Any other removal is a delete,
        -- by whoever the deleting write named on the row just before. One
        -- clock for a whole statement, as SQLite's is per statement.
        now_micros := (extract(epoch FROM statement_timestamp()) * 1000000)::bigint;
        expired := OLD.expire_time IS NOT NULL AND OLD.expire_time <= now_micros;
        INSERT INTO memory_revisions (namespace, memory_id, version, action, time, key_id, agent_id, changed)
        VALUES (
            OLD.namespace, OLD.id, OLD.version,
            CASE WHEN expired THEN 5 ELSE 4 END,
            now_micros,
            CASE WHEN expired THEN '' ELSE OLD.actor_key END,
            CASE WHEN expired THEN '' ELSE OLD.actor_agent END,
            ''
        );
    END IF;
    RETURN NULL;
END
$$;
