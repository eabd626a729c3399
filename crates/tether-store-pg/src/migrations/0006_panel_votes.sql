-- tether team store, schema version 6: a judge panel's votes.
--
-- A sign-off judged by a panel (`[[judge.panel]]`) records each judge's vote beside the
-- decision: its model, what it decided, why, and what its session used (in the order the
-- judges were asked). Empty for a decision of one judge, or of verify alone.
ALTER TABLE verdicts ADD COLUMN judges JSONB NOT NULL DEFAULT '[]';
