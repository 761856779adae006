-- Memories, their full-text index, and create request ids (idempotency keys).
-- Times are microseconds since the Unix epoch; enums are their engram.v1 numbers.

CREATE TABLE memories (
    seq              INTEGER PRIMARY KEY,        -- the rowid: insertion order, paging tie-breaker
    id               TEXT    NOT NULL UNIQUE,    -- UUIDv7
    namespace        TEXT    NOT NULL,
    agent_id         TEXT    NOT NULL DEFAULT '',
    user_id          TEXT    NOT NULL DEFAULT '',
    project_id       TEXT    NOT NULL DEFAULT '',
    session_id       TEXT    NOT NULL DEFAULT '',
    level            INTEGER NOT NULL,
    memory_type      INTEGER NOT NULL,
    content          TEXT    NOT NULL,
    content_hash     TEXT    NOT NULL,           -- SHA-256 of the normalised content
    summary          TEXT    NOT NULL DEFAULT '',
    tags             TEXT    NOT NULL DEFAULT '[]', -- JSON array of strings
    metadata         TEXT    NOT NULL DEFAULT '{}', -- JSON object of strings
    importance       REAL    NOT NULL,
    confidence       REAL    NOT NULL,
    source           INTEGER NOT NULL,
    seen_count       INTEGER NOT NULL DEFAULT 1,
    access_count     INTEGER NOT NULL DEFAULT 0,
    create_time      INTEGER NOT NULL,
    update_time      INTEGER NOT NULL,
    last_access_time INTEGER,
    expire_time      INTEGER,
    version          INTEGER NOT NULL DEFAULT 1
);

-- One row per identical memory: the merge key of DESIGN §3.
CREATE UNIQUE INDEX memories_identity ON memories
    (namespace, level, agent_id, user_id, project_id, session_id, memory_type, content_hash);
CREATE INDEX memories_by_create_time ON memories (namespace, create_time, seq);
CREATE INDEX memories_by_importance ON memories (namespace, importance, create_time, seq);
CREATE INDEX memories_by_expire_time ON memories (expire_time) WHERE expire_time IS NOT NULL;

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    content, summary, tags,
    content = 'memories', content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, content, summary, tags)
    VALUES (new.seq, new.content, new.summary, new.tags);
END;

CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, summary, tags)
    VALUES ('delete', old.seq, old.content, old.summary, old.tags);
END;

-- Only text changes touch the index; access counters do not.
CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, summary, tags ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, summary, tags)
    VALUES ('delete', old.seq, old.content, old.summary, old.tags);
    INSERT INTO memories_fts (rowid, content, summary, tags)
    VALUES (new.seq, new.content, new.summary, new.tags);
END;

-- A write's request_id and what that write returned, so a retry returns it again.
CREATE TABLE create_requests (
    namespace   TEXT    NOT NULL,
    request_id  TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,  -- of the request, so a reused id with another request is refused
    results     TEXT    NOT NULL,  -- JSON array of [memory id, write result number]
    create_time INTEGER NOT NULL,
    PRIMARY KEY (namespace, request_id)
) WITHOUT ROWID;
