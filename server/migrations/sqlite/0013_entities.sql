-- Entities: the people, organizations, projects, services, tools and places
-- memories name. An entity has a display name (as first written) and every
-- name it goes by in `entity_names`, each under its case-folded key; a key
-- names one entity of a namespace. MergeEntities moves one entity's names
-- and mentions to another, so a key always leads to the entity it now
-- belongs to.
CREATE TABLE entities (
    seq         INTEGER PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,      -- UUIDv7
    namespace   TEXT    NOT NULL,
    key         TEXT    NOT NULL,             -- the display name's key: the listing order
    name        TEXT    NOT NULL,
    entity_type INTEGER NOT NULL,             -- engram.v1.EntityType
    create_time INTEGER NOT NULL
);
CREATE INDEX entities_by_key ON entities (namespace, key, id);

CREATE TABLE entity_names (
    namespace TEXT NOT NULL,
    key       TEXT NOT NULL,
    entity_id TEXT NOT NULL,                  -- entities.id
    name      TEXT NOT NULL,                  -- as first written
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID;
CREATE INDEX entity_names_by_entity ON entity_names (entity_id);

-- Which entities a memory mentions: derived from its content when it is
-- written or its content changes, and gone with the memory.
CREATE TABLE memory_entities (
    memory_seq INTEGER NOT NULL,              -- memories.seq
    entity_id  TEXT    NOT NULL,              -- entities.id
    PRIMARY KEY (memory_seq, entity_id)
) WITHOUT ROWID;
CREATE INDEX memory_entities_by_entity ON memory_entities (entity_id, memory_seq);

CREATE TRIGGER memories_deleted_entities AFTER DELETE ON memories BEGIN
    DELETE FROM memory_entities WHERE memory_seq = old.seq;
END;

-- The memories stored before this migration name their entities once the
-- server's backfill has read them: it links them in sequence order up to
-- `entity_backfill_through`, moving `entity_backfill_after` on.
INSERT INTO engram_meta (key, value)
    SELECT 'entity_backfill_through', CAST(coalesce(max(seq), 0) AS TEXT) FROM memories;
INSERT INTO engram_meta (key, value) VALUES ('entity_backfill_after', '0');
