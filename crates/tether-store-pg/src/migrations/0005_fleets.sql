-- tether team store, schema version 5: runs of many goals (`tether run --parallel`).
--
-- `fleets` is one row per run of many goals: its integration branch, the plan it works on, the
-- repository's shared remote its goals' workers fetch from and push to (`remote` NULL: its
-- goals work on the coordinating machine), the budgets its goals' runs share (`budget`, JSON;
-- NULL: none) and how it ended (`outcome` NULL while it goes on).
-- `fleet_goals` is one row per goal of it, in the plan's order (`position`), with where the
-- goal stands (`state`), the goal run working on it now or last (`run_id`) and the machine it
-- works on. `token` and `expires_at_ms` are a goal's lease for the worker working on it:
-- `token` grows with every claim and never goes back (0: never claimed), `expires_at_ms` is
-- when the lease lapses unless renewed (0 once the worker reported the goal's end), and
-- `renewed_at_ms` when the worker last claimed or renewed it (its heartbeat).
CREATE TABLE fleets (
    id            TEXT    PRIMARY KEY,
    workspace     TEXT    NOT NULL,
    machine       TEXT    NOT NULL,
    plan_path     TEXT    NOT NULL,
    branch        TEXT    NOT NULL,
    remote        TEXT,
    budget        TEXT,
    parallel      BIGINT  NOT NULL CHECK (parallel > 0),
    started_at_ms BIGINT  NOT NULL,
    ended_at_ms   BIGINT,
    outcome       TEXT
);

CREATE TABLE fleet_goals (
    fleet_id      TEXT    NOT NULL REFERENCES fleets(id),
    goal_id       TEXT    NOT NULL,
    position      BIGINT  NOT NULL,
    after         TEXT    NOT NULL,
    state         TEXT    NOT NULL,
    run_id        TEXT,
    machine       TEXT,
    token         BIGINT  NOT NULL DEFAULT 0,
    expires_at_ms BIGINT  NOT NULL DEFAULT 0,
    renewed_at_ms BIGINT,
    updated_at_ms BIGINT  NOT NULL,
    PRIMARY KEY (fleet_id, goal_id)
);

CREATE INDEX fleets_newest ON fleets (started_at_ms DESC, id DESC);
