-- tether team store, schema version 2: sign-off records belong to a workspace.
--
-- A plan is named by its path inside its workspace (`plan.md`), and many workspaces share a team
-- store: `scope` says which workspace (its machine and root) a verdict, approval, running
-- sign-off or cancellation is about, so two checkouts with a `plan.md` never mix their goals.
ALTER TABLE verdicts ADD COLUMN scope TEXT NOT NULL DEFAULT '';
ALTER TABLE contract_approvals ADD COLUMN scope TEXT NOT NULL DEFAULT '';
ALTER TABLE signoffs_running ADD COLUMN scope TEXT NOT NULL DEFAULT '';
ALTER TABLE cancellations ADD COLUMN scope TEXT NOT NULL DEFAULT '';

DROP INDEX verdicts_by_goal;
DROP INDEX verdicts_attempt;
CREATE INDEX verdicts_by_goal ON verdicts (scope, plan_path, goal_id, id);
CREATE UNIQUE INDEX verdicts_attempt ON verdicts (scope, plan_path, goal_id, attempt);
DROP INDEX contract_approvals_by_goal;
CREATE INDEX contract_approvals_by_goal ON contract_approvals (scope, plan_path, goal_id, id);
ALTER TABLE signoffs_running DROP CONSTRAINT signoffs_running_pkey;
ALTER TABLE signoffs_running ADD PRIMARY KEY (scope, plan_path, goal_id);
DROP INDEX cancellations_by_goal;
CREATE INDEX cancellations_by_goal ON cancellations (scope, plan_path, goal_id, id);
