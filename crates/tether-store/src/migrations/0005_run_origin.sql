-- tether store, schema version 5: where each run lives.
--
-- `machine` is the hostname of the machine that created the run and `repo_remote` its
-- repository's remote (without credentials); both NULL for runs from before version 5. A team
-- store shares runs of many machines, and only a run's own machine can drive it.
ALTER TABLE runs ADD COLUMN machine TEXT;
ALTER TABLE runs ADD COLUMN repo_remote TEXT;
