-- Entities (SQLite's 0013): the people, organizations, projects, services,
-- tools and places memories name, every name each goes by under its
-- case-folded key, and which memories mention which.
CREATE TABLE entities (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          text COLLATE "C" NOT NULL UNIQUE,  -- UUIDv7
    namespace   text COLLATE "C" NOT NULL,
    key         text COLLATE "C" NOT NULL,         -- the display name's key: the listing order
    name        text NOT NULL,
    entity_type integer NOT NULL,                  -- engram.v1.EntityType
    create_time bigint NOT NULL
);
CREATE INDEX entities_by_key ON entities (namespace, key, id);

CREATE TABLE entity_names (
    namespace text COLLATE "C" NOT NULL,
    key       text COLLATE "C" NOT NULL,
    entity_id text COLLATE "C" NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    name      text NOT NULL,
    PRIMARY KEY (namespace, key)
);
CREATE INDEX entity_names_by_entity ON entity_names (entity_id);

CREATE TABLE memory_entities (
    memory_seq bigint NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    entity_id  text COLLATE "C" NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    PRIMARY KEY (memory_seq, entity_id)
);
CREATE INDEX memory_entities_by_entity ON memory_entities (entity_id, memory_seq);

-- The memories stored before this migration name their entities once the
-- server's backfill has read them (SQLite's 0013).
INSERT INTO engram_meta (key, value)
    SELECT 'entity_backfill_through', CAST(coalesce(max(seq), 0) AS text) FROM memories;
INSERT INTO engram_meta (key, value) VALUES ('entity_backfill_after', '0');
