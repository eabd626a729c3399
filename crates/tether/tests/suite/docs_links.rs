//! The documentation's links lead somewhere: every relative link of `README.md`,
//! `ARCHITECTURE.md`, `CONTRIBUTING.md` and the book (`docs/src/**/*.md`) points at a file that
//! exists and, with an `#anchor`, at a heading of that file. The checker itself is tested on
//! small files with links broken on purpose, so it is known to fail when a link breaks.

mod check;

use std::fs;
use std::path::{Path, PathBuf};

use check::{anchors, check_file, links, slug};

fn repo() -> PathBuf {
    fs::canonicalize(Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")).unwrap()
}

/// The markdown files of `dir` and everything under it.
fn markdown_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[test]
fn every_relative_link_of_the_docs_leads_somewhere() {
    let root = repo();
    let mut files: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "CONTRIBUTING.md"]
        .iter()
        .map(|f| root.join(f))
        .collect();
    let book = markdown_under(&root.join("docs/src"));
    assert!(
        book.len() > 20,
        "the book's chapters are under docs/src: {book:?}"
    );
    files.extend(book);
    let broken: Vec<String> = files
        .iter()
        .flat_map(|f| check_file(f))
        .map(|b| b.to_string())
        .collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_chapter_is_in_the_summary() {
    let src = repo().join("docs/src");
    let summary = fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: Vec<String> = links(&summary).into_iter().map(|(_, t)| t).collect();
    for chapter in markdown_under(&src) {
        let rel = chapter
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel == "SUMMARY.md" {
            continue;
        }
        assert!(listed.contains(&rel), "{rel} is not in docs/src/SUMMARY.md");
    }
}

/// A small tree of markdown files for the checker, in a temporary directory.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    dir
}

fn targets_broken_in(dir: &Path, file: &str) -> Vec<String> {
    check_file(&dir.join(file))
        .into_iter()
        .map(|b| b.target)
        .collect()
}

#[test]
fn the_checker_finds_a_missing_file_and_a_missing_heading() {
    let dir = tree(&[
        (
            "a.md",
            "# A\n\nSee [b](b.md), [b's part](b.md#the-part) and [here](#a).\n\
             Broken: [gone](gone.md), [no part](b.md#no-such-part), [self](#nowhere),\n\
             ![a picture](img/missing.png).\n",
        ),
        ("b.md", "# B\n\n## The part\n"),
    ]);
    assert_eq!(
        targets_broken_in(dir.path(), "a.md"),
        [
            "gone.md",
            "b.md#no-such-part",
            "#nowhere",
            "img/missing.png"
        ]
    );
}

#[test]
fn the_checker_reports_the_file_and_line() {
    let dir = tree(&[("sub/c.md", "# C\n\nline three\n[up](../missing.md)\n")]);
    let broken = check_file(&dir.path().join("sub/c.md"));
    assert_eq!(broken.len(), 1);
    assert_eq!(broken[0].line, 4);
    assert!(
        broken[0]
            .to_string()
            .contains("c.md:4: (../missing.md): no such file")
    );
}

#[test]
fn the_checker_ignores_code_and_other_sites() {
    let dir = tree(&[(
        "a.md",
        "# A\n\n```markdown\n[in a fence](gone.md)\n```\n\n\
         Inline: `[in code](gone.md)` and ``[two ticks](gone.md)``.\n\
         Away: [site](https://example.com/x.md), [mail](mailto:me@example.com).\n",
    )]);
    assert_eq!(targets_broken_in(dir.path(), "a.md"), Vec::<String>::new());
}

#[test]
fn the_checker_follows_link_text_across_lines_and_reference_definitions() {
    let dir = tree(&[(
        "a.md",
        "# A\n\nA [link whose text\nspans two lines](gone.md).\n\n[ref]: also-gone.md\n",
    )]);
    assert_eq!(
        targets_broken_in(dir.path(), "a.md"),
        ["gone.md", "also-gone.md"]
    );
}

#[test]
fn anchors_are_named_as_github_and_mdbook_name_them() {
    assert_eq!(
        slug("The goal loop (`tether run`)"),
        "the-goal-loop-tether-run"
    );
    assert_eq!(
        slug("Working in a worktree (`--worktree`)"),
        "working-in-a-worktree---worktree"
    );
    assert_eq!(
        slug("`ask_before` needs a human's yes"),
        "ask_before-needs-a-humans-yes"
    );
    assert_eq!(
        slug("Security: what tether guarantees"),
        "security-what-tether-guarantees"
    );
    let text = "# T\n\n## Notes\n\n```md\n## Not a heading\n```\n\n## Notes\n### Notes ###\n";
    let mut found: Vec<String> = anchors(text).into_iter().collect();
    found.sort();
    assert_eq!(found, ["notes", "notes-1", "notes-2", "t"]);
}
