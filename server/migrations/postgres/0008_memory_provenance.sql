-- Where each memory came from (SQLite's 0016): how it was first written
-- (engram.v1.WriteMethod), by which API key and agent, from which episode
-- the writer named, and for a Remember the SHA-256 of its transcript (and,
-- with --keep-transcripts, the transcript as screened). Gone with the memory.
CREATE TABLE memory_provenance (
    memory_id       text COLLATE "C" NOT NULL PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    namespace       text COLLATE "C" NOT NULL,
    method          integer NOT NULL,          -- engram.v1.WriteMethod
    key_id          text NOT NULL,             -- '' without --auth-keys
    agent_id        text NOT NULL,             -- the writer's scope agent_id
    episode_id      text COLLATE "C" NOT NULL, -- '' when the writer named none
    transcript_hash text NOT NULL,             -- hex SHA-256; '' unless remembered
    transcript      text NOT NULL,             -- '' unless kept
    create_time     bigint NOT NULL
);
CREATE INDEX memory_provenance_by_episode ON memory_provenance (namespace, episode_id)
    WHERE episode_id <> '';
