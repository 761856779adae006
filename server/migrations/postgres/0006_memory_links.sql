-- Links between memories that stay valid side by side (SQLite's 0014):
-- one row each way, gone with either memory.
CREATE TABLE memory_links (
    namespace   text COLLATE "C" NOT NULL,
    memory_id   text COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    other_id    text COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    kind        integer NOT NULL,             -- engram.v1.MemoryLinkKind
    reason      text NOT NULL,
    create_time bigint NOT NULL,
    PRIMARY KEY (memory_id, other_id, kind)
);
CREATE INDEX memory_links_by_other ON memory_links (other_id);
