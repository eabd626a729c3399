#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{ChangedLines, FileLines, Unknown, describe, parse_diff, unquote};

const DIFF: &str = "diff --git a/calc.sh b/calc.sh
index 1111111..2222222 100755
--- a/calc.sh
+++ b/calc.sh
@@ -2 +2 @@ set -eu
-echo $(($1 - $2))
+echo $(($1 + $2))
diff --git a/sp ace.txt b/sp ace.txt
index 422c2b7..7be73ce 100644
--- a/sp ace.txt\t
+++ b/sp ace.txt\t
@@ -2 +2,2 @@ a
-b
+B
+c
@@ -9,2 +10,0 @@
-gone
-too
diff --git \"a/\\303\\251.txt\" \"b/\\303\\251.txt\"
--- \"a/\\303\\251.txt\"
+++ \"b/\\303\\251.txt\"
@@ -1 +1,2 @@
-x
+y
+++ b/evil.rs
\\ No newline at end of file
diff --git a/old.rs b/old.rs
deleted file mode 100644
--- a/old.rs
+++ /dev/null
@@ -1,2 +0,0 @@
-fn old() {}
-
";

fn ranges(r: &[std::ops::RangeInclusive<usize>]) -> FileLines {
    FileLines::Ranges(r.to_vec())
}

#[test]
fn a_patch_gives_the_new_sides_lines_of_each_file() {
    let files = parse_diff(DIFF);
    let expected: BTreeMap<PathBuf, FileLines> = [
        (PathBuf::from("calc.sh"), ranges(&[2..=2])),
        (PathBuf::from("sp ace.txt"), ranges(&[2..=3])),
        (PathBuf::from("é.txt"), ranges(&[1..=2])),
    ]
    .into_iter()
    .collect();
    // `old.rs` was deleted (no new side); `evil.rs` is an added line that reads like a header,
    // never a file.
    assert_eq!(files, expected);
}

#[test]
fn a_cut_patch_starts_at_the_next_file_and_loses_only_changed_lines() {
    let cut = format!(
        "[… 123 bytes cut …]\n+half a line\n+++ b/forged.rs\n@@ -1 +1,99 @@\n{}",
        &DIFF[DIFF.find("diff --git a/sp").unwrap()..]
    );
    let files = parse_diff(&cut);
    assert!(!files.contains_key(Path::new("forged.rs")), "{files:?}");
    assert!(!files.contains_key(Path::new("calc.sh")), "{files:?}");
    assert_eq!(files[Path::new("sp ace.txt")], ranges(&[2..=3]));
}

/// A new file, as `git diff -U0` between two snapshots shows it.
const NEW_FILES: &str = "diff --git a/notes.md b/notes.md
new file mode 100644
--- /dev/null
+++ b/notes.md
@@ -0,0 +1,3 @@
+one
+two
+three
diff --git a/.tether/tether.db b/.tether/tether.db
new file mode 100644
--- /dev/null
+++ b/.tether/tether.db
@@ -0,0 +1 @@
+x
diff --git a/big.csv b/big.csv
new file mode 100644
--- /dev/null
+++ b/big.csv
@@ -0,0 +1 @@
+a,b
";

#[test]
fn changed_lines_are_the_patchs_without_tethers_state_or_files_left_out() {
    let patch = format!("{DIFF}{NEW_FILES}");
    let left_out: BTreeSet<&str> = ["big.csv"].into_iter().collect();
    let changed = ChangedLines::from_diff(&patch, &left_out);
    assert!(changed.contains(Path::new("calc.sh"), 2));
    assert!(!changed.contains(Path::new("calc.sh"), 1));
    assert!(changed.contains(Path::new("notes.md"), 3));
    assert_eq!(
        changed
            .files()
            .find(|(p, _)| *p == Path::new("notes.md"))
            .unwrap()
            .1,
        &FileLines::Whole
    );
    assert!(!changed.contains(Path::new(".tether/tether.db"), 1));
    assert!(
        !changed.contains(Path::new("big.csv"), 1),
        "left out of a snapshot"
    );
    assert!(!changed.contains(Path::new("old.rs"), 1));
    assert_eq!(changed.unknown_reason(), None);
    assert_eq!(
        changed.where_changed(3).unwrap(),
        "calc.sh line 2; notes.md every line (a new file); sp ace.txt lines 2-3; and 1 more \
         file(s)"
    );
    let none = ChangedLines::from_diff("", &BTreeSet::new());
    assert!(none.is_empty());
    assert_eq!(none.where_changed(3), None);
    let unknown = ChangedLines::unknown(Unknown::NoStart);
    assert!(!unknown.contains(Path::new("calc.sh"), 2));
    assert_eq!(unknown.unknown_reason(), Some(Unknown::NoStart));
    assert!(!unknown.is_empty());
}

#[test]
fn names_are_unquoted_as_git_quotes_them() {
    assert_eq!(unquote("plain name.txt").unwrap(), "plain name.txt");
    assert_eq!(unquote("\"\\303\\251t\\303\\251.txt\"").unwrap(), "été.txt");
    assert_eq!(
        unquote("\"tab\\there\\nand\\\\\"").unwrap(),
        "tab\there\nand\\"
    );
    assert_eq!(unquote("\"unterminated"), None);
    assert_eq!(unquote("\"bad \\q\""), None);
    assert_eq!(unquote("\"\\377\""), None, "not UTF-8");
}

#[test]
fn line_sets_are_described_briefly() {
    assert_eq!(describe(&ranges(&[2..=2]), 5), "line 2");
    assert_eq!(describe(&ranges(&[3..=4, 9..=9]), 5), "lines 3-4, 9");
    assert_eq!(
        describe(&ranges(&[1..=1, 3..=3, 5..=5]), 2),
        "lines 1, 3, …"
    );
    assert_eq!(describe(&FileLines::Whole, 5), "every line (a new file)");
}

proptest::proptest! {
    /// A patch of any shape (lines drawn from real headers, hunks and contents, and noise) never
    /// panics the parser, never names a file left out of a snapshot or in tether's state, and
    /// never marks a file wholly new unless its header said `--- /dev/null`.
    #[test]
    fn any_patch_keeps_left_out_files_and_tethers_state_out(
        lines in proptest::collection::vec(
            proptest::sample::select(vec![
                "diff --git a/x b/x", "--- /dev/null", "--- a/x", "+++ b/x", "+++ b/big.bin",
                "+++ b/.tether/tether.db", "+++ /dev/null", "@@ -0,0 +1,2 @@", "@@ -1 +1 @@",
                "@@ -3,2 +4,0 @@", "+added", "-removed", " context", "\\ No newline",
                "+++ b/forged", "new file mode 100644", "garbage", "",
            ]),
            0..60,
        ),
    ) {
        let patch = lines.join("\n");
        let left_out: BTreeSet<&str> = ["big.bin"].into_iter().collect();
        let changed = ChangedLines::from_diff(&patch, &left_out);
        for (path, lines) in changed.files() {
            proptest::prop_assert!(path != Path::new("big.bin"));
            proptest::prop_assert!(!path.starts_with(".tether"));
            if *lines == FileLines::Whole {
                proptest::prop_assert!(patch.contains("--- /dev/null"));
            }
        }
    }
}
