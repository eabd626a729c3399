//! `[sandbox]` and `[run]`: the sandbox's mode and reach, worktrees and commit hooks.

use std::path::PathBuf;

use tether_config::{MapEnv, RunConfig, SandboxConfig, SandboxMode};

use super::{config, config_with, problem};

#[test]
fn the_sandbox_is_enforced_without_network_by_default() {
    let config = config("");
    assert_eq!(config.sandbox, SandboxConfig::default());
    assert_eq!(config.sandbox.mode, SandboxMode::Enforce);
    assert!(!config.sandbox.network);
}

#[test]
fn every_key_is_read_with_the_home_directory_expanded() {
    let env = MapEnv::new().with("HOME", "/home/ana");
    let config = config_with(
        "[sandbox]\nmode = \"off\"\nnetwork = true\nwritable = [\"~/.cargo\", \"/srv/cache\"]\n\
         readable = [\"~\"]\nenv = [\"JAVA_HOME\"]\n",
        &env,
    );
    assert_eq!(
        config.sandbox,
        SandboxConfig {
            mode: SandboxMode::Off,
            network: true,
            writable: vec![
                PathBuf::from("/home/ana/.cargo"),
                PathBuf::from("/srv/cache")
            ],
            readable: vec![PathBuf::from("/home/ana")],
            env: vec!["JAVA_HOME".to_owned()],
        }
    );
}

#[test]
fn bad_values_name_the_key_and_what_is_allowed() {
    assert_eq!(
        problem("[sandbox]\nmode = \"strict\"\n"),
        "tether.toml:2: sandbox.mode: must be one of enforce | off, got \"strict\""
    );
    assert_eq!(
        problem("[sandbox]\nwritable = [\"cache\"]\n"),
        "tether.toml:2: sandbox.writable: item 1: must be an absolute path or start with ~/, got \"cache\""
    );
    assert_eq!(
        problem("[sandbox]\nnetwork = \"yes\"\n"),
        "tether.toml:2: sandbox.network: must be true or false, got a string"
    );
}

#[test]
fn runs_stay_in_place_and_commit_without_hooks_by_default_and_both_can_be_changed() {
    let config = config("");
    assert_eq!(config.run, RunConfig::default());
    assert!(!config.run.worktree && !config.run.commit_hooks);
    assert_eq!((config.run.parallel, config.run.merge_attempts), (1, 3));
    let config = config_with(
        "[run]\nworktree = true\ncommit_hooks = true\nparallel = 4\nmerge_attempts = 1\n",
        &MapEnv::new(),
    );
    assert_eq!(
        config.run,
        RunConfig {
            worktree: true,
            commit_hooks: true,
            parallel: 4,
            merge_attempts: 1,
        }
    );
    assert_eq!(
        problem("[run]\nworktree = \"yes\"\n"),
        "tether.toml:2: run.worktree: must be true or false, got a string"
    );
    assert_eq!(
        problem("[run]\nparallel = 0\n"),
        "tether.toml:2: run.parallel: must be between 1 and 64, got 0"
    );
    assert_eq!(
        problem("[run]\nmerge_attempts = 0\n"),
        "tether.toml:2: run.merge_attempts: must be between 1 and 20, got 0"
    );
}
