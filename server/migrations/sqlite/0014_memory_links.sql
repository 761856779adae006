-- Links between memories that stay valid side by side: two that say
-- otherwise about the same thing, written with ContradictionPolicy LINK
-- (kind 1, conflicting). One row each way, so either memory lists the
-- other; gone with either memory.
CREATE TABLE memory_links (
    namespace   TEXT    NOT NULL,
    memory_id   TEXT    NOT NULL,             -- memories.id
    other_id    TEXT    NOT NULL,             -- memories.id
    kind        INTEGER NOT NULL,             -- engram.v1.MemoryLinkKind
    reason      TEXT    NOT NULL,
    create_time INTEGER NOT NULL,
    PRIMARY KEY (memory_id, other_id, kind)
) WITHOUT ROWID;
CREATE INDEX memory_links_by_other ON memory_links (other_id);

CREATE TRIGGER memories_deleted_links AFTER DELETE ON memories BEGIN
    DELETE FROM memory_links WHERE memory_id = old.id;
    DELETE FROM memory_links WHERE other_id = old.id;
END;
