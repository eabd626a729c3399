#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use tempfile::TempDir;

use super::{PathError, Workspace};

/// A temporary directory holding `ws/` (the workspace, with `src/lib.rs`) and `outside/` (with
/// `secret.txt`).
struct Fixture {
    _dir: TempDir,
    ws: Workspace,
    outside: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(base.join("ws/src")).unwrap();
        fs::write(base.join("ws/src/lib.rs"), "fn main() {}\n").unwrap();
        fs::create_dir_all(base.join("outside")).unwrap();
        fs::write(base.join("outside/secret.txt"), "secret\n").unwrap();
        let ws = Workspace::new(base.join("ws")).unwrap();
        Self {
            _dir: dir,
            ws,
            outside: base.join("outside"),
        }
    }

    fn root(&self) -> &Path {
        self.ws.root()
    }

    fn link(&self, name: &str, target: impl AsRef<Path>) {
        symlink(target, self.root().join(name)).unwrap();
    }

    fn ok(&self, path: &str) -> PathBuf {
        match self.ws.resolve(path) {
            Ok(real) => real,
            Err(err) => panic!("`{path}` should resolve, got: {err}"),
        }
    }

    fn outside_err(&self, path: &str) -> String {
        match self.ws.resolve(path) {
            Err(err @ PathError::Outside { .. }) => err.to_string(),
            other => panic!("`{path}` should be outside the workspace, got {other:?}"),
        }
    }
}

#[test]
fn relative_paths_resolve_under_the_root() {
    let fx = Fixture::new();
    assert_eq!(fx.ok("src/lib.rs"), fx.root().join("src/lib.rs"));
    assert_eq!(fx.ok("./src/./lib.rs"), fx.root().join("src/lib.rs"));
    assert_eq!(
        fx.ok("src/new/deeper/file.rs"),
        fx.root().join("src/new/deeper/file.rs")
    );
    assert_eq!(fx.ok("src/../README.md"), fx.root().join("README.md"));
}

#[test]
fn empty_and_dot_are_the_root() {
    let fx = Fixture::new();
    assert_eq!(fx.ok(""), fx.root());
    assert_eq!(fx.ok("."), fx.root());
    assert_eq!(fx.ws.display(&fx.ok("")), ".");
}

#[test]
fn absolute_paths_inside_are_allowed() {
    let fx = Fixture::new();
    let abs = fx.root().join("src/lib.rs");
    assert_eq!(fx.ok(abs.to_str().unwrap()), abs);
}

#[test]
fn dotdot_leaving_the_root_is_refused() {
    let fx = Fixture::new();
    let msg = fx.outside_err("../outside/secret.txt");
    assert!(
        msg.contains("`../outside/secret.txt` is outside the workspace"),
        "{msg}"
    );
    assert!(
        msg.contains(&fx.outside.join("secret.txt").display().to_string()),
        "{msg}"
    );
    fx.outside_err("..");
    fx.outside_err("src/../../x");
    fx.outside_err("missing/../../x");
    fx.outside_err("missing/deeper/../../../x");
}

#[test]
fn absolute_paths_outside_are_refused() {
    let fx = Fixture::new();
    let msg = fx.outside_err("/etc/passwd");
    assert!(
        msg.starts_with("`/etc/passwd` is outside the workspace "),
        "{msg}"
    );
    fx.outside_err("/");
    fx.outside_err(fx.outside.join("new.txt").to_str().unwrap());
}

#[test]
fn a_sibling_sharing_the_roots_name_prefix_is_outside() {
    let fx = Fixture::new();
    let sibling = format!("{}2/file", fx.root().display());
    fx.outside_err(&sibling);
}

#[test]
fn a_symlinked_directory_pointing_outside_is_refused() {
    let fx = Fixture::new();
    fx.link("out", &fx.outside);
    let msg = fx.outside_err("out/secret.txt");
    assert!(msg.contains("it resolves to"), "{msg}");
    fx.outside_err("out/new.txt");
    fx.outside_err("out/new/dir/file.txt");
    fx.outside_err("out");
}

#[test]
fn a_symlink_chain_leading_outside_is_refused() {
    let fx = Fixture::new();
    fx.link("l2", &fx.outside);
    fx.link("l1", fx.root().join("l2"));
    fx.link("l0", "l1");
    fx.outside_err("l0/secret.txt");
    fx.outside_err("l1/new.txt");
}

#[test]
fn a_symlink_inside_pointing_inside_is_allowed() {
    let fx = Fixture::new();
    fx.link("code", "src");
    fx.link("lib_link.rs", "src/lib.rs");
    assert_eq!(fx.ok("code/lib.rs"), fx.root().join("src/lib.rs"));
    assert_eq!(fx.ok("code/new.rs"), fx.root().join("src/new.rs"));
    assert_eq!(fx.ok("lib_link.rs"), fx.root().join("src/lib.rs"));
    fx.link("c2", "code");
    assert_eq!(fx.ok("c2/lib.rs"), fx.root().join("src/lib.rs"));
}

#[test]
fn a_dangling_symlink_to_outside_is_refused() {
    let fx = Fixture::new();
    fx.link("dangling", fx.outside.join("missing.txt"));
    fx.outside_err("dangling");
    fx.link("dangling_dir", fx.outside.join("missing_dir"));
    fx.outside_err("dangling_dir/file.txt");
    fx.link("via", "dangling");
    fx.outside_err("via");
}

#[test]
fn a_dangling_symlink_inside_resolves_to_its_target() {
    let fx = Fixture::new();
    fx.link("later", "src/later.rs");
    assert_eq!(fx.ok("later"), fx.root().join("src/later.rs"));
}

#[test]
fn dotdot_after_a_missing_directory_cannot_reach_an_escaping_link() {
    let fx = Fixture::new();
    fx.link("out", &fx.outside);
    fx.outside_err("missing/../out/secret.txt");
    fx.outside_err("missing/../out/new.txt");
}

#[test]
fn a_symlink_loop_is_reported() {
    let fx = Fixture::new();
    fx.link("a", "b");
    fx.link("b", "a");
    let err = fx.ws.resolve("a/x").unwrap_err();
    assert!(matches!(err, PathError::SymlinkLoop { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "`a/x` cannot be resolved: too many levels of symbolic links"
    );
}

#[test]
fn a_file_used_as_a_directory_resolves_and_fails_later() {
    let fx = Fixture::new();
    assert_eq!(fx.ok("src/lib.rs/x"), fx.root().join("src/lib.rs/x"));
}

#[test]
fn a_nul_byte_is_invalid() {
    let fx = Fixture::new();
    let err = fx.ws.resolve("src/\0x").unwrap_err();
    assert_eq!(
        err.to_string(),
        "`src/\\0x` is not a valid path: it contains a NUL byte"
    );
}

#[test]
fn a_root_given_through_a_symlink_is_canonicalised() {
    let fx = Fixture::new();
    let alias = fx.outside.join("alias");
    symlink(fx.root(), &alias).unwrap();
    let ws = Workspace::new(&alias).unwrap();
    assert_eq!(ws.root(), fx.root());
    let through_alias = alias.join("src/lib.rs");
    assert_eq!(
        ws.resolve(through_alias.to_str().unwrap()).unwrap(),
        fx.root().join("src/lib.rs")
    );
}

#[test]
fn a_missing_root_is_a_setup_error() {
    let fx = Fixture::new();
    let err = Workspace::new(fx.root().join("nope")).unwrap_err();
    assert!(err.to_string().starts_with("workspace root "), "{err}");
    let err = Workspace::new(fx.root().join("src/lib.rs")).unwrap_err();
    assert!(err.to_string().ends_with("is not a directory"), "{err}");
}

#[test]
fn display_is_relative_to_the_root() {
    let fx = Fixture::new();
    assert_eq!(fx.ws.display(&fx.root().join("src/lib.rs")), "src/lib.rs");
    assert_eq!(fx.ws.display(Path::new("/etc/passwd")), "/etc/passwd");
}

/// The real location `path` leads to: its longest existing prefix canonicalised.
fn real_location(path: &Path) -> PathBuf {
    let mut prefix = path.to_path_buf();
    loop {
        if let Ok(real) = fs::canonicalize(&prefix) {
            return real;
        }
        if !prefix.pop() {
            return prefix;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Whatever the model writes, an accepted path really lies under the root.
    #[test]
    fn accepted_paths_stay_inside(
        parts in prop::collection::vec(
            prop::sample::select(vec!["src", "..", ".", "out", "in", "dangling", "new", "lib.rs"]),
            0..6,
        ),
        absolute in any::<bool>(),
    ) {
        let fx = Fixture::new();
        fx.link("out", &fx.outside);
        fx.link("in", "src");
        fx.link("dangling", fx.outside.join("gone"));
        let rel = parts.join("/");
        let path = if absolute { format!("{}/{rel}", fx.root().display()) } else { rel };
        if let Ok(real) = fx.ws.resolve(&path) {
            prop_assert!(real.starts_with(fx.root()), "{path} -> {}", real.display());
            prop_assert!(real_location(&real).starts_with(fx.root()), "{path} -> {}", real.display());
        }
    }
}

#[test]
fn tethers_state_is_out_of_reach_and_git_is_read_only() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".tether/runs")).unwrap();
    std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
    std::fs::write(dir.path().join(".git/config"), "[core]\n").unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    for path in [".tether/tether.db", ".tether", "src/../.tether/runs"] {
        let err = ws.resolve(path).unwrap_err().to_string();
        assert!(err.contains("tether's own state"), "{path}: {err}");
    }
    assert!(ws.resolve(".git/config").is_ok());
    for path in [".git/hooks/pre-commit", ".git/config", ".git"] {
        let err = ws.resolve_writable(path).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "`{path}` is in the repository's .git, which the agent's tools may read but never change"
            )
        );
    }
    assert!(ws.resolve_writable("src/.gitignore").is_ok());
    assert!(ws.resolve_writable(".gitignore").is_ok());
}
