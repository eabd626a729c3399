//! The channels' and sinks' tables as `tether.toml` holds them, read against the schema the
//! registry assembles (`tether_human::registry::schema`): their values, defaults, environment
//! overrides, the errors that name each setting, and the secrets read from the variables the
//! file names (never echoed) and kept from the agent. The reading itself is tether-config's;
//! each table is its channel's declaration ([`tether_human::tables`]).

use std::path::Path;

use tether_config::{Config, Env, MapEnv, parse, parse_with_warnings};
use tether_human::registry::schema;

mod chats;
mod keys;
mod sinks;
mod template;
mod zulip;

/// The file name problems are labelled with.
pub const FILE: &str = "tether.toml";

/// Parses `text` under `env`, panicking with every problem if it is invalid.
pub fn config_with(text: &str, env: &dyn Env) -> Config {
    match parse(&schema(), text, Path::new(FILE), env) {
        Ok(config) => config,
        Err(err) => panic!("expected a valid config, got:\n{err}"),
    }
}

/// Parses `text` under an empty environment, panicking if it is invalid.
pub fn config(text: &str) -> Config {
    config_with(text, &MapEnv::new())
}

/// The problems of `text` under `env`, as displayed; panics if `text` is valid.
pub fn problems_with(text: &str, env: &dyn Env) -> Vec<String> {
    match parse(&schema(), text, Path::new(FILE), env) {
        Ok(config) => panic!("expected problems, got a valid config: {config:#?}"),
        Err(err) => {
            assert!(!err.problems().is_empty(), "no problems in {err:?}");
            err.problems().iter().map(ToString::to_string).collect()
        }
    }
}

/// The problems of `text` under an empty environment.
pub fn problems(text: &str) -> Vec<String> {
    problems_with(text, &MapEnv::new())
}

/// The single problem of `text`, as displayed; panics unless there is exactly one.
pub fn problem(text: &str) -> String {
    let mut all = problems(text);
    assert_eq!(all.len(), 1, "expected one problem, got {all:#?}");
    all.remove(0)
}

/// The warnings of valid `text` under `env`, as displayed; panics if `text` is invalid.
pub fn warnings_with(text: &str, env: &dyn Env) -> Vec<String> {
    match parse_with_warnings(&schema(), text, Path::new(FILE), env) {
        Ok((_, warnings)) => warnings.iter().map(ToString::to_string).collect(),
        Err(err) => panic!("expected a valid config, got:\n{err}"),
    }
}
