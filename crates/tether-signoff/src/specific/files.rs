//! What kind of file a quoted line is in, by its name: the few kinds whose lines are judged
//! apart from what they say.

use std::path::Path;

/// A file's kind, as far as the specificity of its lines goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FileKind {
    /// A license file (`LICENSE`, `LICENCE.md`, `COPYING`, `NOTICE.txt`, `UNLICENSE`): every
    /// line of it is boilerplate.
    License,
    /// Markdown (`.md`, `.markdown`, `.mdx`): a `#` line is a heading, not a comment.
    Markdown,
    /// A list of entries, one a line: ignore files (`.gitignore`, `.dockerignore`, any
    /// `.*ignore`) and pip's requirement and constraint files (`requirements*.txt`,
    /// `constraints*.txt`, `*.in` beside them). An entry names what it lists, so a line with a
    /// letter or digit that is not a `#` comment states something (`flask`, `*.log`).
    List,
    /// Anything else.
    Other,
}

impl FileKind {
    /// The kind of the file at `path`.
    pub(super) fn of(path: &Path) -> FileKind {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_ascii_lowercase();
        let (stem, ext) = name.rsplit_once('.').unwrap_or((name.as_str(), ""));
        let stem = if stem.is_empty() { name.as_str() } else { stem };
        if ["license", "licence", "copying", "notice", "unlicense"]
            .iter()
            .any(|l| stem == *l || stem.starts_with(&format!("{l}-")))
        {
            return FileKind::License;
        }
        if matches!(ext, "md" | "markdown" | "mdx") {
            return FileKind::Markdown;
        }
        let ignore = name.starts_with('.') && name.ends_with("ignore");
        let requirements = ["requirements", "constraints"]
            .iter()
            .any(|r| stem.starts_with(r))
            && matches!(ext, "txt" | "in");
        if ignore || requirements {
            return FileKind::List;
        }
        FileKind::Other
    }
}
