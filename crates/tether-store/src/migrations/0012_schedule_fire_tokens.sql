-- tether store, schema version 12: a schedule's fire tokens never repeat.
--
-- A schedule's `fire` was a count of its fires from 0, so a schedule removed and added again
-- under its name counted from 0 again, and a fire of the removed one still going on held a
-- token the new one would hand out again: its end would have been recorded in the new row.
-- Now every token comes from one store-wide counter, `schedule_fire_tokens.last` (one row):
-- adding a schedule and claiming each of its fires take the counter's next value, which no
-- other row ever had nor will have. The counter starts 2^32 above every count of before, so no
-- token a scheduler still holds from before this version comes again (a count that never
-- reached 2^32 fires).
CREATE TABLE schedule_fire_tokens (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    last INTEGER NOT NULL
) STRICT;

INSERT INTO schedule_fire_tokens (id, last)
    SELECT 1, COALESCE(MAX(fire), 0) + 4294967296 FROM schedules;
