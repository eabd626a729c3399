//! The file system methods tether offers an ACP agent (`fs/read_text_file`,
//! `fs/write_text_file`): only inside the workspace, never tether's own state, never a change to
//! `.git`, regular files only, opened without blocking and bounded in size — the same rules as
//! the built-in agent's file tools, since these calls come from the same kind of untrusted
//! model. They run in tether's own process, outside the sandbox, while the agent's commands may
//! be swapping paths for symlinks; so, like the built-in tools, the checked path is opened by
//! descriptor beneath the workspace root following no symlink ([`Workspace::open_read`],
//! [`Workspace::open_write`]), and a path that changed after its check is refused.

use std::io::{Read as _, Write as _};

use agent_client_protocol::v1::schema::{
    ReadTextFileRequest, ReadTextFileResponse, WriteTextFileRequest, WriteTextFileResponse,
};
use tether_tools::Workspace;

/// The largest file read or written through the protocol.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Why a file request was refused; the text goes back to the agent.
pub(crate) type FsRefusal = String;

/// Reads a text file inside the workspace (from 1-based `line`, at most `limit` lines).
pub(crate) fn read(
    workspace: &Workspace,
    request: &ReadTextFileRequest,
) -> Result<ReadTextFileResponse, FsRefusal> {
    let path = request.path.to_string_lossy();
    let real = workspace.resolve(&path).map_err(|e| e.to_string())?;
    let file = workspace
        .open_read(&real)
        .map_err(|e| format!("`{path}`: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("`{path}`: {e}"))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "`{path}` is {} bytes, more than the {MAX_FILE_BYTES} read through the protocol",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("`{path}`: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("`{path}` is not UTF-8 text"))?;
    let skip = request.line.map_or(0, |l| l.saturating_sub(1)) as usize;
    let take = request.limit.map_or(usize::MAX, |l| l as usize);
    let content = if skip == 0 && take == usize::MAX {
        text
    } else {
        text.split_inclusive('\n').skip(skip).take(take).collect()
    };
    Ok(ReadTextFileResponse::new(content))
}

/// Writes a text file inside the workspace (never in `.git` or tether's state).
pub(crate) fn write(
    workspace: &Workspace,
    request: &WriteTextFileRequest,
) -> Result<WriteTextFileResponse, FsRefusal> {
    let path = request.path.to_string_lossy();
    let real = workspace
        .resolve_writable(&path)
        .map_err(|e| e.to_string())?;
    if request.content.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "the content for `{path}` is more than the {MAX_FILE_BYTES} bytes written through the protocol"
        ));
    }
    let mut written = workspace
        .open_write(&real)
        .map_err(|e| format!("`{path}`: {e}"))?;
    written
        .file
        .write_all(request.content.as_bytes())
        .map_err(|e| format!("`{path}`: {e}"))?;
    Ok(WriteTextFileResponse::new())
}

#[cfg(test)]
#[path = "fs_tests.rs"]
mod tests;
