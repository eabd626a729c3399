//! A record keeps every credential out and gives the source back with the credentials still
//! in place; its changes name each key that differs, never a comment.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use proptest::prelude::*;

use super::*;
use crate::MapEnv;
use crate::test_table::{PagerSettings, schema};

const TEXT: &str = r#"# the person's settings
[model]
api = "anthropic"
base_url = "http://127.0.0.1:9"
model = "m"
api_key_env = "MODEL_KEY"

[human]
channels = ["terminal", "cli", "pager"]

[pager]
url = "https://hooks.example/T000/B000/s3cr3t-webhook"

[executor]
kind = "claude"
env = { ANTHROPIC_BASE_URL = "https://api.example", GH_TOKEN = "ghp_s3cr3t-token" }
"#;

const STORE: &str = "postgres://me:s3cr3t-password@db.example/tether";

fn source(text: &str, store: &str) -> Source {
    let vars: BTreeMap<String, Option<String>> = [
        ("TETHER_CONFIG".to_owned(), None),
        ("TETHER_STORE_URL".to_owned(), Some(store.to_owned())),
        ("PAGER_ROOM".to_owned(), Some("runs".to_owned())),
    ]
    .into_iter()
    .collect();
    Source {
        file: PathBuf::from("/w/tether.toml"),
        found: true,
        text: text.to_owned(),
        vars,
        schema: schema(),
    }
}

fn keys() -> MapEnv {
    MapEnv::new().with("MODEL_KEY", "sk-model")
}

#[test]
fn a_record_holds_no_credential_and_gives_the_source_back() {
    let src = source(TEXT, STORE);
    let recorded = Recorded::of(&src);
    let json = serde_json::to_string(&recorded).unwrap();
    for secret in ["s3cr3t-webhook", "ghp_s3cr3t-token", "s3cr3t-password"] {
        assert!(!json.contains(secret), "{secret} is in the record: {json}");
    }
    assert!(json.contains("https://api.example"), "{json}");
    assert_eq!(
        recorded.hidden.keys().collect::<Vec<_>>(),
        ["$TETHER_STORE_URL", "executor.env.GH_TOKEN", "pager.url"]
    );
    let back: Recorded = serde_json::from_str(&json).unwrap();
    assert_eq!(back, recorded);
    let restored = back.restore(&src).expect("the credentials are still there");
    assert_eq!(restored, src);
    assert_eq!(
        restored.parse(&keys()).unwrap().0,
        src.parse(&keys()).unwrap().0
    );
    assert!(back.changes(&src).is_empty());
}

#[test]
fn a_comment_or_a_blank_line_changes_nothing() {
    let src = source(TEXT, STORE);
    let recorded = Recorded::of(&src);
    let edited = TEXT.replace("[human]", "\n\n# who is asked\n[human]   ") + "# the end\n";
    let now = source(&edited, STORE);
    assert!(recorded.changes(&now).is_empty());
    let restored = recorded.restore(&now).unwrap();
    assert_eq!(
        restored.parse(&keys()).unwrap().0,
        now.parse(&keys()).unwrap().0
    );
}

#[test]
fn a_changed_credential_is_seen_and_cannot_be_restored() {
    let recorded = Recorded::of(&source(TEXT, STORE));
    let now = source(
        &TEXT.replace("s3cr3t-webhook", "elsewhere"),
        &STORE.replace("s3cr3t", "other"),
    );
    assert_eq!(recorded.restore(&now), None);
    let said: Vec<String> = recorded
        .changes(&now)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        said,
        [
            "[pager] url: (hidden) → (hidden: another value)",
            "$TETHER_STORE_URL: (hidden) → (hidden: another value)",
        ]
    );
    assert!(!said.concat().contains("elsewhere"));
}

#[test]
fn the_changes_name_each_key_with_both_values() {
    let recorded = Recorded::of(&source(TEXT, STORE));
    let edited = TEXT
        .replace("kind = \"claude\"", "kind = \"pi\"")
        .replace("https://api.example", "http://127.0.0.1:1/steal")
        .replace("\"pager\"]", "\"pager\", \"web\"]")
        .replace(
            "s3cr3t-webhook\"",
            "s3cr3t-webhook\"\nlevel = 5\ntoken_env = \"MODEL_KEY\"",
        )
        + "\n[sandbox]\nnetwork = true\n";
    let mut now = source(&edited, STORE);
    now.vars
        .insert("PAGER_ROOM".to_owned(), Some("elsewhere".to_owned()));
    now.file = PathBuf::from("/w/other.toml");
    let said: Vec<String> = recorded
        .changes(&now)
        .iter()
        .map(ToString::to_string)
        .collect();
    insta::assert_snapshot!(said.join("\n"));
}

#[test]
fn a_run_recorded_before_is_shown_the_whole_file_as_new() {
    let said: Vec<String> = Recorded::unrecorded(&source(TEXT, STORE))
        .iter()
        .map(ToString::to_string)
        .collect();
    insta::assert_snapshot!(said.join("\n"));
}

#[test]
fn without_a_file_the_defaults_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let env = MapEnv::new().with("PAGER_ROOM", "runs");
    let (src, parsed) = crate::read(&schema(), dir.path(), &env).unwrap();
    assert!(!src.found);
    assert_eq!(src.vars.get("PAGER_ROOM"), Some(&Some("runs".to_owned())));
    let recorded = Recorded::of(&src);
    std::fs::write(
        dir.path().join("tether.toml"),
        "[loop]\nmax_iterations = 3\n",
    )
    .unwrap();
    let (now, _) = crate::read(&schema(), dir.path(), &env).unwrap();
    let said: Vec<String> = recorded
        .changes(&now)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        said[0],
        format!(
            "file: none ({} not found: the defaults) → {:?}",
            dir.path().join("tether.toml").display(),
            dir.path().join("tether.toml").display().to_string()
        )
    );
    assert_eq!(said[1], "[loop] max_iterations: (absent) → 3");
    // Parsed from the record, the variables are the record's whatever the environment says.
    let restored = recorded.restore(&src).unwrap();
    let (config, _) = restored
        .parse(&MapEnv::new().with("PAGER_ROOM", "elsewhere"))
        .unwrap();
    assert_eq!(config, parsed.unwrap().0);
    assert_eq!(PagerSettings::of(&config).room.as_deref(), Some("runs"));
}

#[test]
fn keys_are_read_from_the_environment_and_never_recorded() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tether.toml"),
        "[pager]\nroom = \"r\"\ntoken_env = \"MY_PAGER_TOKEN\"\n",
    )
    .unwrap();
    let env = MapEnv::new().with("MY_PAGER_TOKEN", "tk-one");
    let (src, _) = crate::read(&schema(), dir.path(), &env).unwrap();
    assert!(!src.vars.contains_key("MY_PAGER_TOKEN"), "{src:?}");
    let (config, _) = src
        .parse(&MapEnv::new().with("MY_PAGER_TOKEN", "tk-two"))
        .unwrap();
    assert_eq!(PagerSettings::of(&config).token.unwrap().expose(), "tk-two");
}

#[test]
fn a_fifo_or_a_huge_file_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tether.toml");
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let err = crate::load(&schema(), dir.path(), &MapEnv::new()).unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
    std::fs::remove_file(&path).unwrap();
    let big = "# x\n".repeat(usize::try_from(crate::MAX_CONFIG_BYTES).unwrap() / 4 + 1);
    std::fs::write(&path, big).unwrap();
    let err = crate::load(&schema(), dir.path(), &MapEnv::new()).unwrap_err();
    assert!(err.to_string().contains("more than the"), "{err}");
}

/// A credential's value as a file may hold it: anything printable, quotes and backslashes
/// included.
fn credential() -> impl Strategy<Value = String> {
    "[ -~ü€\\\\\"]{12,40}"
}

proptest! {
    #[test]
    fn no_credential_reaches_a_record_and_every_one_comes_back(
        url in credential(),
        token in credential(),
        password in credential(),
    ) {
        let text = format!(
            "[pager]\nurl = {}\n[executor]\nkind = \"claude\"\n[executor.env]\nAPI_TOKEN = {}\n",
            crate::hidden::literal(&url),
            crate::hidden::literal(&token),
        );
        let store = format!("postgres://me:{password}@db/x");
        let src = source(&text, &store);
        let recorded = Recorded::of(&src);
        let json = serde_json::to_string(&recorded).unwrap();
        let text_json = serde_json::to_string(&recorded.text).unwrap();
        for secret in [&url, &token, &password] {
            prop_assert!(!recorded.text.contains(secret.as_str()));
            prop_assert!(!json.contains(serde_json::to_string(secret).unwrap().trim_matches('"')));
        }
        prop_assert!(!text_json.is_empty());
        prop_assert_eq!(recorded.restore(&src), Some(src.clone()));
        prop_assert!(recorded.changes(&src).is_empty());
    }
}
