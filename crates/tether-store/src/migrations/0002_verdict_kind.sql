-- tether store, schema version 2: every verdict records its kind (accepted, verify_failed,
-- judge_rejected, judge_unavailable), so readers need not guess it from the reason's wording.
-- Every insert names the kind; the empty default only satisfies ALTER TABLE.

ALTER TABLE verdicts ADD COLUMN kind TEXT NOT NULL DEFAULT '';

-- Rows recorded before this version get the kind the goal loop used to derive: an accept is
-- accepted; a reason beginning "judge unavailable" is the judge's failure; a reject with no
-- judge model is verify's (the judge is only asked once verify passed); any other reject is the
-- judge's.
UPDATE verdicts SET kind = CASE
    WHEN verdict = 'accept' THEN 'accepted'
    WHEN reason GLOB 'judge unavailable*' THEN 'judge_unavailable'
    WHEN judge_model IS NULL THEN 'verify_failed'
    ELSE 'judge_rejected'
END;
