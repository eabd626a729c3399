//! Who waits on which Slack post, across processes and workspaces: one small JSON file per
//! waiting question in a per-user directory, keyed by the bot's channel and the post's `ts`.
//!
//! Slack hands each Socket Mode event to only one of an app's open sockets. A process that
//! receives a reply or a button press for a thread it does not wait on looks the post up here,
//! opens that workspace's store and records the answer there with [`crate::broker::answer`],
//! which pokes the waiter. The store stays the truth (first answer wins); a stale file (its
//! waiter was killed) only leads to an answer stored for a question still pending — which the
//! resumed run then finds.
//!
//! The directory is `$TETHER_SLACK_REGISTRY`, else `$XDG_RUNTIME_DIR/tether/slack`, else
//! `~/.cache/tether/slack`; a file is written when a wait starts and removed when it ends.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One waiting question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// The workspace's `.tether/`.
    pub(crate) state_dir: PathBuf,
    /// The question's id in that store.
    pub(crate) question_id: String,
    /// The Slack channel's ID.
    pub(crate) channel: String,
    /// The thread's parent ts.
    pub(crate) thread_ts: String,
    /// The question's own ts.
    pub(crate) ts: String,
}

/// The registry directory for one bot (API URL and channel).
#[derive(Debug, Clone)]
pub(crate) struct Registry {
    dir: Option<PathBuf>,
}

impl Registry {
    /// The per-user registry of the bot posting to `channel` at `api_url`.
    pub(crate) fn for_bot(api_url: &str, channel: &str) -> Self {
        let base = std::env::var_os("TETHER_SLACK_REGISTRY")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("XDG_RUNTIME_DIR")
                    .map(|d| PathBuf::from(d).join("tether").join("slack"))
            })
            .or_else(|| {
                std::env::var_os("HOME")
                    .map(|d| PathBuf::from(d).join(".cache").join("tether").join("slack"))
            });
        let bot: String = format!("{api_url}-{channel}")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        Registry {
            dir: base.map(|b| b.join(bot)),
        }
    }

    /// A registry in `dir`.
    pub(crate) fn at(dir: PathBuf) -> Self {
        Registry { dir: Some(dir) }
    }

    fn file(&self, channel: &str, ts: &str) -> Option<PathBuf> {
        Some(self.dir.as_ref()?.join(format!("{channel}-{ts}.json")))
    }

    /// Records that `entry` waits (best effort: without a registry, only this process routes).
    pub(crate) fn add(&self, entry: &Entry) {
        let (Some(dir), Some(file)) = (self.dir.as_ref(), self.file(&entry.channel, &entry.ts))
        else {
            return;
        };
        let written = std::fs::create_dir_all(dir).and_then(|()| {
            let tmp = file.with_extension("tmp");
            std::fs::write(&tmp, serde_json::to_vec(entry).unwrap_or_default())?;
            std::fs::rename(&tmp, &file)
        });
        if let Err(e) = written {
            tracing::warn!(error = %e, "could not register the slack wait");
        }
    }

    /// Forgets `entry`.
    pub(crate) fn remove(&self, entry: &Entry) {
        if let Some(file) = self.file(&entry.channel, &entry.ts) {
            let _ = std::fs::remove_file(file);
        }
    }

    /// The wait on the post `ts` of `channel`.
    pub(crate) fn by_post(&self, channel: &str, ts: &str) -> Option<Entry> {
        read(&self.file(channel, ts)?)
    }

    /// Every wait in `thread_ts` of `channel`.
    pub(crate) fn in_thread(&self, channel: &str, thread_ts: &str) -> Vec<Entry> {
        let Some(dir) = self.dir.as_ref() else {
            return Vec::new();
        };
        let Ok(files) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let prefix = format!("{channel}-");
        files
            .flatten()
            .filter(|f| f.file_name().to_string_lossy().starts_with(&prefix))
            .filter_map(|f| read(&f.path()))
            .filter(|e| e.thread_ts == thread_ts)
            .collect()
    }
}

fn read(path: &Path) -> Option<Entry> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}
