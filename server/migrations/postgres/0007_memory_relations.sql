-- What a memory says of the entities it names, as (subject, predicate,
-- object): read by the model in the background when one is configured
-- (--llm-base-url), and shown by GetEntity beside what the rules read at
-- read time. Gone with the memory.
CREATE TABLE memory_relations (
    memory_seq  bigint NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    position    integer NOT NULL,                  -- the order the model gave
    subject_key text COLLATE "C" NOT NULL,         -- the subject's key (entities.key)
    predicate   text NOT NULL,
    object      text NOT NULL,
    PRIMARY KEY (memory_seq, position)
);

-- The model reads the memories in sequence order, moving
-- `entity_llm_after` on (from the first memory when a model is first
-- configured).
INSERT INTO engram_meta (key, value) VALUES ('entity_llm_after', '0');
