-- tether team store, schema version 9: a schedule's fire tokens never repeat.
--
-- A schedule's `fire` was a count of its fires from 0, so a schedule removed and added again
-- under its name counted from 0 again, and a fire of the removed one still going on held a
-- token the new one would hand out again: its end would have been recorded in the new row.
-- Now every token comes from one sequence, `schedule_fire_tokens`: adding a schedule and
-- claiming each of its fires take its next value, which no other row ever had nor will have.
-- The sequence starts 2^32 above every count of before, so no token a scheduler still holds
-- from before this version comes again (a count that never reached 2^32 fires).
CREATE SEQUENCE schedule_fire_tokens;

SELECT setval('schedule_fire_tokens', COALESCE((SELECT MAX(fire) FROM schedules), 0) + 4294967296);
