//! The repository a run recorded when it began, kept in the run's spec in the store under
//! [`SPEC_KEY`] so that every later step — the judge's diff, the run's report, a `resume` in
//! another process — runs git in that repository and no other.

use serde_json::Value;

use crate::GitRepo;

/// The key of a run's spec that holds its repository: `{"git_dir": …, "work_tree": …}`, or
/// `null` when the workspace was not a repository when the run began.
pub const SPEC_KEY: &str = "git";

/// What a run recorded of its repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AtStart {
    /// The repository the run began in.
    Repo(GitRepo),
    /// The workspace was not a repository when the run began (or the record is unreadable):
    /// git never runs for it.
    NotARepository,
    /// The run was begun by a tether that recorded no repository: git never runs for it.
    Unrecorded,
}

impl AtStart {
    /// What `spec` (a run's spec) recorded.
    pub fn of_spec(spec: &Value) -> AtStart {
        match spec.get(SPEC_KEY) {
            None => AtStart::Unrecorded,
            Some(value) => {
                serde_json::from_value(value.clone()).map_or(AtStart::NotARepository, AtStart::Repo)
            }
        }
    }

    /// Records `repo` (`None`: no repository) in `spec`, a JSON object.
    pub fn record(repo: Option<&GitRepo>, spec: &mut Value) {
        if let Value::Object(map) = spec {
            let value = repo
                .and_then(|r| serde_json::to_value(r).ok())
                .unwrap_or(Value::Null);
            map.insert(SPEC_KEY.to_owned(), value);
        }
    }

    /// The repository, if the run recorded one.
    pub fn repo(&self) -> Option<&GitRepo> {
        match self {
            AtStart::Repo(repo) => Some(repo),
            AtStart::NotARepository | AtStart::Unrecorded => None,
        }
    }

    /// Why git does not run for the run, when it does not.
    pub fn why_not(&self) -> Option<&'static str> {
        match self {
            AtStart::Repo(_) => None,
            AtStart::NotARepository => Some(
                "not a git repository (when the run began; tether runs git only in the \
                 repository it found then)",
            ),
            AtStart::Unrecorded => Some(
                "no git repository recorded for this run (it began under an older tether; \
                 tether runs git only in the repository a run recorded when it began)",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;

    #[test]
    fn the_record_round_trips_and_a_missing_or_bad_one_runs_no_git() {
        let repo = GitRepo {
            git_dir: PathBuf::from("/r/.git"),
            work_tree: PathBuf::from("/r"),
        };
        let mut spec = json!({"prompt": "p"});
        AtStart::record(Some(&repo), &mut spec);
        assert_eq!(AtStart::of_spec(&spec), AtStart::Repo(repo));
        AtStart::record(None, &mut spec);
        assert_eq!(spec["git"], Value::Null);
        assert_eq!(AtStart::of_spec(&spec), AtStart::NotARepository);
        assert_eq!(AtStart::of_spec(&json!({})), AtStart::Unrecorded);
        assert_eq!(
            AtStart::of_spec(&json!({"git": "/elsewhere"})),
            AtStart::NotARepository
        );
    }
}
