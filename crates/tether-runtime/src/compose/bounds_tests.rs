//! For every key of the schema, an edit of tether.toml made during a run changes nothing the
//! run does: the run pauses for a person, naming the key; a resume without acceptance is
//! refused, naming it; the record gives back the configuration the run started with; and a
//! person's acceptance applies the edit. Driven by the runtime's schema (`Schema::settings`):
//! a core key added without an edit here fails; a key an integration declares is edited to the
//! sample its declaration gives, so a new channel's table is covered with no edit here.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use tether_config::{Loaded, ProcessEnv, Workspace};
use tether_core::bounds::{Pinned, SPEC_KEY};
use tether_store::{Event, Run, RunKind, Store};

use super::*;

/// A key of a table with its value, as the file spells it.
type Entry = (&'static str, &'static str, &'static str);

/// Every file holds these (a model for the judge to differ from).
const BASE: &[Entry] = &[
    ("model", "api", "\"openai-chat\""),
    ("model", "base_url", "\"http://127.0.0.1:9\""),
    ("model", "model", "\"m\""),
    ("model", "api_key_env", "\"MODEL_KEY\""),
];

/// The judge's and the loop judge's required keys.
const JUDGE: &[Entry] = &[
    ("judge", "api", "\"openai-chat\""),
    ("judge", "base_url", "\"http://127.0.0.1:7\""),
    ("judge", "model", "\"j\""),
];
const LOOP_JUDGE: &[Entry] = &[
    ("loop_judge", "api", "\"openai-chat\""),
    ("loop_judge", "base_url", "\"http://127.0.0.1:6\""),
    ("loop_judge", "model", "\"l\""),
];
/// The side model's required keys.
const SIDE: &[Entry] = &[
    ("side", "api", "\"openai-chat\""),
    ("side", "base_url", "\"http://127.0.0.1:2\""),
    ("side", "model", "\"s\""),
];

/// For each setting: what else the file needs for it to be valid, and the value an edit gives
/// it (the file before has the context only; a required key's context holds another value).
fn edit(table: &str, key: &str) -> Option<(&'static [Entry], &'static str)> {
    const NONE: &[Entry] = &[];
    let price = "{ input = 1.0, output = 2.0 }";
    Some(match (table, key) {
        ("", "plan") => (NONE, "\"other.md\""),
        ("model", "api") => (NONE, "\"anthropic\""),
        ("model", "base_url") => (NONE, "\"http://127.0.0.1:8\""),
        ("model", "model") => (NONE, "\"n\""),
        ("model", "api_key_env") => (NONE, "\"OTHER_KEY\""),
        ("model", "price_per_mtok") => (NONE, price),
        ("planning", "api") => (NONE, "\"anthropic\""),
        ("planning", "base_url") => (NONE, "\"http://127.0.0.1:5\""),
        ("planning", "model") => (NONE, "\"p\""),
        ("planning", "api_key_env") => (NONE, "\"PLAN_KEY\""),
        ("planning", "price_per_mtok") => (NONE, price),
        ("judge", "api") => (JUDGE, "\"anthropic\""),
        ("judge", "base_url") => (JUDGE, "\"http://127.0.0.1:4\""),
        ("judge", "model") => (JUDGE, "\"k\""),
        ("judge", "api_key_env") => (JUDGE, "\"JUDGE_KEY\""),
        ("judge", "price_per_mtok") => (JUDGE, price),
        ("judge", "same_model") => (JUDGE, "true"),
        ("judge", "timeout_secs") => (JUDGE, "30"),
        ("judge", "agree") => (JUDGE, "\"majority\""),
        ("judge", "panel") => (
            JUDGE,
            "[{ api = \"openai-chat\", base_url = \"http://127.0.0.1:9\", model = \"q\" }]",
        ),
        ("loop_judge", "api") => (LOOP_JUDGE, "\"anthropic\""),
        ("loop_judge", "base_url") => (LOOP_JUDGE, "\"http://127.0.0.1:3\""),
        ("loop_judge", "model") => (LOOP_JUDGE, "\"o\""),
        ("loop_judge", "api_key_env") => (LOOP_JUDGE, "\"LOOP_KEY\""),
        ("loop_judge", "price_per_mtok") => (LOOP_JUDGE, price),
        ("loop_judge", "timeout_secs") => (LOOP_JUDGE, "30"),
        ("side", "api") => (SIDE, "\"anthropic\""),
        ("side", "base_url") => (SIDE, "\"http://127.0.0.1:1\""),
        ("side", "model") => (SIDE, "\"t\""),
        ("side", "api_key_env") => (SIDE, "\"SIDE_KEY\""),
        ("side", "price_per_mtok") => (SIDE, price),
        ("loop", "max_iterations") => (NONE, "5"),
        ("loop", "max_tokens") => (NONE, "\"2M\""),
        ("loop", "max_cost_usd") => (NONE, "7"),
        ("loop", "max_duration") => (NONE, "\"2h\""),
        ("loop", "escalate_after_rejects") => (NONE, "1"),
        ("loop", "spin_guard") => (NONE, "5"),
        ("loop", "oscillation_repeats") => (NONE, "6"),
        ("loop", "reminder_after") => (NONE, "7"),
        ("loop", "clean_end_reminders") => (NONE, "4"),
        ("loop", "verify_timeout_secs") => (NONE, "30"),
        ("loop", "max_consecutive_failures") => (NONE, "9"),
        ("loop", "context") => (NONE, "\"continue\""),
        ("human", "name") => (NONE, "\"Someone Else\""),
        ("human", "threshold") => (NONE, "4"),
        ("human", "channels") => (NONE, "[\"terminal\", \"cli\", \"notify_command\"]"),
        ("human", "timeout_secs") => (NONE, "60"),
        ("human", "on_timeout") => (&[("human", "timeout_secs", "60")], "\"go on\""),
        ("human", "ask_before") => (NONE, "[\"git push\"]"),
        ("human", "remind_after") => (NONE, "\"30m\""),
        ("human", "escalate_after") => (
            &[
                ("human", "escalate_after", "\"2h\""),
                ("human", "escalate_to", "[\"webhook\"]"),
            ],
            "\"1h\"",
        ),
        ("human", "escalate_to") => (
            &[
                ("human", "escalate_after", "\"1h\""),
                ("human", "escalate_to", "[\"webhook\"]"),
            ],
            "[\"notify_command\"]",
        ),
        ("notify", "on") => (NONE, "[\"failed\"]"),
        ("notify", "desktop") => (NONE, "false"),
        ("notify", "rejected_after") => (NONE, "9"),
        ("executor", "kind") => (NONE, "\"pi\""),
        ("executor", "command") => (
            &[
                ("executor", "kind", "\"command\""),
                ("executor", "command", "[\"a\"]"),
            ],
            "[\"sh\", \"-c\", \"x\"]",
        ),
        ("executor", "program") => (&[("executor", "kind", "\"claude\"")], "\"my-claude\""),
        ("executor", "args") => (&[("executor", "kind", "\"claude\"")], "[\"--x\"]"),
        ("executor", "env") => (
            &[("executor", "kind", "\"claude\"")],
            "{ ANTHROPIC_BASE_URL = \"http://127.0.0.1:1\" }",
        ),
        ("executor", "turn_timeout_secs") => (&[("executor", "kind", "\"claude\"")], "60"),
        ("executor", "permissions") => (
            &[
                ("executor", "kind", "\"acp\""),
                ("executor", "program", "\"agent\""),
            ],
            "\"allow\"",
        ),
        ("executor", "on_usage_limit") => (NONE, "\"stop\""),
        ("executor", "max_usage_wait_secs") => (NONE, "120"),
        ("executor", "usage_backoff_secs") => (NONE, "5"),
        ("server", "listen") => (NONE, "\"127.0.0.1:8080\""),
        ("store", "url") => (NONE, "\"postgres://db.example/tether\""),
        ("sandbox", "mode") => (NONE, "\"off\""),
        ("sandbox", "network") => (NONE, "true"),
        ("sandbox", "writable") => (NONE, "[\"/opt/a\"]"),
        ("sandbox", "readable") => (NONE, "[\"/opt/b\"]"),
        ("sandbox", "env") => (NONE, "[\"FOO\"]"),
        ("run", "worktree") => (NONE, "true"),
        ("run", "commit_hooks") => (NONE, "true"),
        ("run", "parallel") => (NONE, "4"),
        ("run", "merge_attempts") => (NONE, "1"),
        ("schedule", "pause_after_failures") => (NONE, "5"),
        ("schedule", "overdue_grace_secs") => (NONE, "60"),
        ("schedule", "poll_secs") => (NONE, "2"),
        (table, key) => (
            NONE,
            crate::schema().declared_table(table)?.key(key)?.sample,
        ),
    })
}

/// A tether.toml of `entries` (a later one of a key wins).
fn file(entries: &[(&str, &str, &str)]) -> String {
    let mut tables: BTreeMap<&str, BTreeMap<&str, &str>> = BTreeMap::new();
    for (table, key, value) in entries {
        tables.entry(table).or_default().insert(key, value);
    }
    let mut text = String::new();
    for (key, value) in tables.remove("").unwrap_or_default() {
        text.push_str(&format!("{key} = {value}\n"));
    }
    for (table, keys) in tables {
        text.push_str(&format!("\n[{table}]\n"));
        for (key, value) in keys {
            text.push_str(&format!("{key} = {value}\n"));
        }
    }
    text
}

struct Case {
    dir: tempfile::TempDir,
    store: Store,
}

impl Case {
    fn new() -> Case {
        Case {
            dir: tempfile::tempdir().unwrap(),
            store: Store::open_in_memory().unwrap(),
        }
    }

    fn ws(&self) -> Workspace {
        Workspace::at(self.dir.path())
    }

    /// tether.toml holding `text`, loaded.
    fn write(&self, text: &str) -> Loaded {
        std::fs::write(self.dir.path().join("tether.toml"), text).unwrap();
        tether_config::load(crate::schema(), self.dir.path(), &ProcessEnv)
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// A run recorded with `pinned`.
    fn run(&self, pinned: &Pinned) -> Run {
        let spec = serde_json::json!({ SPEC_KEY: pinned.to_json() });
        let id = self
            .store
            .create_run(RunKind::Goal, self.dir.path(), &spec)
            .unwrap();
        self.store.run(&id).unwrap()
    }

    fn resume(&self, run: &Run, now: &Loaded) -> Resumed {
        for_resumed_run(&self.ws(), run, now, &ProcessEnv)
    }
}

fn setting_name(table: &str, key: &str) -> String {
    match table {
        "" => key.to_owned(),
        table => format!("[{table}] {key}"),
    }
}

#[test]
fn every_key_edited_during_a_run_changes_nothing_until_a_person_accepts_it() {
    let settings = crate::schema().settings();
    let missing: Vec<String> = settings
        .iter()
        .copied()
        .filter(|(table, key)| edit(table, key).is_none())
        .map(|(table, key)| setting_name(table, key))
        .collect();
    assert!(
        missing.is_empty(),
        "settings of the schema without an edit here (add one to `edit`): {missing:?}"
    );
    for (table, key) in settings {
        let (context, after) = edit(table, key).unwrap();
        let name = setting_name(table, key);
        let before: Vec<(&str, &str, &str)> = BASE.iter().chain(context).copied().collect();
        let mut edited = before.clone();
        edited.push((table, key, after));
        let case = Case::new();
        let started = case.write(&file(&before));
        let pinned = for_new_run(&case.ws(), &started);
        let run = case.run(&pinned);

        let now = case.write(&file(&edited));
        assert_ne!(
            now.config, started.config,
            "{name}: the edit changed nothing parsed"
        );
        // During the run: it pauses for a person, naming the key.
        let reason = pinned
            .changed(&run.id)
            .unwrap_or_else(|| panic!("{name}: no pause"));
        assert!(reason.contains(&name), "{name}: {reason}");
        // A resume without acceptance is refused, naming it.
        let Resumed::Changed(changed) = case.resume(&run, &now) else {
            panic!("{name}: a resume took the edit");
        };
        let said: Vec<String> = changed.changes.iter().map(ToString::to_string).collect();
        assert!(
            said.iter().any(|c| c.starts_with(&name)),
            "{name}: {said:?}"
        );
        let refused = changed.refuse();
        assert!(refused.is_usage(), "{name}");
        assert!(refused.to_string().contains(&name), "{name}: {refused}");
        // The record gives back what the run started with.
        let back = case.write(&file(&before));
        let Resumed::Settled(kept) = case.resume(&run, &back) else {
            panic!("{name}: the file put back is not the record");
        };
        assert_eq!(kept.config, started.config, "{name}");
        // A person's acceptance applies the edit, and is the run's from then on.
        let now = case.write(&file(&edited));
        let Resumed::Changed(changed) = case.resume(&run, &now) else {
            panic!("{name}");
        };
        let accepted = changed.accept();
        assert_eq!(accepted.config, now.config, "{name}");
        assert!(accepted.pinned.changed(&run.id).is_none(), "{name}");
        let resumed = Event::Resumed {
            by: "cli".to_owned(),
            reset_budget: false,
            settings: Some(accepted.pinned.to_json()),
        };
        case.store.append(Some(&run.id), &resumed).unwrap();
        let run = case.store.run(&run.id).unwrap();
        let Resumed::Settled(again) = case.resume(&run, &now) else {
            panic!("{name}: the accepted configuration is not the run's");
        };
        assert_eq!(again.config, now.config, "{name}");
    }
}

#[test]
fn a_comment_or_a_blank_line_pauses_nothing_and_resumes_as_recorded() {
    let case = Case::new();
    let text = file(BASE);
    let started = case.write(&text);
    let pinned = for_new_run(&case.ws(), &started);
    let run = case.run(&pinned);
    let now = case.write(&format!(
        "# the person's note\n\n{}\n# more\n",
        text.replace('\n', "\n\n")
    ));
    assert_eq!(pinned.changed(&run.id), None);
    assert!(matches!(case.resume(&run, &now), Resumed::Settled(_)));
}

#[test]
fn a_run_recorded_by_an_older_tether_shows_the_whole_file_as_new() {
    let case = Case::new();
    let now = case.write(&file(BASE));
    let spec =
        serde_json::json!({ "bounds": { "sandbox": { "mode": "enforce", "network": false } } });
    let id = case
        .store
        .create_run(RunKind::Goal, case.dir.path(), &spec)
        .unwrap();
    let run = case.store.run(&id).unwrap();
    let Resumed::Changed(changed) = case.resume(&run, &now) else {
        panic!("an older run resumed without a person");
    };
    let said: Vec<String> = changed.changes.iter().map(ToString::to_string).collect();
    assert!(said[0].starts_with("file: (not recorded) → "), "{said:?}");
    assert!(
        said.contains(&"[model] api_key_env: (not recorded) → \"MODEL_KEY\"".to_owned()),
        "{said:?}"
    );
}
