//! Reading `plan.md` and writing patches to it safely.
//!
//! The agent edits the plan with its own tools while tether runs, so a patch is computed from a
//! fresh read and written only if the file still holds exactly the text the patch was computed
//! from; the write goes through a temporary file and a rename, so a crash never leaves a torn
//! plan.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::{Patch, PatchError, PlanDoc};

/// Reading or patching the plan file failed.
#[derive(Debug, thiserror::Error)]
pub enum PlanFileError {
    /// The plan file does not exist; create it (`tether init`) or point `plan` in tether.toml at
    /// the right file.
    #[error("{} does not exist; run `tether init` or set `plan` in tether.toml", path.display())]
    Missing {
        /// The path looked for.
        path: PathBuf,
    },
    /// The file is not UTF-8 text; fix the bytes at the named line.
    #[error("{}:{line}: not UTF-8 text (invalid byte at column {column})", path.display())]
    NotUtf8 {
        /// The plan file.
        path: PathBuf,
        /// The 1-based line of the first invalid byte.
        line: usize,
        /// The 1-based byte column of the first invalid byte.
        column: usize,
    },
    /// Reading or writing failed at the OS level.
    #[error("{}: {cause}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        cause: io::Error,
    },
    /// The file changed between reading it and writing the patch, every time it was tried;
    /// try again when whoever is editing it has finished.
    #[error("{} kept changing while tether tried to patch it; nothing was written", path.display())]
    Changed {
        /// The plan file.
        path: PathBuf,
    },
    /// The path is not a regular file (a directory, a FIFO, a device, a socket): tether reads
    /// only regular files, so a FIFO can never make it wait forever. Point `plan` at a file.
    #[error("{}: not a regular file ({kind}); the plan must be a regular file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is instead.
        kind: &'static str,
    },
    /// The file is larger than tether reads; a plan is prose and should be far smaller.
    #[error("{}: {size} bytes is more than the {limit} bytes a plan file may have", path.display())]
    TooLarge {
        /// The plan file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The most tether reads.
        limit: u64,
    },
    /// The patch could not be made (the plan has errors, or the goal does not exist).
    #[error(transparent)]
    Patch(#[from] PatchError),
}

impl PlanFileError {
    /// Whether the person can fix it in the plan file or the `plan` setting (a missing file, a
    /// directory, bytes that are not UTF-8, a file too large, a patch that cannot apply), rather
    /// than a failure of the system (I/O, a file that kept changing).
    pub fn is_usage(&self) -> bool {
        match self {
            PlanFileError::Missing { .. }
            | PlanFileError::NotUtf8 { .. }
            | PlanFileError::NotAFile { .. }
            | PlanFileError::TooLarge { .. }
            | PlanFileError::Patch(_) => true,
            PlanFileError::Io { .. } | PlanFileError::Changed { .. } => false,
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> PlanFileError + '_ {
    move |cause| PlanFileError::Io {
        path: path.to_owned(),
        cause,
    }
}

/// The largest plan file tether reads (100,000 goals take about 30 MB).
pub const MAX_PLAN_BYTES: u64 = 64 * 1024 * 1024;

/// Reads the bytes of the plan file, bounded: only a regular file (a symlink to one is fine),
/// opened without blocking (a FIFO swapped in after the check cannot hang the read), at most
/// [`MAX_PLAN_BYTES`].
fn read_bounded(path: &Path) -> Result<Vec<u8>, PlanFileError> {
    use std::io::Read as _;
    use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
    let not_found = |e: io::Error| {
        if e.kind() == io::ErrorKind::NotFound {
            PlanFileError::Missing {
                path: path.to_owned(),
            }
        } else {
            io_err(path)(e)
        }
    };
    let regular = |meta: &fs::Metadata| -> Result<(), PlanFileError> {
        let t = meta.file_type();
        let kind = if t.is_file() {
            return Ok(());
        } else if t.is_dir() {
            "a directory"
        } else if t.is_fifo() {
            "a FIFO"
        } else if t.is_socket() {
            "a socket"
        } else {
            "a device"
        };
        Err(PlanFileError::NotAFile {
            path: path.to_owned(),
            kind,
        })
    };
    regular(&fs::metadata(path).map_err(not_found)?)?;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
        .map_err(not_found)?;
    let meta = file.metadata().map_err(io_err(path))?;
    regular(&meta)?;
    if meta.len() > MAX_PLAN_BYTES {
        return Err(PlanFileError::TooLarge {
            path: path.to_owned(),
            size: meta.len(),
            limit: MAX_PLAN_BYTES,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_PLAN_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_err(path))?;
    if bytes.len() as u64 > MAX_PLAN_BYTES {
        return Err(PlanFileError::TooLarge {
            path: path.to_owned(),
            size: bytes.len() as u64,
            limit: MAX_PLAN_BYTES,
        });
    }
    Ok(bytes)
}

/// Reads and parses the plan file. Parsing never fails; problems are in the plan.
pub fn read(path: &Path) -> Result<PlanDoc, PlanFileError> {
    let bytes = read_bounded(path)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let before = &bytes[..at];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let column = at
            - before
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |i| i + 1)
            + 1;
        PlanFileError::NotUtf8 {
            path: path.to_owned(),
            line,
            column,
        }
    })?;
    Ok(PlanDoc::parse(path, text))
}

/// How many times a patch is recomputed when the file changes underneath it.
const ATTEMPTS: usize = 5;

/// Reads the plan, computes a patch with `make`, and writes the result — only if the file still
/// holds the text the patch was computed from. Returns the patched document.
pub fn patch(
    path: &Path,
    mut make: impl FnMut(&PlanDoc) -> Result<Patch, PatchError>,
) -> Result<PlanDoc, PlanFileError> {
    for _ in 0..ATTEMPTS {
        let doc = read(path)?;
        let patch = make(&doc)?;
        if patch.is_empty() {
            return Ok(doc);
        }
        let new_text = patch.apply(doc.text());
        let current = read_bounded(path)?;
        if current != doc.text().as_bytes() {
            tracing::debug!(path = %path.display(), "plan changed while patching; retrying");
            continue;
        }
        write_atomically(path, new_text.as_bytes())?;
        return Ok(PlanDoc::parse(path, new_text));
    }
    Err(PlanFileError::Changed {
        path: path.to_owned(),
    })
}

/// Replaces the whole plan file with `text`, atomically (a temporary file renamed over it). For
/// the few writers that own the file for a moment: plan mode's `write_plan` tool, and restoring
/// the plan when a draft is cancelled. Everyone else patches.
pub fn write(path: &Path, text: &str) -> Result<(), PlanFileError> {
    write_atomically(path, text.as_bytes())
}

/// Writes `bytes` to a temporary file beside `path`, syncs it, keeps the original's permissions,
/// and renames it over `path`. When `path` is a symlink the file it points to is replaced, so the
/// link stays a link and the real plan gets the change.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), PlanFileError> {
    let resolved;
    let path = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            resolved = fs::canonicalize(path).map_err(io_err(path))?;
            resolved.as_path()
        }
        _ => path,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "plan".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.tether-{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        if let Ok(meta) = fs::metadata(path) {
            fs::set_permissions(&tmp, meta.permissions())?;
        }
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(io_err(path))
}
