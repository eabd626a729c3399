-- tether store, schema version 9: a judge panel's votes.
--
-- A sign-off judged by a panel (`[[judge.panel]]`) records each judge's vote beside the
-- decision: its model, what it decided, why, and what its session used (JSON, in the order the
-- judges were asked). Empty for a decision of one judge, or of verify alone.
ALTER TABLE verdicts ADD COLUMN judges TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(judges));
