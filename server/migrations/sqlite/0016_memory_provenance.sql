-- Where each memory came from: how it was first written (engram.v1.WriteMethod),
-- by which API key and agent, from which episode the writer named, and for a
-- Remember the SHA-256 of the transcript it classified (and, with
-- --keep-transcripts, the transcript as screened). One row a memory, written
-- with it; gone with it. Memories written before this migration have none.
CREATE TABLE memory_provenance (
    memory_id       TEXT    NOT NULL PRIMARY KEY,  -- memories.id
    namespace       TEXT    NOT NULL,
    method          INTEGER NOT NULL,              -- engram.v1.WriteMethod
    key_id          TEXT    NOT NULL,              -- '' without --auth-keys
    agent_id        TEXT    NOT NULL,              -- the writer's scope agent_id
    episode_id      TEXT    NOT NULL,              -- '' when the writer named none
    transcript_hash TEXT    NOT NULL,              -- hex SHA-256; '' unless remembered
    transcript      TEXT    NOT NULL,              -- '' unless kept
    create_time     INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX memory_provenance_by_episode ON memory_provenance (namespace, episode_id)
    WHERE episode_id <> '';

CREATE TRIGGER memories_deleted_provenance AFTER DELETE ON memories BEGIN
    DELETE FROM memory_provenance WHERE memory_id = old.id;
END;
