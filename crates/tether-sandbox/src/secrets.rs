//! Taking keys out of tether's own environment.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt as _;

/// Takes every variable whose name `is_secret` picks out of this process's environment and
/// returns them. Each value's bytes are overwritten in place before the variable is removed:
/// removing it alone leaves the bytes readable in `/proc/<pid>/environ`, which root can read
/// even from inside a sandbox.
///
/// Call it first thing in `main`, before any thread exists: changing the environment while
/// another thread reads it is undefined behaviour.
#[allow(unsafe_code)]
pub fn take_secrets(is_secret: impl Fn(&str) -> bool) -> Vec<(String, String)> {
    let picked: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| name.to_str().is_some_and(&is_secret))
        .collect();
    let mut taken = Vec::with_capacity(picked.len());
    for (name, value) in picked {
        if let Ok(c_name) = CString::new(name.as_bytes()) {
            // SAFETY: single-threaded by this function's contract. `getenv` returns the
            // environment's own NUL-terminated copy of the value (or null); its length is
            // that of the value we just read; overwriting it in place changes no length.
            unsafe {
                let ptr = libc::getenv(c_name.as_ptr());
                if !ptr.is_null() {
                    let len = libc::strlen(ptr);
                    std::ptr::write_bytes(ptr, b'x', len);
                }
            }
        }
        // SAFETY: single-threaded by this function's contract.
        unsafe { std::env::remove_var(&name) };
        if let (Some(name), Some(value)) = (name.to_str(), value.to_str()) {
            taken.push((name.to_owned(), value.to_owned()));
        }
    }
    taken
}
