-- tether store, schema version 13: when a schedule was resumed.
--
-- A schedule a person paused and resumed is due at once when one of its times passed while it
-- was paused, but it is not overdue until a grace after the resume: `resumed_at_ms` is when a
-- person last resumed it (NULL: never), which its lateness is measured from when later than its
-- due time.
ALTER TABLE schedules ADD COLUMN resumed_at_ms INTEGER;
