-- Memory vectors for semantic search (DESIGN §7): the source of truth the
-- vector index is derived from. One row per memory: the vector of its
-- current content (by the normalised content hash) made by `model`; a row of
-- another model or an older content is stale and embedded again.
CREATE TABLE memory_vectors (
    memory_seq   INTEGER PRIMARY KEY,  -- memories.seq
    model        TEXT    NOT NULL,     -- the embedder's model id
    content_hash TEXT    NOT NULL,     -- memories.content_hash that was embedded
    vector       BLOB    NOT NULL      -- little-endian f32s, L2-normalised
);

-- A stored vector is a change the indexes follow (kind 5).
CREATE TRIGGER memory_vectors_stored AFTER INSERT ON memory_vectors BEGIN
    INSERT INTO memory_changes (memory_seq, version, kind)
        SELECT seq, version, 5 FROM memories WHERE seq = new.memory_seq;
END;

CREATE TRIGGER memory_vectors_replaced AFTER UPDATE ON memory_vectors BEGIN
    INSERT INTO memory_changes (memory_seq, version, kind)
        SELECT seq, version, 5 FROM memories WHERE seq = new.memory_seq;
END;

CREATE TRIGGER memories_deleted_vectors AFTER DELETE ON memories BEGIN
    DELETE FROM memory_vectors WHERE memory_seq = old.seq;
END;
