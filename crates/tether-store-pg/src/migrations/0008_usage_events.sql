-- tether team store, schema version 8: the events a run's usage series is made of (an
-- iteration's start, its agent's and the judges' usage, its end: `tether_store::USAGE_KINDS`,
-- and a test checks that this list is that one) indexed by run on their own, so the runs list's
-- sparklines read a run's newest ones without walking past its tool calls and messages, whatever
-- plan PostgreSQL keeps for the statement. A query uses the index only when it names the same
-- kinds (`usage_events_before`).
CREATE INDEX events_usage_by_run ON events (run_id, seq)
    WHERE kind IN ('iteration_started', 'iteration_usage', 'judge_usage', 'iteration_completed', 'iteration_failed');
