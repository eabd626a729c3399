-- tether team store, schema version 1: the tables of the embedded store (at its version 4),
-- in PostgreSQL's types, plus where each run lives: its machine, workspace root and remote.
-- Enum-like columns hold the snake_case spellings of tether's vocabulary, without CHECKs, so a
-- new variant needs no migration. Row order where the embedded store used SQLite's rowid is an
-- identity column `ord`.

CREATE TABLE runs (
    id             TEXT    PRIMARY KEY,
    ord            BIGINT  GENERATED ALWAYS AS IDENTITY UNIQUE,
    kind           TEXT    NOT NULL,
    created_at_ms  BIGINT  NOT NULL,
    workspace      TEXT    NOT NULL,
    machine        TEXT    NOT NULL,
    workspace_root TEXT    NOT NULL,
    repo_remote    TEXT,
    spec           JSONB   NOT NULL,
    status         TEXT    NOT NULL,
    iteration      BIGINT  NOT NULL DEFAULT 0,
    updated_at_ms  BIGINT  NOT NULL,
    last_event_seq BIGINT  NOT NULL DEFAULT 0,
    state          JSONB   NOT NULL DEFAULT '{}'
);
CREATE INDEX runs_by_created ON runs (created_at_ms, ord);
CREATE INDEX runs_by_status ON runs (status);
CREATE INDEX runs_by_machine ON runs (machine, workspace_root);

-- The append-only journal. Appends hold a transaction-scoped advisory lock from their first
-- insert to their commit, so seqs become visible in order and "after seq N" misses nothing.
CREATE TABLE events (
    seq     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id  TEXT   REFERENCES runs (id),
    at_ms   BIGINT NOT NULL,
    kind    TEXT   NOT NULL,
    payload JSONB  NOT NULL
);
CREATE INDEX events_by_run ON events (run_id, seq);

CREATE FUNCTION tether_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only: % is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation';
END
$$;
CREATE TRIGGER events_are_append_only BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION tether_events_append_only();
CREATE TRIGGER events_are_never_truncated BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION tether_events_append_only();

-- Projection of iteration events, one row per (run, iteration).
CREATE TABLE iterations (
    run_id        TEXT   NOT NULL REFERENCES runs (id),
    n             BIGINT NOT NULL,
    started_at_ms BIGINT NOT NULL,
    ended_at_ms   BIGINT,
    outcome       TEXT,
    summary       TEXT,
    PRIMARY KEY (run_id, n)
);

-- Questions to a human. The first answer wins: UPDATE ... WHERE status = 'pending'.
CREATE TABLE questions (
    id              TEXT   PRIMARY KEY,
    ord             BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    run_id          TEXT   REFERENCES runs (id),
    thread_id       TEXT,
    question        TEXT   NOT NULL,
    context         TEXT   NOT NULL DEFAULT '',
    confidence      SMALLINT,
    status          TEXT   NOT NULL,
    created_at_ms   BIGINT NOT NULL,
    answer          TEXT,
    responder       TEXT,
    channel         TEXT,
    answered_at_ms  BIGINT,
    cancelled_at_ms BIGINT,
    options         JSONB  NOT NULL DEFAULT '[]',
    answer_choice   BIGINT
);
CREATE INDEX questions_by_status ON questions (status, created_at_ms);
CREATE INDEX questions_by_created ON questions (created_at_ms);
CREATE INDEX questions_by_run ON questions (run_id);
CREATE INDEX questions_by_thread ON questions (thread_id);

-- Where each question was offered, so a resumed run asks again without posting again.
CREATE TABLE question_posts (
    question_id  TEXT   NOT NULL REFERENCES questions (id),
    channel      TEXT   NOT NULL,
    external_ref JSONB  NOT NULL,
    posted_at_ms BIGINT NOT NULL,
    PRIMARY KEY (question_id, channel)
);

-- The per-stream "Agent Q #<n>" counter: `next` is the number the next topic gets.
CREATE TABLE topic_counters (
    stream TEXT   PRIMARY KEY,
    "next" BIGINT NOT NULL
);

-- Every sign-off attempt's decision, accepted or not, with its kind.
CREATE TABLE verdicts (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id          TEXT   REFERENCES runs (id),
    goal_id         TEXT   NOT NULL,
    plan_path       TEXT   NOT NULL,
    attempt         BIGINT NOT NULL,
    verify_exit     BIGINT,
    verdict         TEXT   NOT NULL,
    kind            TEXT   NOT NULL,
    reason          TEXT   NOT NULL,
    checks          JSONB  NOT NULL DEFAULT '[]',
    missing         JSONB  NOT NULL DEFAULT '[]',
    judge_model     TEXT,
    transcript_path TEXT,
    contract_hash   TEXT,
    created_at_ms   BIGINT NOT NULL
);
CREATE INDEX verdicts_by_goal ON verdicts (plan_path, goal_id, id);
CREATE INDEX verdicts_by_run ON verdicts (run_id);
CREATE UNIQUE INDEX verdicts_attempt ON verdicts (plan_path, goal_id, attempt);

-- Contract approval history; the newest row per (plan_path, goal_id) is in force.
CREATE TABLE contract_approvals (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    plan_path      TEXT   NOT NULL,
    goal_id        TEXT   NOT NULL,
    contract_hash  TEXT   NOT NULL,
    approved_by    TEXT   NOT NULL,
    approved_at_ms BIGINT NOT NULL
);
CREATE INDEX contract_approvals_by_goal ON contract_approvals (plan_path, goal_id, id);

-- The sign-off running for a goal, if any: at most one per goal.
CREATE TABLE signoffs_running (
    plan_path     TEXT   NOT NULL,
    goal_id       TEXT   NOT NULL,
    attempt       BIGINT NOT NULL,
    holder        TEXT   NOT NULL,
    started_at_ms BIGINT NOT NULL,
    PRIMARY KEY (plan_path, goal_id)
);

-- Goals cancelled: by a person, or by the agent, which a person must still confirm.
CREATE TABLE cancellations (
    id            BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    plan_path     TEXT    NOT NULL,
    goal_id       TEXT    NOT NULL,
    by_person     BOOLEAN NOT NULL,
    cancelled_by  TEXT    NOT NULL,
    reason        TEXT    NOT NULL,
    run_id        TEXT    REFERENCES runs (id),
    created_at_ms BIGINT  NOT NULL
);
CREATE INDEX cancellations_by_goal ON cancellations (plan_path, goal_id, id);
