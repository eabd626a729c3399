//! Helpers shared by the integration tests, and the list of test modules. The tests read the
//! core tables and `[pager]`, a table declared for the tests as an integration declares one.

use std::path::Path;

use tether_config::{Config, Env, MapEnv, parse, parse_with_warnings};

use test_table::schema;

#[path = "../../src/test_table.rs"]
pub mod test_table;

mod agent_cli;
mod always_on;
mod context;
mod cross;
mod declared;
mod defaults;
mod env;
mod isolation;
mod load;
mod multiple;
mod ranges;
mod secrets;
mod store;
mod template;
mod types;
mod unknown_keys;
mod usage_limit;

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
