-- tether store, schema version 1.
-- Enum-like columns hold the snake_case spellings from src/vocab.rs; they carry no CHECK so a new
-- variant needs no table rebuild. JSON columns are checked with json_valid.

-- One row per run. The columns from `status` on are a projection of the run's events, written in
-- the same transaction as each event; `state` is the full RunState the others are taken from.
CREATE TABLE runs (
    id             TEXT    PRIMARY KEY NOT NULL,
    kind           TEXT    NOT NULL,
    created_at_ms  INTEGER NOT NULL,
    workspace      TEXT    NOT NULL,
    spec           TEXT    NOT NULL CHECK (json_valid(spec)),
    status         TEXT    NOT NULL,
    iteration      INTEGER NOT NULL DEFAULT 0,
    updated_at_ms  INTEGER NOT NULL,
    last_event_seq INTEGER NOT NULL DEFAULT 0,
    state          TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(state))
) STRICT;
CREATE INDEX runs_by_created ON runs (created_at_ms);
CREATE INDEX runs_by_status ON runs (status);

-- The append-only journal. AUTOINCREMENT so a seq is never reused, even after the newest row is
-- lost to a rolled-back transaction: readers resume from "after seq N" and must not miss a row.
CREATE TABLE events (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id  TEXT    REFERENCES runs (id),
    at_ms   INTEGER NOT NULL,
    kind    TEXT    NOT NULL,
    payload TEXT    NOT NULL CHECK (json_valid(payload))
) STRICT;
CREATE INDEX events_by_run ON events (run_id, seq);

CREATE TRIGGER events_are_append_only_update BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are append-only: UPDATE is not allowed');
END;
CREATE TRIGGER events_are_append_only_delete BEFORE DELETE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are append-only: DELETE is not allowed');
END;

-- Projection of iteration events, one row per (run, iteration).
CREATE TABLE iterations (
    run_id        TEXT    NOT NULL REFERENCES runs (id),
    n             INTEGER NOT NULL,
    started_at_ms INTEGER NOT NULL,
    ended_at_ms   INTEGER,
    outcome       TEXT,
    summary       TEXT,
    PRIMARY KEY (run_id, n)
) STRICT, WITHOUT ROWID;

-- Questions to a human. The first answer wins: it is written with
-- UPDATE ... WHERE status = 'pending', so a second answer changes nothing.
CREATE TABLE questions (
    id             TEXT    PRIMARY KEY NOT NULL,
    run_id         TEXT    REFERENCES runs (id),
    thread_id      TEXT,
    question       TEXT    NOT NULL,
    context        TEXT    NOT NULL DEFAULT '',
    confidence     INTEGER,
    status         TEXT    NOT NULL,
    created_at_ms  INTEGER NOT NULL,
    answer         TEXT,
    responder      TEXT,
    channel        TEXT,
    answered_at_ms INTEGER,
    cancelled_at_ms INTEGER
) STRICT;
CREATE INDEX questions_by_status ON questions (status, created_at_ms);
CREATE INDEX questions_by_created ON questions (created_at_ms);
CREATE INDEX questions_by_run ON questions (run_id);
CREATE INDEX questions_by_thread ON questions (thread_id);

-- Where each question was offered, so a resumed run asks again without posting again.
CREATE TABLE question_posts (
    question_id  TEXT    NOT NULL REFERENCES questions (id),
    channel      TEXT    NOT NULL,
    external_ref TEXT    NOT NULL CHECK (json_valid(external_ref)),
    posted_at_ms INTEGER NOT NULL,
    PRIMARY KEY (question_id, channel)
) STRICT, WITHOUT ROWID;

-- The per-stream "Agent Q #<n>" counter: `next` is the number the next topic gets.
CREATE TABLE topic_counters (
    stream TEXT    PRIMARY KEY NOT NULL,
    "next" INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- Every sign-off attempt's decision, accepted or not.
CREATE TABLE verdicts (
    id              INTEGER PRIMARY KEY,
    run_id          TEXT    REFERENCES runs (id),
    goal_id         TEXT    NOT NULL,
    plan_path       TEXT    NOT NULL,
    attempt         INTEGER NOT NULL,
    verify_exit     INTEGER,
    verdict         TEXT    NOT NULL,
    reason          TEXT    NOT NULL,
    checks          TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(checks)),
    missing         TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(missing)),
    judge_model     TEXT,
    transcript_path TEXT,
    contract_hash   TEXT,
    created_at_ms   INTEGER NOT NULL
) STRICT;
CREATE INDEX verdicts_by_goal ON verdicts (plan_path, goal_id, id);
CREATE INDEX verdicts_by_run ON verdicts (run_id);

-- Contract approval history; the newest row per (plan_path, goal_id) is in force.
CREATE TABLE contract_approvals (
    id             INTEGER PRIMARY KEY,
    plan_path      TEXT    NOT NULL,
    goal_id        TEXT    NOT NULL,
    contract_hash  TEXT    NOT NULL,
    approved_by    TEXT    NOT NULL,
    approved_at_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX contract_approvals_by_goal ON contract_approvals (plan_path, goal_id, id);
