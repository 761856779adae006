-- Episodes (task runs) with their steps, and what is learned from them:
-- task and global rules, de-duplicated mistakes and successes, mistake cards,
-- and per-namespace learning state. Times are microseconds since the epoch.

CREATE TABLE episodes (
    seq           INTEGER PRIMARY KEY,
    id            TEXT    NOT NULL UNIQUE,      -- UUIDv7
    namespace     TEXT    NOT NULL,
    agent_id      TEXT    NOT NULL DEFAULT '',
    user_id       TEXT    NOT NULL DEFAULT '',
    project_id    TEXT    NOT NULL DEFAULT '',
    session_id    TEXT    NOT NULL DEFAULT '',
    task_id       TEXT    NOT NULL,
    description   TEXT    NOT NULL,
    task_type     TEXT    NOT NULL DEFAULT '',
    context       TEXT    NOT NULL DEFAULT '{}', -- JSON: language, framework, domain, complexity, tags
    status        INTEGER NOT NULL,              -- engram.v1.EpisodeStatus
    step_count    INTEGER NOT NULL DEFAULT 0,
    last_step     INTEGER NOT NULL DEFAULT 0,    -- the highest step number logged
    score         REAL,                          -- set on completion
    outcome       TEXT,                          -- JSON outcome, set on completion
    create_time   INTEGER NOT NULL,
    update_time   INTEGER NOT NULL,
    complete_time INTEGER,
    version       INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX episodes_by_task ON episodes (namespace, task_id, status, complete_time);
CREATE INDEX episodes_by_completion ON episodes (namespace, status, complete_time, seq);
CREATE INDEX episodes_by_create_time ON episodes (namespace, create_time, seq);

CREATE TABLE episode_steps (
    episode_seq INTEGER NOT NULL REFERENCES episodes (seq) ON DELETE CASCADE,
    step_number INTEGER NOT NULL,
    tool        TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    parameters  TEXT    NOT NULL DEFAULT '',
    result      INTEGER NOT NULL DEFAULT 0,      -- engram.v1.StepResult
    output      TEXT    NOT NULL DEFAULT '',
    latency_ms  INTEGER NOT NULL DEFAULT 0,
    time        INTEGER NOT NULL,
    PRIMARY KEY (episode_seq, step_number)
) WITHOUT ROWID;

-- Rules learned per task ([WORKS], [AVOID]) and across tasks (task_id = '':
-- [HIGH SCORE], [CONSOLIDATED]).
CREATE TABLE task_rules (
    seq         INTEGER PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    namespace   TEXT    NOT NULL,
    task_id     TEXT    NOT NULL,
    text        TEXT    NOT NULL,
    origin      INTEGER NOT NULL,                -- engram.v1.TaskRuleOrigin
    create_time INTEGER NOT NULL,
    UNIQUE (namespace, task_id, text)
);

-- Mistakes and successes reported by completed episodes, once each per namespace.
CREATE TABLE episode_lessons (
    seq         INTEGER PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    namespace   TEXT    NOT NULL,
    kind        INTEGER NOT NULL,                -- 1 mistake, 2 success
    text        TEXT    NOT NULL,
    seen_count  INTEGER NOT NULL DEFAULT 1,
    last_seen   INTEGER NOT NULL,                -- the namespace's tick when last reported
    create_time INTEGER NOT NULL,
    update_time INTEGER NOT NULL,
    UNIQUE (namespace, kind, text)
);
CREATE INDEX episode_lessons_by_recency ON episode_lessons (namespace, kind, last_seen);

CREATE TABLE mistake_cards (
    seq                   INTEGER PRIMARY KEY,
    id                    TEXT    NOT NULL UNIQUE,
    namespace             TEXT    NOT NULL,
    mistake_type          TEXT    NOT NULL,
    task_id               TEXT    NOT NULL,
    worker_id             TEXT    NOT NULL DEFAULT '',
    correct_decision      TEXT    NOT NULL,
    evidence              TEXT    NOT NULL DEFAULT '',
    lesson                TEXT    NOT NULL DEFAULT '',
    seen_count            INTEGER NOT NULL DEFAULT 1,
    first_seen_episode_id TEXT    NOT NULL DEFAULT '',
    last_seen_episode_id  TEXT    NOT NULL DEFAULT '',
    last_seen             INTEGER NOT NULL,      -- a counter: later sightings are larger
    create_time           INTEGER NOT NULL,
    update_time           INTEGER NOT NULL,
    version               INTEGER NOT NULL DEFAULT 1,
    UNIQUE (namespace, mistake_type, task_id, worker_id, correct_decision)
);
CREATE INDEX mistake_cards_by_strength ON mistake_cards (namespace, seen_count, last_seen);

-- Per-namespace learning state: completions counted towards consolidation.
CREATE TABLE learning_state (
    namespace             TEXT    PRIMARY KEY,
    completed_episodes    INTEGER NOT NULL DEFAULT 0,
    tick                  INTEGER NOT NULL DEFAULT 0, -- orders reports of mistakes and cards
    last_consolidation    INTEGER                     -- completed_episodes at the last run
) WITHOUT ROWID;
