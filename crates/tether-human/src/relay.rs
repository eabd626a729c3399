//! Where an answer a chat's listener received for someone else's wait is stored.
//!
//! Slack hands each event to one of an app's sockets, and Telegram lets one process poll a
//! bot; either way the process that receives a reply may not be the one waiting for it — it
//! may be another tether process of this workspace, or of another workspace. The answer is
//! then recorded in the store of the workspace that asked (first answer wins), which wakes its
//! waiter: this process's own store when it holds the question (a team store shared by the
//! workspaces, or the same workspace), else that workspace's store file.

use std::path::Path;

use tether_store::{BackendKind, Journal, QuestionId, Store, StoreError};

/// Runs `f` on the store holding the question `id` of the workspace whose state directory is
/// `state_dir`; `own` is this process's store, kept in `own_dir`. `None` when that workspace has
/// no store any more (its question is gone).
pub(crate) fn in_store_of<T, E: From<StoreError>>(
    own: &Journal,
    own_dir: &Path,
    state_dir: &Path,
    id: &QuestionId,
    f: impl FnOnce(&Store) -> Result<T, E>,
) -> Result<Option<T>, E> {
    let holds = same_dir(own_dir, state_dir) || {
        let store = own.store();
        store.kind() == BackendKind::Team && store.question(id).is_ok()
    };
    if holds {
        return f(&own.store()).map(Some);
    }
    let db = state_dir.join("tether.db");
    if !db.exists() {
        return Ok(None);
    }
    let store = Store::open(&db)?;
    f(&store).map(Some)
}

/// Whether `a` and `b` name one directory.
fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (a.canonicalize(), b.canonicalize()),
            (Ok(a), Ok(b)) if a == b
        )
}
