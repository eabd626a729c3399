-- tether store, schema version 6: an approval keeps the terms that bound the agent.
--
-- `terms` is what the approved contract says of the settings that bound the agent while its
-- goal is active (a JSON object: `network`, `budget`, `ask_before`), so a run reads them from
-- the approval and never from a plan the agent may have edited since; NULL for approvals from
-- before version 6.
ALTER TABLE contract_approvals ADD COLUMN terms TEXT CHECK (terms IS NULL OR json_valid(terms));
