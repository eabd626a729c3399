//! `grep` and `ls`: output format, sorting, the skipped directories (and asking for them
//! explicitly), binary files, globs, and caps.

use serde_json::json;
use tether_tools::ToolOptions;

use super::Fixture;

/// A small repository: sources, docs, a binary, and every directory that is skipped.
fn repo(options: &ToolOptions) -> Fixture {
    let fx = Fixture::with_options(options);
    fx.file("src/lib.rs", "// TODO: one\nfn main() {}\n")
        .file("src/app/mod.rs", "fn todo() {}\r\n// todo: two\r\n")
        .file("docs/guide.md", "# Guide\nTODO: write it\n")
        .file("logo.png", b"\x89PNG\0TODO")
        .file(".git/config", "TODO in git\n")
        .file(".tether/tether.db", "TODO in tether\n")
        .file("target/debug/out.txt", "TODO in target\n")
        .file("web/node_modules/pkg/index.js", "// TODO in node_modules\n")
        .file("web/app.ts", "// TODO: web\n");
    fx
}

#[tokio::test]
async fn grep_lists_matches_as_path_line_text_and_skips_what_it_should() {
    let fx = repo(&ToolOptions::default());
    let out = fx.call("grep", json!({"pattern": "TODO"})).await;
    assert!(!out.output.is_error);
    assert_eq!(
        out.output.content,
        "docs/guide.md:2: TODO: write it\nsrc/lib.rs:1: // TODO: one\nweb/app.ts:1: // TODO: web\n"
    );
    assert_eq!(out.summary, "grep `TODO` (3 matches)");
}

#[tokio::test]
async fn grep_enters_a_skipped_directory_when_asked() {
    let fx = repo(&ToolOptions::default());
    assert_eq!(
        fx.ok("grep", json!({"pattern": "TODO", "path": "target"}))
            .await,
        "target/debug/out.txt:1: TODO in target\n"
    );
    assert_eq!(
        fx.ok("grep", json!({"pattern": "TODO", "path": ".git/config"}))
            .await,
        ".git/config:1: TODO in git\n"
    );
    let nested = fx
        .ok("grep", json!({"pattern": "TODO", "path": "web"}))
        .await;
    assert_eq!(nested, "web/app.ts:1: // TODO: web\n");
}

#[tokio::test]
async fn grep_options_case_glob_and_anchors() {
    let fx = repo(&ToolOptions::default());
    let ci = fx
        .ok(
            "grep",
            json!({"pattern": "todo", "case_insensitive": true, "path": "src"}),
        )
        .await;
    assert_eq!(
        ci,
        "src/lib.rs:1: // TODO: one\nsrc/app/mod.rs:1: fn todo() {}\nsrc/app/mod.rs:2: // todo: two\n"
    );
    let glob = fx
        .ok("grep", json!({"pattern": "TODO", "glob": "*.{md,ts}"}))
        .await;
    assert_eq!(
        glob,
        "docs/guide.md:2: TODO: write it\nweb/app.ts:1: // TODO: web\n"
    );
    let path_glob = fx
        .ok("grep", json!({"pattern": "fn", "glob": "src/**/*.rs"}))
        .await;
    assert_eq!(
        path_glob,
        "src/lib.rs:2: fn main() {}\nsrc/app/mod.rs:1: fn todo() {}\n"
    );
    let anchored = fx.ok("grep", json!({"pattern": "^fn .*\\{\\}$"})).await;
    assert_eq!(
        anchored,
        "src/lib.rs:2: fn main() {}\nsrc/app/mod.rs:1: fn todo() {}\n"
    );
}

#[tokio::test]
async fn grep_caps_results_with_a_note() {
    let fx = Fixture::new();
    let many: String = (1..=50).map(|i| format!("hit {i}\n")).collect();
    fx.file("many.txt", &many);
    let out = fx
        .call("grep", json!({"pattern": "hit", "max_results": 3}))
        .await;
    assert_eq!(
        out.output.content,
        "many.txt:1: hit 1\nmany.txt:2: hit 2\nmany.txt:3: hit 3\n[stopped at 3 matches; narrow \
         `pattern`, `path` or `glob`, or raise `max_results` (at most 1000)]\n"
    );
    assert_eq!(out.summary, "grep `hit` (3 matches, capped)");
    let lowered = fx
        .ok("grep", json!({"pattern": "hit 50", "max_results": 5000}))
        .await;
    assert_eq!(
        lowered,
        "many.txt:50: hit 50\n[max_results 5000 is above the limit of 1000; used 1000]\n"
    );
}

#[tokio::test]
async fn grep_skips_files_over_the_size_limit() {
    let fx = Fixture::with_options(&ToolOptions {
        grep_max_file_bytes: 10,
        ..ToolOptions::default()
    });
    fx.file("big.txt", "needle in a big file\n")
        .file("small.txt", "needle\n");
    let out = fx.ok("grep", json!({"pattern": "needle"})).await;
    assert_eq!(
        out,
        "small.txt:1: needle\n[1 file over 10 bytes not searched]\n"
    );
}

#[tokio::test]
async fn grep_errors_name_the_problem() {
    let fx = repo(&ToolOptions::default());
    let bad = fx.err("grep", json!({"pattern": "fn ("})).await;
    assert!(
        bad.starts_with("`pattern` is not a valid regular expression: "),
        "{bad}"
    );
    assert_eq!(
        fx.err("grep", json!({"pattern": "x", "path": "nope"}))
            .await,
        "`nope` does not exist"
    );
    let none = fx
        .ok("grep", json!({"pattern": "zzz", "glob": "*.rs"}))
        .await;
    assert_eq!(
        none,
        "no matches for `zzz` in `.` (files matching `*.rs`)\n"
    );
}

#[tokio::test]
async fn ls_lists_sorted_with_directories_marked() {
    let fx = repo(&ToolOptions::default());
    let out = fx.call("ls", json!({})).await;
    assert_eq!(
        out.output.content,
        ".git/ (not listed)\n.tether/ (not listed)\ndocs/\nlogo.png\nsrc/\ntarget/ (not listed)\nweb/\n"
    );
    assert_eq!(out.summary, "ls .");
    let deep = fx.ok("ls", json!({"path": "web", "depth": 3})).await;
    assert_eq!(deep, "web/app.ts\nweb/node_modules/ (not listed)\n");
    let explicit = fx
        .ok("ls", json!({"path": "web/node_modules", "depth": 2}))
        .await;
    assert_eq!(
        explicit,
        "web/node_modules/pkg/\nweb/node_modules/pkg/index.js\n"
    );
    let tree = fx.ok("ls", json!({"path": "src", "depth": 2})).await;
    assert_eq!(tree, "src/app/\nsrc/app/mod.rs\nsrc/lib.rs\n");
}

#[tokio::test]
async fn ls_caps_and_explains() {
    let fx = Fixture::with_options(&ToolOptions {
        ls_max_entries: 3,
        ls_max_depth: 2,
        ..ToolOptions::default()
    });
    for name in ["a", "b", "c", "d", "e"] {
        fx.file(name, "");
    }
    fx.file("dir/x", "");
    let out = fx.ok("ls", json!({"depth": 9})).await;
    assert_eq!(
        out,
        "a\nb\nc\n[stopped at 3 entries; list a subdirectory or use a smaller depth]\n[depth 9 is above the limit of 2; used 2]\n"
    );
}

#[tokio::test]
async fn ls_handles_files_empty_and_missing_paths() {
    let fx = Fixture::new();
    fx.file("a.txt", "a");
    std::fs::create_dir(fx.root.join("empty")).unwrap();
    assert_eq!(fx.ok("ls", json!({"path": "a.txt"})).await, "a.txt\n");
    assert_eq!(
        fx.ok("ls", json!({"path": "empty"})).await,
        "(`empty` is empty)\n"
    );
    assert_eq!(
        fx.err("ls", json!({"path": "nope"})).await,
        "`nope` does not exist"
    );
}

/// A tree deeper than any path can name is walked by descriptor to a bounded depth: no error,
/// no exhausted descriptors, the files near the top found.
#[tokio::test]
async fn grep_walks_a_very_deep_tree_to_a_bounded_depth() {
    let fx = Fixture::new();
    std::fs::write(fx.root.join("f.txt"), "needle\n").unwrap();
    // Made by descriptor, as a process in the workspace could, past PATH_MAX.
    let mut fd = std::fs::File::open(&fx.root).unwrap();
    for _ in 0..3000 {
        nix::sys::stat::mkdirat(&fd, "aaaaaaaa", nix::sys::stat::Mode::S_IRWXU).unwrap();
        let next = nix::fcntl::openat(
            &fd,
            "aaaaaaaa",
            nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY,
            nix::sys::stat::Mode::empty(),
        )
        .unwrap();
        let file = nix::fcntl::openat(
            &next,
            "f.txt",
            nix::fcntl::OFlag::O_WRONLY | nix::fcntl::OFlag::O_CREAT,
            nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
        )
        .unwrap();
        std::io::Write::write_all(&mut std::fs::File::from(file), b"needle\n").unwrap();
        fd = std::fs::File::from(next);
    }
    let found = fx
        .ok("grep", json!({"pattern": "needle", "max_results": 1000}))
        .await;
    let lines = found.lines().filter(|l| l.ends_with(": needle")).count();
    assert_eq!(lines, 129, "the root and 128 levels below it: {found}");
    assert!(
        found.starts_with("f.txt:1: needle\naaaaaaaa/f.txt:1: needle\n"),
        "{found}"
    );
}
