-- tether store, schema version 7: who drives a run is a lease in the store.
--
-- One row per run that was ever claimed. `token` is the fencing token: it grows with every
-- claim and never goes back, so a write presenting an older one comes from a holder that lost
-- the run. `expires_at_ms` is when the lease lapses unless renewed (0 once released).
CREATE TABLE run_leases (
    run_id        TEXT PRIMARY KEY REFERENCES runs(id),
    machine       TEXT NOT NULL,
    pid           INTEGER NOT NULL,
    workspace     TEXT NOT NULL,
    token         INTEGER NOT NULL CHECK (token > 0),
    claimed_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
) STRICT;
