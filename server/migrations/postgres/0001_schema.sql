-- Engram's schema on PostgreSQL: what server/migrations/sqlite/0001–0009
-- leave behind, as one migration. The tables, keys and triggers are the
-- SQLite ones, column for column, so both backends keep the same invariants;
-- see the SQLite migrations for the history of each column.
--
-- Conventions:
-- * Times are microseconds since the Unix epoch (bigint); enums are their
--   engram.v1 numbers (integer); counters and versions are bigint.
-- * Every text column is COLLATE "C": text compares and sorts by its bytes,
--   as SQLite's does, whatever locale the database was created with (an
--   export lists namespaces in the same order from either backend), and a
--   btree on it compares with memcmp rather than the locale's rules.
-- * jsonb where SQL reads inside the JSON (the tag and metadata filters of a
--   search, the summary of an episode's outcome); text where JSON is only
--   stored and handed back.
-- * A `seq` is an identity: insertion order, a paging tie-breaker, never
--   reused (unlike a SQLite rowid, which may be after the newest row is
--   deleted). It is not commit order; only the change feed's is (see
--   memory_changes below).
--
-- Advisory locks of Engram are the two-key form (1701734258, n), the first
-- key being "engr" in ASCII: n = 1 migrations (server/src/store/postgres/
-- migrate.rs), n = 2 the change feed.

-- Memories -----------------------------------------------------------------

CREATE TABLE memories (
    seq               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                text COLLATE "C" NOT NULL UNIQUE,     -- UUIDv7
    namespace         text COLLATE "C" NOT NULL,
    agent_id          text COLLATE "C" NOT NULL DEFAULT '',
    user_id           text COLLATE "C" NOT NULL DEFAULT '',
    project_id        text COLLATE "C" NOT NULL DEFAULT '',
    session_id        text COLLATE "C" NOT NULL DEFAULT '',
    -- The session it was written in, whatever its level: provenance, and
    -- the conversation whose neighbouring turns a search looks at.
    origin_session_id text COLLATE "C" NOT NULL DEFAULT '',
    level             integer NOT NULL,
    memory_type       integer NOT NULL,
    content           text COLLATE "C" NOT NULL,
    content_hash      text COLLATE "C" NOT NULL,           -- SHA-256 of the normalised content
    summary           text COLLATE "C" NOT NULL DEFAULT '',
    tags              jsonb NOT NULL DEFAULT '[]',          -- array of strings
    metadata          jsonb NOT NULL DEFAULT '{}',          -- object of strings
    importance        double precision NOT NULL,
    confidence        double precision NOT NULL,
    source            integer NOT NULL,
    seen_count        bigint NOT NULL DEFAULT 1,
    create_time       bigint NOT NULL,
    update_time       bigint NOT NULL,
    -- When the remembered thing happened. No default (SQLite's 0 was only
    -- there to add the column): a write that forgets it fails.
    occurred_at       bigint NOT NULL,
    expire_time       bigint,
    version           bigint NOT NULL DEFAULT 1,
    -- Who last wrote the memory (API key id, agent): the revision triggers
    -- read them, so a multi-row statement of several callers records each.
    actor_key         text COLLATE "C" NOT NULL DEFAULT '',
    actor_agent       text COLLATE "C" NOT NULL DEFAULT ''
);

-- One row per identical memory: the merge key of DESIGN §3.
CREATE UNIQUE INDEX memories_identity ON memories
    (namespace, level, agent_id, user_id, project_id, session_id, memory_type, content_hash);
CREATE INDEX memories_by_create_time ON memories (namespace, create_time, seq);
CREATE INDEX memories_by_importance ON memories (namespace, importance, create_time, seq);
CREATE INDEX memories_by_expire_time ON memories (expire_time) WHERE expire_time IS NOT NULL;
-- BuildContext lists preferences (memory_type 2) by importance.
CREATE INDEX memories_preferences ON memories (namespace, importance, create_time, seq)
    WHERE memory_type = 2;
-- A memory's neighbours in its conversation.
CREATE INDEX memories_by_origin_session ON memories (namespace, origin_session_id, seq)
    WHERE origin_session_id <> '';

-- A write's request_id and what that write returned, so a retry returns it again.
CREATE TABLE create_requests (
    namespace   text COLLATE "C" NOT NULL,
    request_id  text COLLATE "C" NOT NULL,
    fingerprint text COLLATE "C" NOT NULL,  -- of the request: a reused id with another request is refused
    results     text COLLATE "C" NOT NULL,  -- JSON array of [memory id, write result number]
    create_time bigint NOT NULL,
    PRIMARY KEY (namespace, request_id)
);
-- Retention purges the oldest first.
CREATE INDEX create_requests_by_create_time ON create_requests (create_time);

-- How often searches returned a memory, and when last: bookkeeping written
-- in batches, in rows of its own rather than rewriting whole memories. The
-- foreign key keeps it from outliving its memory even when a batch races a
-- delete on another replica (SQLite, with one writer, needs only a trigger):
-- such a batch fails with foreign_key_violation and is retried.
CREATE TABLE memory_access (
    memory_seq       bigint PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    access_count     bigint NOT NULL,
    last_access_time bigint NOT NULL
);

-- Memory vectors for semantic search: the vector of a memory's current
-- content (by content_hash) made by `model`; another model's or an older
-- content's is stale and embedded again.
CREATE TABLE memory_vectors (
    memory_seq   bigint PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    model        text COLLATE "C" NOT NULL,
    content_hash text COLLATE "C" NOT NULL,
    vector       bytea NOT NULL               -- little-endian f32s, L2-normalised
);
-- Floats do not compress: a large vector is moved out of line as it is,
-- without a compression attempt first.
ALTER TABLE memory_vectors ALTER COLUMN vector SET STORAGE EXTERNAL;

-- Facts about this database itself. `database_id` tells an index which
-- database it was built from, so one built from another is rebuilt.
CREATE TABLE engram_meta (
    key   text COLLATE "C" PRIMARY KEY,
    value text COLLATE "C" NOT NULL
);
INSERT INTO engram_meta (key, value)
    VALUES ('database_id', translate(gen_random_uuid()::text, '-', ''));

-- The change feed ------------------------------------------------------------
--
-- Every committed change to a memory, in commit order: indexes and
-- WatchMemories follow it by reading `seq > last`. That is only sound if
-- sequence numbers become visible in the order they were given: a follower
-- that has read seq 8 must never later find a 7. SQLite, with one writer,
-- gets this for free. Here several transactions on several replicas write at
-- once, and an identity handed out when a row is inserted is not commit
-- order: a transaction that took 7 and commits after another that took 8
-- makes a follower that already read 8 skip 7 for good.
--
-- So a change's row is written at commit, under a lock. The triggers below
-- are deferred constraint triggers: they fire when the transaction commits,
-- after all its statements, each with the row as that statement left it.
-- Each takes the transaction-scoped advisory lock (1701734258, 2), held
-- until the commit is done (visible to others) and only then released, and
-- appends the row, whose identity is taken under that lock. A transaction
-- that takes the lock after another one has released it takes a larger
-- number, and the other's rows are already visible; so every number below
-- a visible one is visible, or belongs to a transaction that rolled back
-- and never will be. Gaps are harmless: nothing fills them later.
--
-- The cost: commits that change memories take turns for the time between
-- their first feed row and the end of their commit (the WAL flush
-- included), so they cannot share a flush. Other work, the transactions'
-- statements themselves and every transaction that changes no memory, runs
-- in parallel as before. docs/postgres-feed-measurements.md has the numbers.
-- The identity's CACHE must stay 1: a cache hands blocks of numbers to
-- sessions ahead of time, out of commit order.
--
-- Alternatives considered: a counter row updated at commit behaves the same
-- but rewrites one hot row per change; followers that stop below the oldest
-- running transaction (pg_snapshot_xmin) let writers commit in parallel but
-- need feed positions of (xid, seq) rather than one number, stall on any
-- long transaction in the cluster, and deliver in xid order, not commit
-- order.
--
-- Nothing done under the lock waits for another transaction's row locks
-- (memory_changes has no foreign key; the vector trigger only reads), so a
-- holder always gets to its commit: keep it so. SET CONSTRAINTS ALL
-- IMMEDIATE would make the triggers fire at each statement: still ordered
-- (the lock is held to the end either way), but the lock would then be held
-- for the rest of the transaction, across waits for row locks.
CREATE TABLE memory_changes (
    seq        bigint GENERATED ALWAYS AS IDENTITY (CACHE 1) PRIMARY KEY,
    memory_seq bigint NOT NULL,   -- memories.seq of the changed memory (no foreign key: deletes stay)
    version    bigint NOT NULL,   -- memories.version after the change (before, when deleted)
    kind       integer NOT NULL   -- 1 created, 2 updated, 3 merged (reinforced), 4 deleted, 5 vector stored
);

-- Appends one change to the feed, in commit order (see above), and wakes
-- followers: NOTIFY is delivered when the transaction commits, once however
-- many changes it made (identical notifications of one transaction are
-- folded into one). The notification carries nothing; the feed is the record.
CREATE FUNCTION memory_changes_append(changed_seq bigint, changed_version bigint, change_kind integer)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(1701734258, 2);
    INSERT INTO memory_changes (memory_seq, version, kind)
        VALUES (changed_seq, changed_version, change_kind);
    PERFORM pg_notify('engram_changes', '');
END
$$;

CREATE FUNCTION memories_feed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM memory_changes_append(NEW.seq, NEW.version, 1);
    ELSIF TG_OP = 'UPDATE' THEN
        PERFORM memory_changes_append(NEW.seq, NEW.version,
            CASE WHEN NEW.seen_count > OLD.seen_count THEN 3 ELSE 2 END);
    ELSE
        PERFORM memory_changes_append(OLD.seq, OLD.version, 4);
    END IF;
    RETURN NULL;
END
$$;

-- Updates of every column a caller can see; access bookkeeping and the
-- actor columns alone are no change.
CREATE CONSTRAINT TRIGGER memories_feed
    AFTER INSERT OR DELETE OR UPDATE OF
        level, memory_type, content, summary, tags, metadata, importance, confidence, source,
        seen_count, update_time, expire_time, occurred_at, version
    ON memories DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION memories_feed();

-- A stored vector is a change the indexes follow (kind 5), at the memory's
-- version when the transaction commits.
CREATE FUNCTION memory_vectors_feed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    memory_version bigint;
BEGIN
    SELECT version INTO memory_version FROM memories WHERE seq = NEW.memory_seq;
    IF FOUND THEN
        PERFORM memory_changes_append(NEW.memory_seq, memory_version, 5);
    END IF;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER memory_vectors_feed
    AFTER INSERT OR UPDATE ON memory_vectors DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION memory_vectors_feed();

-- Memory history ---------------------------------------------------------------
--
-- Each create, merge, update, delete and expiry of a memory, with its time,
-- who made it and the fields it changed, written by triggers in the
-- transaction of the change (so every path that changes a memory is
-- recorded). Ordinary triggers: a memory's revisions are written under its
-- row lock, so their order per memory is already commit order.
CREATE TABLE memory_revisions (
    seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace text COLLATE "C" NOT NULL,
    memory_id text COLLATE "C" NOT NULL,
    version   bigint NOT NULL,   -- the memory's version after the change (before, when removed)
    action    integer NOT NULL,  -- engram.v1.RevisionAction: 1 created, 2 updated, 3 merged, 4 deleted, 5 expired
    time      bigint NOT NULL,
    key_id    text COLLATE "C" NOT NULL,  -- the API key's id ('' without keys, or for an expiry)
    agent_id  text COLLATE "C" NOT NULL,  -- the caller's scope agent_id
    changed   text COLLATE "C" NOT NULL   -- comma-separated names of the changed fields ('' when created or removed)
);
CREATE INDEX memory_revisions_by_memory ON memory_revisions (namespace, memory_id, seq);

CREATE FUNCTION memories_revision() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    now_micros bigint;
    expired    boolean;
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO memory_revisions (namespace, memory_id, version, action, time, key_id, agent_id, changed)
        VALUES (NEW.namespace, NEW.id, NEW.version, 1, NEW.create_time, NEW.actor_key, NEW.actor_agent, '');
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO memory_revisions (namespace, memory_id, version, action, time, key_id, agent_id, changed)
        VALUES (
            NEW.namespace, NEW.id, NEW.version,
            CASE WHEN NEW.seen_count > OLD.seen_count THEN 3 ELSE 2 END,
            NEW.update_time, NEW.actor_key, NEW.actor_agent,
            concat_ws(',',
                CASE WHEN NEW.memory_type IS DISTINCT FROM OLD.memory_type THEN 'memory_type' END,
                CASE WHEN NEW.content IS DISTINCT FROM OLD.content THEN 'content' END,
                CASE WHEN NEW.summary IS DISTINCT FROM OLD.summary THEN 'summary' END,
                CASE WHEN NEW.tags IS DISTINCT FROM OLD.tags THEN 'tags' END,
                CASE WHEN NEW.metadata IS DISTINCT FROM OLD.metadata THEN 'metadata' END,
                CASE WHEN NEW.importance IS DISTINCT FROM OLD.importance THEN 'importance' END,
                CASE WHEN NEW.confidence IS DISTINCT FROM OLD.confidence THEN 'confidence' END,
                CASE WHEN NEW.seen_count IS DISTINCT FROM OLD.seen_count THEN 'seen_count' END,
                CASE WHEN NEW.expire_time IS DISTINCT FROM OLD.expire_time THEN 'expire_time' END,
                CASE WHEN NEW.occurred_at IS DISTINCT FROM OLD.occurred_at THEN 'occurred_at' END
            )
        );
    ELSE
        -- A memory past its expiry leaves by retention (or to make room for
        -- a live twin): an expiry, by no one. Any other removal is a delete,
        -- by whoever the deleting write named on the row just before. One
        -- clock for a whole statement, as SQLite's is per statement.
        now_micros := (extract(epoch FROM statement_timestamp()) * 1000000)::bigint;
        expired := OLD.expire_time IS NOT NULL AND OLD.expire_time <= now_micros;
        INSERT INTO memory_revisions (namespace, memory_id, version, action, time, key_id, agent_id, changed)
        VALUES (
            OLD.namespace, OLD.id, OLD.version,
            CASE WHEN expired THEN 5 ELSE 4 END,
            now_micros,
            CASE WHEN expired THEN '' ELSE OLD.actor_key END,
            CASE WHEN expired THEN '' ELSE OLD.actor_agent END,
            ''
        );
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_revision_created AFTER INSERT ON memories
    FOR EACH ROW EXECUTE FUNCTION memories_revision();
-- A write bumps the version; bookkeeping that does not is no revision.
CREATE TRIGGER memories_revision_changed AFTER UPDATE ON memories
    FOR EACH ROW WHEN (NEW.version IS DISTINCT FROM OLD.version)
    EXECUTE FUNCTION memories_revision();
CREATE TRIGGER memories_revision_removed AFTER DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION memories_revision();

-- Episodes and what is learned from them -----------------------------------------

CREATE TABLE episodes (
    seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id            text COLLATE "C" NOT NULL UNIQUE,     -- UUIDv7
    namespace     text COLLATE "C" NOT NULL,
    agent_id      text COLLATE "C" NOT NULL DEFAULT '',
    user_id       text COLLATE "C" NOT NULL DEFAULT '',
    project_id    text COLLATE "C" NOT NULL DEFAULT '',
    session_id    text COLLATE "C" NOT NULL DEFAULT '',
    task_id       text COLLATE "C" NOT NULL,
    description   text COLLATE "C" NOT NULL,
    task_type     text COLLATE "C" NOT NULL DEFAULT '',
    context       text COLLATE "C" NOT NULL DEFAULT '{}', -- JSON: language, framework, domain, complexity, tags
    status        integer NOT NULL,                     -- engram.v1.EpisodeStatus
    step_count    bigint NOT NULL DEFAULT 0,
    last_step     bigint NOT NULL DEFAULT 0,            -- the highest step number logged
    score         double precision,                     -- set on completion
    outcome       jsonb,                                -- set on completion; rules read its summary
    create_time   bigint NOT NULL,
    update_time   bigint NOT NULL,
    complete_time bigint,
    version       bigint NOT NULL DEFAULT 1
);
CREATE INDEX episodes_by_task ON episodes (namespace, task_id, status, complete_time);
CREATE INDEX episodes_by_completion ON episodes (namespace, status, complete_time, seq);
CREATE INDEX episodes_by_create_time ON episodes (namespace, create_time, seq);

CREATE TABLE episode_steps (
    episode_seq bigint NOT NULL REFERENCES episodes (seq) ON DELETE CASCADE,
    step_number bigint NOT NULL,
    tool        text COLLATE "C" NOT NULL,
    action      text COLLATE "C" NOT NULL,
    parameters  text COLLATE "C" NOT NULL DEFAULT '',
    result      integer NOT NULL DEFAULT 0,             -- engram.v1.StepResult
    output      text COLLATE "C" NOT NULL DEFAULT '',
    latency_ms  bigint NOT NULL DEFAULT 0,
    time        bigint NOT NULL,
    PRIMARY KEY (episode_seq, step_number)
);

-- Rules learned per task ([WORKS], [AVOID]) and across tasks (task_id = '':
-- [HIGH SCORE], [CONSOLIDATED]).
CREATE TABLE task_rules (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          text COLLATE "C" NOT NULL UNIQUE,
    namespace   text COLLATE "C" NOT NULL,
    task_id     text COLLATE "C" NOT NULL,
    text        text COLLATE "C" NOT NULL,
    origin      integer NOT NULL,                       -- engram.v1.TaskRuleOrigin
    create_time bigint NOT NULL,
    UNIQUE (namespace, task_id, text)
);

-- Mistakes and successes reported by completed episodes, once each per namespace.
CREATE TABLE episode_lessons (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          text COLLATE "C" NOT NULL UNIQUE,
    namespace   text COLLATE "C" NOT NULL,
    kind        integer NOT NULL,                       -- 1 mistake, 2 success
    text        text COLLATE "C" NOT NULL,
    seen_count  bigint NOT NULL DEFAULT 1,
    last_seen   bigint NOT NULL,                        -- the namespace's tick when last reported
    create_time bigint NOT NULL,
    update_time bigint NOT NULL,
    UNIQUE (namespace, kind, text)
);
CREATE INDEX episode_lessons_by_recency ON episode_lessons (namespace, kind, last_seen);

CREATE TABLE mistake_cards (
    seq                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                    text COLLATE "C" NOT NULL UNIQUE,
    namespace             text COLLATE "C" NOT NULL,
    mistake_type          text COLLATE "C" NOT NULL,
    task_id               text COLLATE "C" NOT NULL,
    worker_id             text COLLATE "C" NOT NULL DEFAULT '',
    correct_decision      text COLLATE "C" NOT NULL,
    evidence              text COLLATE "C" NOT NULL DEFAULT '',
    lesson                text COLLATE "C" NOT NULL DEFAULT '',
    seen_count            bigint NOT NULL DEFAULT 1,
    first_seen_episode_id text COLLATE "C" NOT NULL DEFAULT '',
    last_seen_episode_id  text COLLATE "C" NOT NULL DEFAULT '',
    last_seen             bigint NOT NULL,              -- a counter: later sightings are larger
    create_time           bigint NOT NULL,
    update_time           bigint NOT NULL,
    version               bigint NOT NULL DEFAULT 1,
    UNIQUE (namespace, mistake_type, task_id, worker_id, correct_decision)
);
CREATE INDEX mistake_cards_by_strength ON mistake_cards (namespace, seen_count, last_seen);

-- Per-namespace learning state: completions counted towards consolidation.
CREATE TABLE learning_state (
    namespace          text COLLATE "C" PRIMARY KEY,
    completed_episodes bigint NOT NULL DEFAULT 0,
    tick               bigint NOT NULL DEFAULT 0,       -- orders reports of mistakes and cards
    last_consolidation bigint                           -- completed_episodes at the last run
);

-- Learning from outcomes (DESIGN §5) ---------------------------------------------

CREATE TABLE outcomes (
    seq                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                 text COLLATE "C" NOT NULL UNIQUE,
    namespace          text COLLATE "C" NOT NULL,
    agent_id           text COLLATE "C" NOT NULL,
    project_id         text COLLATE "C" NOT NULL DEFAULT '',
    task               text COLLATE "C" NOT NULL,
    task_type          text COLLATE "C" NOT NULL,
    task_type_inferred boolean NOT NULL,
    success            boolean NOT NULL,
    strategy           text COLLATE "C" NOT NULL,
    duration_ms        bigint,
    error              text COLLATE "C" NOT NULL DEFAULT '',
    feedback           text COLLATE "C" NOT NULL DEFAULT '',
    create_time        bigint NOT NULL
);
CREATE INDEX outcomes_by_agent ON outcomes (namespace, agent_id, project_id, task_type, seq);
CREATE INDEX outcomes_by_time ON outcomes (namespace, create_time);

-- One heuristic per (agent, project, task type, group of similar strategies).
CREATE TABLE heuristics (
    seq                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                  text COLLATE "C" NOT NULL UNIQUE,
    namespace           text COLLATE "C" NOT NULL,
    agent_id            text COLLATE "C" NOT NULL,
    project_id          text COLLATE "C" NOT NULL DEFAULT '',
    task_type           text COLLATE "C" NOT NULL,
    strategy            text COLLATE "C" NOT NULL,      -- the latest wording
    match_key           text COLLATE "C" NOT NULL,      -- the first wording: what outcomes are matched against
    confidence          double precision NOT NULL,
    occurrence_count    bigint NOT NULL,
    success_count       bigint NOT NULL,
    last_validated_time bigint NOT NULL,
    create_time         bigint NOT NULL,
    update_time         bigint NOT NULL,
    version             bigint NOT NULL DEFAULT 1
);
CREATE INDEX heuristics_by_task_type ON heuristics (namespace, agent_id, project_id, task_type);

-- One anti-pattern per (agent, project, task type, group of similar errors).
CREATE TABLE anti_patterns (
    seq                             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                              text COLLATE "C" NOT NULL UNIQUE,
    namespace                       text COLLATE "C" NOT NULL,
    agent_id                        text COLLATE "C" NOT NULL,
    project_id                      text COLLATE "C" NOT NULL DEFAULT '',
    task_type                       text COLLATE "C" NOT NULL,
    strategy                        text COLLATE "C" NOT NULL,
    error                           text COLLATE "C" NOT NULL,
    occurrence_count                bigint NOT NULL,
    better_alternative              text COLLATE "C" NOT NULL DEFAULT '',
    better_alternative_heuristic_id text COLLATE "C" NOT NULL DEFAULT '',
    last_seen_time                  bigint NOT NULL,
    create_time                     bigint NOT NULL,
    update_time                     bigint NOT NULL,
    version                         bigint NOT NULL DEFAULT 1
);
CREATE INDEX anti_patterns_by_task_type ON anti_patterns (namespace, agent_id, project_id, task_type);

-- What an agent may learn from; agents without a row learn from everything.
CREATE TABLE agent_scopes (
    namespace       text COLLATE "C" NOT NULL,
    agent_id        text COLLATE "C" NOT NULL,
    can_learn       text COLLATE "C" NOT NULL DEFAULT '[]',  -- JSON array of strings
    cannot_learn    text COLLATE "C" NOT NULL DEFAULT '[]',  -- JSON array of strings
    min_occurrences bigint NOT NULL,
    create_time     bigint NOT NULL,
    update_time     bigint NOT NULL,
    version         bigint NOT NULL DEFAULT 1,
    PRIMARY KEY (namespace, agent_id)
);
