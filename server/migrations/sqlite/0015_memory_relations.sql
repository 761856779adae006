-- What a memory says of the entities it names, as (subject, predicate,
-- object): read by the model in the background when one is configured
-- (--llm-base-url), and shown by GetEntity beside what the rules read at
-- read time. Gone with the memory.
CREATE TABLE memory_relations (
    memory_seq  INTEGER NOT NULL,             -- memories.seq
    position    INTEGER NOT NULL,             -- the order the model gave
    subject_key TEXT    NOT NULL,             -- the subject's key (entities.key)
    predicate   TEXT    NOT NULL,
    object      TEXT    NOT NULL,
    PRIMARY KEY (memory_seq, position)
) WITHOUT ROWID;

CREATE TRIGGER memories_deleted_relations AFTER DELETE ON memories BEGIN
    DELETE FROM memory_relations WHERE memory_seq = old.seq;
END;

-- The model reads the memories in sequence order, moving
-- `entity_llm_after` on (from the first memory when a model is first
-- configured).
INSERT INTO engram_meta (key, value) VALUES ('entity_llm_after', '0');
