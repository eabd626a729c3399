//! Settings this build recognises but cannot act on yet, refused with why and what to use.
//!
//! A setting that parsed and then did nothing would let `tether validate` say OK for a file
//! that does not do what it says. These rules turn each such setting into a problem, so every
//! command that loads the file (`validate` first) names it with its line; when the feature is
//! built, its rule goes away.

use crate::config::ExecutorKind;
use crate::reader::{Reader, Table, entry};

/// An executor kind this build cannot run (Codex), at the span of its value.
pub(crate) fn executor_kind(r: &mut Reader, t: &Table, kind: ExecutorKind) {
    if kind.is_built() {
        return;
    }
    let Some((_, value)) = entry(t, "kind") else {
        return;
    };
    let (agent, example) = match kind {
        ExecutorKind::Codex => ("Codex", r#"["codex", "exec", "{prompt}"]"#),
        ExecutorKind::Builtin | ExecutorKind::Command | ExecutorKind::Claude | ExecutorKind::Pi => {
            return;
        }
    };
    r.report(
        Some(value.span()),
        "executor.kind",
        format!(
            "{:?} ({agent}) is not built yet: only \"builtin\" (tether's own agent on [model]), \
             \"claude\" (Claude Code), \"pi\" (pi) and \"command\" (any program) run today; to run {agent} now, set kind = \
             \"command\" and command = {example}",
            kind.as_str()
        ),
    );
}
