-- The session a memory was written in, whatever its level (DESIGN §3):
-- provenance only — visibility still follows level and scope, and identical
-- memories from two sessions still merge (keeping the first one's origin).
-- Memories written one after another in one session are a conversation,
-- whose neighbouring turns lend each other relevance in search (DESIGN §4).
ALTER TABLE memories ADD COLUMN origin_session_id TEXT NOT NULL DEFAULT '';
UPDATE memories SET origin_session_id = session_id;

-- A memory's neighbours in its conversation: the one written just before and
-- just after it in the same session.
CREATE INDEX memories_by_origin_session ON memories (namespace, origin_session_id, seq)
    WHERE origin_session_id <> '';
