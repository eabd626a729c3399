//! The per-bot directory every tether process of this user on this machine shares: the poller
//! lock and the registry of questions waiting for a reply.
//!
//! Telegram allows one `getUpdates` poller per bot token, but a run, `tether mcp` in an editor
//! and a `tether ask` in a script may all wait at once, in one workspace or several. So:
//!
//! - `poller.lock` is taken with an exclusive, non-blocking `flock`; the process holding it is
//!   the only poller of this bot on this machine. The lock dies with the process (even on
//!   kill -9), and a waiting process takes it over on its next try.
//! - `posts/<chat>_<message>.json` is one [`WaitingPost`] per question waiting for a reply:
//!   which workspace (its state dir) and which question the message is. The poller looks a
//!   reply up here and records it in that workspace's store, whoever asked. An entry is removed
//!   only once its question is settled, so a reply given while its asker was killed is still
//!   recorded by any poller (or by the resumed run); a poller starting drops the posts of
//!   workspaces that are gone.
//!
//! - `offset` is the next `getUpdates` offset, written after each update is handled, so the
//!   next poller confirms what the last one handled instead of reading it again. It is ignored
//!   when older than [`OFFSET_MAX_AGE`]: Telegram may restart its update ids after a week of
//!   silence, and a stale offset would then hide new updates.
//!
//! The directory is `$XDG_RUNTIME_DIR/tether/telegram/<bot id>` (else under `$HOME/.cache`),
//! keyed by the bot id — the digits before `:` in the token, which are the bot's public user id,
//! never the secret.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How long a saved offset is trusted (Telegram may renumber updates after a week of silence).
pub const OFFSET_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(5 * 24 * 3600);

/// A question posted to Telegram and waiting for its reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitingPost {
    /// The chat it was posted to (numeric, as Telegram returned it).
    pub chat_id: i64,
    /// The question message's id.
    pub message_id: i64,
    /// The asking workspace's state dir (`.tether/`), whose store gets the answer.
    pub state_dir: PathBuf,
    /// The question's id in that store.
    pub question_id: String,
    /// The question's options (button labels), for the press's confirmation.
    #[serde(default)]
    pub options: Vec<String>,
    /// The forum topic the question opened, where any message answers it (a chat with
    /// topics); `None` in a reply chain.
    #[serde(default)]
    pub thread_id: Option<i64>,
    /// The question message's text. A lost `sendMessage` response can make a retry post the
    /// question twice (Telegram has no idempotency key); a reply to the unregistered first
    /// copy is matched by this text.
    #[serde(default)]
    pub text: Option<String>,
    /// When the question message was sent (its `date`, Unix seconds), if known: only a copy
    /// sent shortly before it ([`COPY_WINDOW_SECS`]) is matched by text, never an older
    /// question that happens to read the same.
    #[serde(default)]
    pub posted_at: Option<i64>,
}

/// How long before the registered post a copy of it (a retried send's first attempt) may have
/// been sent: more than every retry of a send takes.
pub const COPY_WINDOW_SECS: i64 = 600;

impl WaitingPost {
    /// Whether `message` — a bot message not registered itself — is a copy of this post: the
    /// same text, sent at most [`COPY_WINDOW_SECS`] before it.
    pub fn is_copy(&self, message: &crate::wire::Message) -> bool {
        let (Some(text), Some(posted_at)) = (self.text.as_deref(), self.posted_at) else {
            return false;
        };
        let sent = message.date;
        message.text.as_deref().map(str::trim) == Some(text.trim())
            && sent <= posted_at
            && sent >= posted_at - COPY_WINDOW_SECS
    }
}

/// The shared directory of one bot.
#[derive(Debug, Clone)]
pub struct Registry {
    dir: PathBuf,
}

/// The poller lock; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct PollerLock {
    _file: File,
}

impl Registry {
    /// The default per-user base directory.
    pub fn default_base() -> PathBuf {
        if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
            return PathBuf::from(dir).join("tether").join("telegram");
        }
        if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
            return PathBuf::from(home)
                .join(".cache")
                .join("tether")
                .join("telegram");
        }
        let user = std::env::var("USER").unwrap_or_else(|_| "user".to_owned());
        std::env::temp_dir()
            .join(format!("tether-{user}"))
            .join("telegram")
    }

    /// The registry of `bot_id` under `base`, created if needed (owner-only).
    pub fn open(base: &Path, bot_id: u64) -> io::Result<Self> {
        let dir = base.join(bot_id.to_string());
        fs::create_dir_all(dir.join("posts"))?;
        restrict(&dir);
        Ok(Registry { dir })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Tries to become this bot's poller; `None` when another process (or another client in
    /// this one) polls.
    pub fn try_lock(&self) -> io::Result<Option<PollerLock>> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join("poller.lock"))?;
        match file.try_lock() {
            Ok(()) => Ok(Some(PollerLock { _file: file })),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(e),
        }
    }

    /// Records `post` as waiting (atomically: written aside, then renamed).
    /// A relative state dir is made absolute first: other processes read it from other
    /// working directories.
    pub fn add(&self, post: &WaitingPost) -> io::Result<()> {
        let path = self.path(post.chat_id, post.message_id);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let mut post = post.clone();
        post.state_dir = std::path::absolute(&post.state_dir)?;
        let json = serde_json::to_vec(&post).map_err(io::Error::other)?;
        fs::write(&tmp, json)?;
        fs::rename(&tmp, &path)
    }

    /// The waiting post for message `message_id` of `chat_id`.
    pub fn find(&self, chat_id: i64, message_id: i64) -> Option<WaitingPost> {
        let bytes = fs::read(self.path(chat_id, message_id)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Every waiting post in `chat_id`.
    pub fn in_chat(&self, chat_id: i64) -> Vec<WaitingPost> {
        let prefix = format!("{chat_id}_");
        let Ok(entries) = fs::read_dir(self.dir.join("posts")) else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.starts_with(&prefix) && name.ends_with(".json")
            })
            .filter_map(|e| serde_json::from_slice(&fs::read(e.path()).ok()?).ok())
            .collect()
    }

    /// The waiting post that opened the forum topic `thread_id` of `chat_id`.
    pub fn in_topic(&self, chat_id: i64, thread_id: i64) -> Option<WaitingPost> {
        self.in_chat(chat_id)
            .into_iter()
            .find(|p| p.thread_id == Some(thread_id))
    }

    /// Forgets the posts of workspaces that no longer exist (their state directory, `.tether/`,
    /// is gone): nobody can wait for them again. A workspace whose store is a team's database
    /// has no `tether.db` of its own, and keeps its posts.
    pub fn prune_missing(&self) {
        let Ok(entries) = fs::read_dir(self.dir.join("posts")) else {
            return;
        };
        for entry in entries.filter_map(Result::ok) {
            let Ok(bytes) = fs::read(entry.path()) else {
                continue;
            };
            if let Ok(post) = serde_json::from_slice::<WaitingPost>(&bytes)
                && !post.state_dir.is_dir()
            {
                let _ = fs::remove_file(entry.path());
            }
        }
    }

    /// Forgets a post (its question is settled). Missing is fine.
    pub fn remove(&self, chat_id: i64, message_id: i64) {
        let _ = fs::remove_file(self.path(chat_id, message_id));
    }

    /// The next `getUpdates` offset the last poller saved, if recent enough.
    pub fn offset(&self) -> Option<i64> {
        let path = self.dir.join("offset");
        let age = fs::metadata(&path).ok()?.modified().ok()?.elapsed().ok()?;
        if age > OFFSET_MAX_AGE {
            return None;
        }
        fs::read_to_string(path).ok()?.trim().parse().ok()
    }

    /// Saves the next `getUpdates` offset (best effort: without it, the next poller reads the
    /// unconfirmed updates again, which finds their questions settled).
    pub fn set_offset(&self, offset: i64) {
        let path = self.dir.join("offset");
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        if fs::write(&tmp, offset.to_string()).is_ok() {
            let _ = fs::rename(&tmp, &path);
        }
    }

    fn path(&self, chat_id: i64, message_id: i64) -> PathBuf {
        self.dir
            .join("posts")
            .join(format!("{chat_id}_{message_id}.json"))
    }
}

/// The directory is the user's alone (the posts name workspaces).
fn restrict(dir: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_lock_holder_at_a_time_and_posts_round_trip() {
        let base = tempfile::tempdir().unwrap();
        let reg = Registry::open(base.path(), 42).unwrap();
        let first = reg.try_lock().unwrap().expect("free");
        assert!(reg.try_lock().unwrap().is_none(), "a second holder");
        drop(first);
        assert!(reg.try_lock().unwrap().is_some(), "released on drop");
        let post = WaitingPost {
            chat_id: -100,
            message_id: 7,
            state_dir: "/ws/.tether".into(),
            question_id: "q-1".into(),
            options: vec!["A".into()],
            thread_id: None,
            text: None,
            posted_at: None,
        };
        reg.add(&post).unwrap();
        assert_eq!(reg.find(-100, 7), Some(post.clone()));
        assert_eq!(reg.in_chat(-100), vec![post]);
        assert!(reg.in_chat(-10).is_empty());
        reg.remove(-100, 7);
        assert_eq!(reg.find(-100, 7), None);
        assert_eq!(reg.offset(), None);
        reg.set_offset(9001);
        assert_eq!(reg.offset(), Some(9001));
    }

    #[test]
    fn posts_of_workspaces_that_are_gone_are_pruned() {
        let base = tempfile::tempdir().unwrap();
        let reg = Registry::open(base.path(), 42).unwrap();
        let live = base.path().join("live");
        fs::create_dir_all(&live).unwrap();
        fs::write(live.join("tether.db"), b"").unwrap();
        let post = |message_id, state_dir: &Path| WaitingPost {
            chat_id: -100,
            message_id,
            state_dir: state_dir.to_path_buf(),
            question_id: "q-1".into(),
            options: Vec::new(),
            thread_id: None,
            text: None,
            posted_at: None,
        };
        reg.add(&post(1, &live)).unwrap();
        reg.add(&post(2, &base.path().join("gone"))).unwrap();
        reg.prune_missing();
        assert!(reg.find(-100, 1).is_some());
        assert!(reg.find(-100, 2).is_none());
    }

    #[test]
    fn only_a_recent_same_text_bot_message_is_a_copy() {
        let post = WaitingPost {
            chat_id: -100,
            message_id: 9,
            state_dir: "/ws/.tether".into(),
            question_id: "q-1".into(),
            options: Vec::new(),
            thread_id: None,
            text: Some("Deploy now?".into()),
            posted_at: Some(10_000),
        };
        let message = |text: &str, date: i64| {
            serde_json::from_value::<crate::wire::Message>(serde_json::json!({
                "message_id": 8, "chat": {"id": -100, "type": "group"}, "date": date, "text": text,
            }))
            .unwrap()
        };
        assert!(
            post.is_copy(&message("Deploy now?", 9_990)),
            "a retried send's first copy"
        );
        assert!(post.is_copy(&message(" Deploy now? ", 10_000)));
        assert!(
            !post.is_copy(&message("Deploy now?", 10_000 - COPY_WINDOW_SECS - 1)),
            "an old question reading the same"
        );
        assert!(
            !post.is_copy(&message("Deploy now?", 10_001)),
            "a later message"
        );
        assert!(!post.is_copy(&message("Deploy later?", 9_990)));
        let unknown = WaitingPost {
            posted_at: None,
            ..post
        };
        assert!(
            !unknown.is_copy(&message("Deploy now?", 9_990)),
            "no date, no guess"
        );
    }
}
