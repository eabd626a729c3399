//! Finding the file: `<workspace>/tether.toml`, `TETHER_CONFIG`, or defaults.

use std::fs;
use std::path::Path;

use tether_config::{Config, ConfigError, MapEnv, load};

use super::test_table::{PagerSettings, schema};

fn write(dir: &Path, name: &str, text: &str) {
    if let Some(parent) = dir.join(name).parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(dir.join(name), text).unwrap();
}

#[test]
fn a_missing_tether_toml_means_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = load(&schema(), dir.path(), &MapEnv::new()).unwrap();
    assert_eq!(loaded.config, Config::defaults(&schema()));
    assert_eq!(loaded.source, None);
}

#[test]
fn defaults_still_take_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let env = MapEnv::new().with("PAGER_ROOM", "s");
    let loaded = load(&schema(), dir.path(), &env).unwrap();
    assert_eq!(PagerSettings::of(&loaded.config).room.as_deref(), Some("s"));
}

#[test]
fn tether_toml_at_the_root_is_read() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "tether.toml", "[loop]\nspin_guard = 9\n");
    let loaded = load(&schema(), dir.path(), &MapEnv::new()).unwrap();
    assert_eq!(loaded.config.r#loop.spin_guard, 9);
    assert_eq!(loaded.source, Some(dir.path().join("tether.toml")));
}

#[test]
fn tether_config_relative_paths_resolve_against_the_workspace_root() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "tether.toml", "[loop]\nspin_guard = 9\n");
    write(dir.path(), "conf/other.toml", "[loop]\nspin_guard = 4\n");
    let env = MapEnv::new().with("TETHER_CONFIG", "conf/other.toml");
    let loaded = load(&schema(), dir.path(), &env).unwrap();
    assert_eq!(loaded.config.r#loop.spin_guard, 4);
    assert_eq!(loaded.source, Some(dir.path().join("conf/other.toml")));
}

#[test]
fn tether_config_absolute_paths_are_used_as_given() {
    let root = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    write(elsewhere.path(), "x.toml", "plan = \"p.md\"\n");
    let path = elsewhere.path().join("x.toml");
    let env = MapEnv::new().with("TETHER_CONFIG", path.to_str().unwrap());
    let loaded = load(&schema(), root.path(), &env).unwrap();
    assert_eq!(loaded.config.plan, Path::new("p.md"));
    assert_eq!(loaded.source, Some(path));
}

#[test]
fn tether_config_naming_a_missing_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "tether.toml", "");
    let env = MapEnv::new().with("TETHER_CONFIG", "nope.toml");
    let err = load(&schema(), dir.path(), &env).unwrap_err();
    let expected = dir.path().join("nope.toml");
    assert!(
        matches!(&err, ConfigError::NotFound { path } if *path == expected),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "TETHER_CONFIG names {}, which does not exist",
            expected.display()
        )
    );
}

#[test]
fn problems_are_labelled_with_the_files_path() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "tether.toml", "[loop]\nspin_guard = 0\n");
    let err = load(&schema(), dir.path(), &MapEnv::new()).unwrap_err();
    let file = dir.path().join("tether.toml");
    assert!(matches!(&err, ConfigError::Invalid { file: f, .. } if *f == file));
    assert_eq!(err.problems().len(), 1);
    assert_eq!(err.problems()[0].file, file);
    assert_eq!(err.problems()[0].line, Some(2));
    assert_eq!(err.problems()[0].key, "loop.spin_guard");
}

#[test]
fn an_unreadable_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("tether.toml")).unwrap();
    let err = load(&schema(), dir.path(), &MapEnv::new()).unwrap_err();
    assert!(
        matches!(&err, ConfigError::Io { path, .. } if path.ends_with("tether.toml")),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("cannot read "), "{err}");
    assert!(err.problems().is_empty());
}

#[test]
fn a_huge_file_is_an_io_error_and_not_read() {
    // The agent writes the working tree: a tether.toml of 6 GiB (a hole) read while the run
    // goes on must not take the reading process down.
    let dir = tempfile::tempdir().unwrap();
    let file = fs::File::create(dir.path().join("tether.toml")).unwrap();
    file.set_len(6 << 30).unwrap();
    for err in [
        load(&schema(), dir.path(), &MapEnv::new()).unwrap_err(),
        tether_config::load_store(dir.path(), &MapEnv::new()).unwrap_err(),
    ] {
        assert!(matches!(err, ConfigError::Io { .. }), "{err:?}");
        assert!(
            err.to_string()
                .ends_with("it is 6442450944 bytes, more than the 1048576 a config file may be"),
            "{err}"
        );
    }
}

#[test]
fn a_file_that_is_not_utf8_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tether.toml"), [0xff, 0xfe, 0x00]).unwrap();
    let err = load(&schema(), dir.path(), &MapEnv::new()).unwrap_err();
    assert!(matches!(err, ConfigError::Io { .. }), "{err:?}");
}
