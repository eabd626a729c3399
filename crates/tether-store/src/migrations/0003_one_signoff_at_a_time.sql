-- tether store, schema version 3: one sign-off of a goal at a time, attempt numbers that cannot
-- repeat, and cancellations recorded with who made them.

-- Concurrent sign-offs could number two attempts alike before this version: every goal's
-- attempts are renumbered in recording order (a no-op where they were right), so the unique
-- index holds.
UPDATE verdicts SET attempt = (
    SELECT COUNT(*) FROM verdicts AS earlier
    WHERE earlier.plan_path = verdicts.plan_path
      AND earlier.goal_id = verdicts.goal_id
      AND earlier.id <= verdicts.id
);
CREATE UNIQUE INDEX verdicts_attempt ON verdicts (plan_path, goal_id, attempt);

-- The sign-off running for a goal, if any: at most one per goal. The holder names its process
-- (`<pid>:<start time>`), so a sign-off whose process died is taken over.
CREATE TABLE signoffs_running (
    plan_path     TEXT    NOT NULL,
    goal_id       TEXT    NOT NULL,
    attempt       INTEGER NOT NULL,
    holder        TEXT    NOT NULL,
    started_at_ms INTEGER NOT NULL,
    PRIMARY KEY (plan_path, goal_id)
) STRICT;

-- Goals cancelled: by a person (`tether goal cancel`), or by the agent, which a person must
-- still confirm.
CREATE TABLE cancellations (
    id            INTEGER PRIMARY KEY,
    plan_path     TEXT    NOT NULL,
    goal_id       TEXT    NOT NULL,
    by_person     INTEGER NOT NULL CHECK (by_person IN (0, 1)),
    cancelled_by  TEXT    NOT NULL,
    reason        TEXT    NOT NULL,
    run_id        TEXT    REFERENCES runs (id),
    created_at_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX cancellations_by_goal ON cancellations (plan_path, goal_id, id);
