-- Learning from outcomes (DESIGN §5): what agents report, the heuristics and
-- anti-patterns learned from it, and what each agent may learn from.
-- Times are microseconds since the epoch.

CREATE TABLE outcomes (
    seq                INTEGER PRIMARY KEY,
    id                 TEXT    NOT NULL UNIQUE,
    namespace          TEXT    NOT NULL,
    agent_id           TEXT    NOT NULL,
    project_id         TEXT    NOT NULL DEFAULT '',
    task               TEXT    NOT NULL,
    task_type          TEXT    NOT NULL,
    task_type_inferred INTEGER NOT NULL,
    success            INTEGER NOT NULL,
    strategy           TEXT    NOT NULL,
    duration_ms        INTEGER,
    error              TEXT    NOT NULL DEFAULT '',
    feedback           TEXT    NOT NULL DEFAULT '',
    create_time        INTEGER NOT NULL
);
CREATE INDEX outcomes_by_agent ON outcomes (namespace, agent_id, project_id, task_type, seq);
CREATE INDEX outcomes_by_time ON outcomes (namespace, create_time);

-- One heuristic per (agent, project, task type, group of similar strategies).
CREATE TABLE heuristics (
    seq                 INTEGER PRIMARY KEY,
    id                  TEXT    NOT NULL UNIQUE,
    namespace           TEXT    NOT NULL,
    agent_id            TEXT    NOT NULL,
    project_id          TEXT    NOT NULL DEFAULT '',
    task_type           TEXT    NOT NULL,
        strategy            TEXT    NOT NULL,              -- the latest wording
    match_key           TEXT    NOT NULL,              -- the first wording: what outcomes are matched against
    confidence          REAL    NOT NULL,
    occurrence_count    INTEGER NOT NULL,
    success_count       INTEGER NOT NULL,
    last_validated_time INTEGER NOT NULL,
    create_time         INTEGER NOT NULL,
    update_time         INTEGER NOT NULL,
    version             INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX heuristics_by_task_type ON heuristics (namespace, agent_id, project_id, task_type);

-- One anti-pattern per (agent, project, task type, group of similar errors).
CREATE TABLE anti_patterns (
    seq                             INTEGER PRIMARY KEY,
    id                              TEXT    NOT NULL UNIQUE,
    namespace                       TEXT    NOT NULL,
    agent_id                        TEXT    NOT NULL,
    project_id                      TEXT    NOT NULL DEFAULT '',
    task_type                       TEXT    NOT NULL,
    strategy                        TEXT    NOT NULL,
    error                           TEXT    NOT NULL,
    occurrence_count                INTEGER NOT NULL,
    better_alternative              TEXT    NOT NULL DEFAULT '',
    better_alternative_heuristic_id TEXT    NOT NULL DEFAULT '',
    last_seen_time                  INTEGER NOT NULL,
    create_time                     INTEGER NOT NULL,
    update_time                     INTEGER NOT NULL,
    version                         INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX anti_patterns_by_task_type ON anti_patterns (namespace, agent_id, project_id, task_type);

-- What an agent may learn from; agents without a row learn from everything.
CREATE TABLE agent_scopes (
    namespace       TEXT    NOT NULL,
    agent_id        TEXT    NOT NULL,
    can_learn       TEXT    NOT NULL DEFAULT '[]', -- JSON array of strings
    cannot_learn    TEXT    NOT NULL DEFAULT '[]', -- JSON array of strings
    min_occurrences INTEGER NOT NULL,
    create_time     INTEGER NOT NULL,
    update_time     INTEGER NOT NULL,
    version         INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (namespace, agent_id)
) WITHOUT ROWID;
