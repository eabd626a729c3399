//! What a run recorded of its workspace as it began, kept in the run's spec in the store under
//! [`SPEC_KEY`]: the tree of its files in tether's snapshot repository and the files that
//! snapshot left out — or why none was taken. Every later step (the sign-off's changed lines,
//! the report's diffstat, a `resume` in another process) compares with that tree, so "changed
//! by this run" means changed since the run began, in every kind of workspace.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Snapshot;

/// The key of a run's spec that holds what it recorded of its start.
pub const SPEC_KEY: &str = "start";

/// The most names of left-out files a record keeps; past it only their number.
const SKIPPED_KEPT: usize = 200;

/// A git object's id (a tree, a commit): 40 or 64 lowercase hexadecimal digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ObjectId(String);

impl ObjectId {
    /// `text` when it is an object id.
    pub fn parse(text: &str) -> Option<ObjectId> {
        let ok = matches!(text.len(), 40 | 64)
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        ok.then(|| ObjectId(text.to_owned()))
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ObjectId {
    type Error = String;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        ObjectId::parse(&text).ok_or_else(|| format!("not a git object id: {text:?}"))
    }
}

impl From<ObjectId> for String {
    fn from(id: ObjectId) -> String {
        id.0
    }
}

impl std::fmt::Display for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The workspace as a run began: its tree, and the files the snapshot left out (whose lines
/// are never counted as changed by the run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartTree {
    /// The tree, in tether's snapshot repository.
    pub tree: ObjectId,
    /// The paths of files left out (at most a few hundred).
    #[serde(default)]
    pub skipped: Vec<String>,
    /// How many more were left out than [`StartTree::skipped`] names.
    #[serde(default)]
    pub skipped_unlisted: usize,
}

impl StartTree {
    /// The record of `snapshot`.
    pub fn of(snapshot: &Snapshot) -> StartTree {
        let skipped: Vec<String> = snapshot
            .skipped
            .iter()
            .take(SKIPPED_KEPT)
            .map(|s| s.path.clone())
            .collect();
        StartTree {
            tree: snapshot.tree.clone(),
            skipped_unlisted: snapshot.skipped.len() - skipped.len(),
            skipped,
        }
    }
}

/// What a run recorded of its start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// Its workspace's snapshot.
    Taken(StartTree),
    /// No snapshot could be taken: why (what changed is then not known).
    Failed(String),
    /// The run recorded nothing (it began under an older tether): what changed is not known.
    Unrecorded,
}

impl Start {
    /// What `spec` (a run's spec) recorded.
    pub fn of_spec(spec: &Value) -> Start {
        let Some(value) = spec.get(SPEC_KEY) else {
            return Start::Unrecorded;
        };
        if let Ok(tree) = serde_json::from_value::<StartTree>(value.clone()) {
            return Start::Taken(tree);
        }
        match value.get("failed").and_then(Value::as_str) {
            Some(why) => Start::Failed(why.to_owned()),
            None => Start::Failed("the record of the run's start is unreadable".to_owned()),
        }
    }

    /// Records this in `spec`, a JSON object (nothing for [`Start::Unrecorded`]).
    pub fn record(&self, spec: &mut Value) {
        let value = match self {
            Start::Taken(tree) => serde_json::to_value(tree).ok(),
            Start::Failed(why) => Some(serde_json::json!({ "failed": why })),
            Start::Unrecorded => None,
        };
        if let (Value::Object(map), Some(value)) = (spec, value) {
            map.insert(SPEC_KEY.to_owned(), value);
        }
    }

    /// The tree, when a snapshot was taken.
    pub fn tree(&self) -> Option<&StartTree> {
        match self {
            Start::Taken(tree) => Some(tree),
            Start::Failed(_) | Start::Unrecorded => None,
        }
    }

    /// Why there is no tree, when there is none.
    pub fn why_not(&self) -> Option<String> {
        match self {
            Start::Taken(_) => None,
            Start::Failed(why) => Some(format!(
                "no snapshot of the workspace could be taken when the run began: {why}"
            )),
            Start::Unrecorded => Some(
                "the run recorded no snapshot of the workspace when it began (an older tether \
                 began it)"
                    .to_owned(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

    #[test]
    fn the_record_round_trips_and_a_missing_or_bad_one_knows_no_tree() {
        let taken = Start::Taken(StartTree {
            tree: ObjectId::parse(TREE).unwrap(),
            skipped: vec!["big.bin".to_owned()],
            skipped_unlisted: 0,
        });
        let mut spec = json!({"prompt": "p"});
        taken.record(&mut spec);
        assert_eq!(spec["start"]["tree"], TREE);
        assert_eq!(Start::of_spec(&spec), taken);
        Start::Failed("no sandbox".to_owned()).record(&mut spec);
        assert_eq!(
            Start::of_spec(&spec),
            Start::Failed("no sandbox".to_owned())
        );
        assert_eq!(Start::of_spec(&json!({})), Start::Unrecorded);
        // An older run's record of its repository is no start.
        assert_eq!(
            Start::of_spec(&json!({"git": {"git_dir": "/r/.git", "work_tree": "/r"}})),
            Start::Unrecorded
        );
        for bad in [json!("HEAD"), json!({"tree": "HEAD"}), json!({"tree": 1})] {
            assert!(
                matches!(Start::of_spec(&json!({ "start": bad })), Start::Failed(_)),
                "{bad}"
            );
        }
    }

    #[test]
    fn an_object_id_is_forty_or_sixty_four_lowercase_hex_digits() {
        assert!(ObjectId::parse(TREE).is_some());
        assert!(ObjectId::parse(&"a".repeat(64)).is_some());
        for bad in ["", "HEAD", &TREE.to_uppercase(), &TREE[..39], "--output=x"] {
            assert!(ObjectId::parse(bad).is_none(), "{bad}");
        }
    }
}
