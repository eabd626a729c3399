//! `read`, `write` and `edit`: round trips, windows and caps, and every error a model can hit.

use serde_json::json;
use tether_tools::ToolOptions;

use super::Fixture;

#[tokio::test]
async fn write_read_edit_round_trip() {
    let fx = Fixture::new();
    let wrote = fx
        .ok(
            "write",
            json!({"path": "src/deep/er/lib.rs", "content": "fn a() {}\nfn b() {}\n"}),
        )
        .await;
    assert_eq!(wrote, "wrote 20 bytes to `src/deep/er/lib.rs` (new file)");
    assert_eq!(
        fx.ok("read", json!({"path": "src/deep/er/lib.rs"})).await,
        "     1\tfn a() {}\n     2\tfn b() {}\n"
    );

    let edited = fx
        .ok("edit", json!({"path": "src/deep/er/lib.rs", "old_text": "fn b() {}", "new_text": "fn b() {\n    a();\n}"}))
        .await;
    assert_eq!(
        edited,
        "edited `src/deep/er/lib.rs`: replaced 1 line at line 2 with 3 lines\n     1\tfn a() {}\n     2\tfn b() {\n     3\t    a();\n     4\t}\n"
    );
    assert_eq!(
        fx.read("src/deep/er/lib.rs"),
        "fn a() {}\nfn b() {\n    a();\n}\n"
    );

    let again = fx
        .ok(
            "write",
            json!({"path": "src/deep/er/lib.rs", "content": "x"}),
        )
        .await;
    assert_eq!(
        again,
        "wrote 1 byte to `src/deep/er/lib.rs` (replaced 30 bytes)"
    );
    assert_eq!(fx.read("src/deep/er/lib.rs"), "x");
}

#[tokio::test]
async fn absolute_paths_inside_are_shown_relative() {
    let fx = Fixture::new();
    let abs = fx.root.join("a.txt").display().to_string();
    let wrote = fx.ok("write", json!({"path": abs, "content": "hi"})).await;
    assert_eq!(wrote, "wrote 2 bytes to `a.txt` (new file)");
}

#[tokio::test]
async fn write_refuses_a_directory_and_a_file_used_as_a_directory() {
    let fx = Fixture::new();
    fx.file("src/lib.rs", "x");
    let msg = fx
        .err("write", json!({"path": "src", "content": "x"}))
        .await;
    assert_eq!(msg, "`src` is a directory; give a file path to write");
    let msg = fx
        .err(
            "write",
            json!({"path": "src/lib.rs/inner.rs", "content": "x"}),
        )
        .await;
    assert!(
        msg.starts_with("cannot create the directory for `src/lib.rs/inner.rs`"),
        "{msg}"
    );
}

#[tokio::test]
async fn edit_reports_missing_text() {
    let fx = Fixture::new();
    fx.file("a.rs", "let x = 1;\n");
    let msg = fx
        .err(
            "edit",
            json!({"path": "a.rs", "old_text": "let y", "new_text": "let z"}),
        )
        .await;
    assert!(
        msg.starts_with("`old_text` was not found in `a.rs`. It must match the file exactly"),
        "{msg}"
    );
    assert_eq!(fx.read("a.rs"), "let x = 1;\n");

    let msg = fx
        .err(
            "edit",
            json!({"path": "a.rs", "old_text": "  let x", "new_text": "y"}),
        )
        .await;
    assert!(
        msg.ends_with("Note: it does occur without its leading/trailing whitespace."),
        "{msg}"
    );

    fx.file("crlf.txt", "one\r\ntwo\r\n");
    let msg = fx
        .err(
            "edit",
            json!({"path": "crlf.txt", "old_text": "one\ntwo", "new_text": "x"}),
        )
        .await;
    assert!(
        msg.ends_with("Note: the file uses CRLF (\\r\\n) line endings."),
        "{msg}"
    );
}

#[tokio::test]
async fn edit_refuses_ambiguous_text_and_says_how_often_and_where() {
    let fx = Fixture::new();
    fx.file("a.rs", "x = 1\ny = 2\nx = 1\n\nx = 1\n");
    let msg = fx
        .err(
            "edit",
            json!({"path": "a.rs", "old_text": "x = 1", "new_text": "x = 3"}),
        )
        .await;
    assert_eq!(
        msg,
        "`old_text` occurs 3 times in `a.rs` (at lines 1, 3, 5); add surrounding lines so it \
         matches only once, or set `replace_all` to true to replace every occurrence"
    );
    assert_eq!(fx.read("a.rs"), "x = 1\ny = 2\nx = 1\n\nx = 1\n");

    let done = fx
        .ok(
            "edit",
            json!({"path": "a.rs", "old_text": "x = 1", "new_text": "x = 3", "replace_all": true}),
        )
        .await;
    assert_eq!(
        done,
        "edited `a.rs`: replaced 3 occurrences (at lines 1, 3, 5)\n"
    );
    assert_eq!(fx.read("a.rs"), "x = 3\ny = 2\nx = 3\n\nx = 3\n");
}

#[tokio::test]
async fn edit_refuses_nonsense() {
    let fx = Fixture::new();
    fx.file("a.rs", "abc");
    fx.file("bin.dat", b"ab\0cd");
    let empty = fx
        .err(
            "edit",
            json!({"path": "a.rs", "old_text": "", "new_text": "x"}),
        )
        .await;
    assert!(empty.starts_with("`old_text` is empty"), "{empty}");
    let same = fx
        .err(
            "edit",
            json!({"path": "a.rs", "old_text": "a", "new_text": "a"}),
        )
        .await;
    assert_eq!(
        same,
        "`old_text` and `new_text` are the same; nothing would change"
    );
    let missing = fx
        .err(
            "edit",
            json!({"path": "nope.rs", "old_text": "a", "new_text": "b"}),
        )
        .await;
    assert_eq!(missing, "`nope.rs` does not exist");
    let binary = fx
        .err(
            "edit",
            json!({"path": "bin.dat", "old_text": "ab", "new_text": "x"}),
        )
        .await;
    assert!(binary.contains("looks like a binary file"), "{binary}");
    assert_eq!(fx.read("a.rs"), "abc");
}

#[tokio::test]
async fn read_shows_a_window_and_says_what_comes_next() {
    let fx = Fixture::new();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    fx.file("ten.txt", &text);
    let out = fx
        .ok("read", json!({"path": "ten.txt", "offset": 4, "limit": 2}))
        .await;
    assert_eq!(
        out,
        "     4\tline 4\n     5\tline 5\n[lines 4-5 of 10 shown; read more with offset=6]\n"
    );
    let tail = fx.ok("read", json!({"path": "ten.txt", "offset": 9})).await;
    assert_eq!(tail, "     9\tline 9\n    10\tline 10\n");
    let past = fx
        .err("read", json!({"path": "ten.txt", "offset": 11}))
        .await;
    assert_eq!(
        past,
        "`offset` 11 is past the end of `ten.txt`, which has 10 lines"
    );
}

#[tokio::test]
async fn read_caps_bytes_and_long_lines() {
    let fx = Fixture::with_options(&ToolOptions {
        read_max_bytes: 40,
        ..ToolOptions::default()
    });
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    fx.file("ten.txt", &text);
    let out = fx.ok("read", json!({"path": "ten.txt"})).await;
    assert_eq!(
        out,
        "     1\tline 1\n     2\tline 2\n[output cut at 40 bytes: lines 1-2 of 10 shown; read more with offset=3]\n"
    );
    fx.file("long.txt", "x".repeat(2500));
    let long = fx.ok("read", json!({"path": "long.txt"})).await;
    assert!(long.ends_with("x… [500 more characters]\n"), "{long}");
}

#[tokio::test]
async fn read_refuses_binaries_directories_and_missing_files() {
    let fx = Fixture::new();
    fx.file("img.png", b"\x89PNG\r\n\x1a\n\0\0\0");
    fx.file("dir/a.txt", "a");
    fx.file("empty.txt", "");
    let binary = fx.err("read", json!({"path": "img.png"})).await;
    assert_eq!(
        binary,
        "`img.png` looks like a binary file (it has NUL bytes); `read` shows text files only"
    );
    assert_eq!(
        fx.err("read", json!({"path": "dir"})).await,
        "`dir` is a directory; use `ls` to list it"
    );
    assert_eq!(
        fx.err("read", json!({"path": "nope.txt"})).await,
        "`nope.txt` does not exist"
    );
    assert_eq!(
        fx.ok("read", json!({"path": "empty.txt"})).await,
        "(`empty.txt` is empty)"
    );
}

#[tokio::test]
async fn read_handles_crlf_and_invalid_utf8() {
    let fx = Fixture::new();
    fx.file("mixed.txt", b"a\r\nb\xffc\nlast");
    assert_eq!(
        fx.ok("read", json!({"path": "mixed.txt"})).await,
        "     1\ta\n     2\tb\u{FFFD}c\n     3\tlast\n"
    );
}
