-- tether store, schema version 4: questions may offer choices.
--
-- `options` holds the labels offered (a JSON array of 2-6 strings; `[]` for a plain question).
-- `answer_choice` is the index (from 0) of the option the answer chose, or NULL when the answer
-- was free text (or there is no answer yet).
ALTER TABLE questions ADD COLUMN options TEXT NOT NULL DEFAULT '[]';
ALTER TABLE questions ADD COLUMN answer_choice INTEGER;
