-- tether store, schema version 10: goals on a schedule (`tether schedule`).
--
-- `schedules` is one row per schedule of a workspace, named by the person (`name`, unique in
-- its workspace): when it fires (`timing`, as `every <secs>s` or `cron <expr>`), what each fire
-- starts (`work`, JSON: a Ralph run or a goal run) and whether it is paused. `fire` counts its
-- fires and is the token of the one going on: a scheduler fires only the fire it saw (`fire`
-- unchanged), so two schedulers never fire one schedule twice; `expires_at_ms` is when the
-- lease of the fire going on lapses unless its scheduler renews it (0: no fire going on).
-- `last_fire_ms` is when it last fired (NULL: never), `last_run_id` and `last_outcome` what
-- that fire's run was and how it ended (NULL while it goes on), `failures` its fires in a row
-- that did not end done, `overdue_at_ms` when its overdue notice was sent (NULL: it is not
-- overdue, or nobody was told yet).
CREATE TABLE schedules (
    workspace     TEXT NOT NULL,
    name          TEXT NOT NULL,
    timing        TEXT NOT NULL,
    work          TEXT NOT NULL,
    paused        INTEGER NOT NULL DEFAULT 0,
    created_at_ms INTEGER NOT NULL,
    fire          INTEGER NOT NULL DEFAULT 0,
    expires_at_ms INTEGER NOT NULL DEFAULT 0,
    machine       TEXT,
    last_fire_ms  INTEGER,
    last_run_id   TEXT,
    last_outcome  TEXT,
    failures      INTEGER NOT NULL DEFAULT 0,
    overdue_at_ms INTEGER,
    PRIMARY KEY (workspace, name)
) STRICT;
