//! `[store] url` and `TETHER_STORE_URL`: where a team keeps its runs, never with a password in
//! the file.

use std::path::Path;

use super::test_table::schema;
use tether_config::{MapEnv, parse};

use super::{FILE, problem};

#[test]
fn a_team_store_url_is_read_and_the_environment_overrides_it() {
    let text = "[store]\nurl = \"postgres://tether@db.example:5432/tether\"\n";
    let config = parse(&schema(), text, Path::new(FILE), &MapEnv::new()).unwrap();
    assert_eq!(
        config.store.url.as_deref(),
        Some("postgres://tether@db.example:5432/tether")
    );
    let env = MapEnv::new().with("TETHER_STORE_URL", "postgresql://ci:pw@other/team");
    let config = parse(&schema(), text, Path::new(FILE), &env).unwrap();
    assert_eq!(
        config.store.url.as_deref(),
        Some("postgresql://ci:pw@other/team")
    );
    let config = parse(&schema(), "", Path::new(FILE), &MapEnv::new()).unwrap();
    assert_eq!(config.store.url, None);
}

#[test]
fn a_password_in_the_file_is_refused_without_being_repeated() {
    let shown: Vec<String> = [
        "postgres://tether:hunter2@db.example/tether",
        "postgres://tether@db.example/tether?password=hunter2",
    ]
    .iter()
    .map(|url| problem(&format!("[store]\nurl = \"{url}\"\n")))
    .collect();
    assert!(shown.iter().all(|s| !s.contains("hunter2")), "{shown:?}");
    assert_eq!(shown[0], shown[1]);
    insta::assert_snapshot!(shown[0]);
}

#[test]
fn a_store_url_must_be_postgres() {
    let shown = problem("[store]\nurl = \"mysql://db/tether\"\n");
    assert!(
        shown.contains("store.url: must be a PostgreSQL URL"),
        "{shown}"
    );
    let shown = problem("[store]\nuri = \"postgres://db/tether\"\n");
    assert!(shown.contains("store.uri"), "{shown}");
}

#[test]
fn where_the_store_is_is_read_whatever_the_rest_of_the_file_says() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tether.toml"),
        "[model]\napi = \"nonsense\"\n[store]\nurl = \"postgres://team@db/tether\"\n",
    )
    .unwrap();
    assert!(tether_config::load(&schema(), dir.path(), &MapEnv::new()).is_err());
    let store = tether_config::load_store(dir.path(), &MapEnv::new()).unwrap();
    assert_eq!(store.url.as_deref(), Some("postgres://team@db/tether"));

    std::fs::write(
        dir.path().join("tether.toml"),
        "[store]\nurl = \"postgres://a:b@db/t\"\n",
    )
    .unwrap();
    let err = tether_config::load_store(dir.path(), &MapEnv::new()).unwrap_err();
    assert!(
        err.to_string()
            .contains("store.url: must not contain a password"),
        "{err}"
    );
}
