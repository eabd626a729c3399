//! The verification surface a run changed: of the files the run changed, those the goal's check
//! relies on — the files its verify command names (and the build file of the tool it runs:
//! `make` its `Makefile`, `npm` its `package.json`, `cargo` its `Cargo.toml`, …), and tests and
//! test configuration. Writing tests is often the work itself, so a change there is not wrong in
//! itself; the judge is told which changed files they are, to decide whether a change weakened
//! a check, and so is the agent.

use std::path::Path;

use crate::changed::ChangedLines;

/// The build or test configuration a verify command's tool reads, by the tool's name.
const TOOL_FILES: &[(&str, &[&str])] = &[
    ("make", &["Makefile", "makefile", "GNUmakefile"]),
    ("npm", &["package.json"]),
    ("npx", &["package.json"]),
    ("yarn", &["package.json"]),
    ("pnpm", &["package.json"]),
    ("cargo", &["Cargo.toml", ".cargo/config.toml"]),
    ("go", &["go.mod"]),
    (
        "pytest",
        &[
            "pytest.ini",
            "pyproject.toml",
            "setup.cfg",
            "tox.ini",
            "conftest.py",
        ],
    ),
    ("tox", &["tox.ini"]),
    ("just", &["justfile", "Justfile"]),
];

/// Files of test configuration, whatever runs them.
const TEST_CONFIG: &[&str] = &[
    "conftest.py",
    "pytest.ini",
    "jest.config.js",
    "jest.config.ts",
    "vitest.config.ts",
    "vitest.config.js",
    "karma.conf.js",
    ".mocharc.json",
    ".mocharc.yml",
    "phpunit.xml",
    "phpunit.xml.dist",
];

/// The files of the verification surface among those `changed` names, for the verify command
/// `verify` (if any), in the order `changed` lists them.
pub fn of(verify: Option<&str>, changed: &ChangedLines) -> Vec<String> {
    let words: Vec<&str> = verify
        .map(|v| {
            v.split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')'))
                .filter(|w| !w.is_empty())
                .collect()
        })
        .unwrap_or_default();
    changed
        .files()
        .map(|(path, _)| path)
        .filter(|path| named(path, &words) || tested(path))
        .map(|path| path.display().to_string())
        .collect()
}

/// Whether the verify command's `words` name `path`, or the tool they run reads it.
fn named(path: &Path, words: &[&str]) -> bool {
    let shown = path.to_string_lossy();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    words.iter().any(|word| {
        let word = word.trim_matches(|c| c == '"' || c == '\'');
        let word = word.strip_prefix("./").unwrap_or(word);
        word == shown
            || TOOL_FILES.iter().any(|(tool, files)| {
                word == *tool && files.iter().any(|f| *f == shown || *f == name)
            })
    })
}

/// Whether `path` is a test or test configuration by its name.
fn tested(path: &Path) -> bool {
    let in_tests = path.parent().is_some_and(|dir| {
        dir.components().any(|c| {
            matches!(
                c.as_os_str().to_str(),
                Some("test" | "tests" | "spec" | "specs" | "__tests__" | "testdata")
            )
        })
    });
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let stem = name.split('.').next().unwrap_or_default();
    in_tests
        || TEST_CONFIG.contains(&name)
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_spec")
        || name.contains(".test.")
        || name.contains(".spec.")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::of;
    use crate::changed::{ChangedLines, FileLines};

    fn changed(paths: &[&str]) -> ChangedLines {
        ChangedLines::known(
            paths
                .iter()
                .map(|p| (PathBuf::from(p), FileLines::Whole))
                .collect::<BTreeMap<_, _>>(),
        )
    }

    #[test]
    fn the_files_verify_names_and_tests_are_the_surface_and_the_code_is_not() {
        let run = changed(&[
            "Makefile",
            "check.sh",
            "src/lib.rs",
            "src/parser_test.go",
            "tests/cli.rs",
            "web/app.test.ts",
            "test_api.py",
            "conftest.py",
            "README.md",
        ]);
        assert_eq!(
            of(Some("make check && sh ./check.sh"), &run),
            [
                "Makefile",
                "check.sh",
                "conftest.py",
                "src/parser_test.go",
                "test_api.py",
                "tests/cli.rs",
                "web/app.test.ts"
            ]
        );
        // Without a verify command, tests still are; the code never is.
        assert_eq!(
            of(
                None,
                &changed(&["src/lib.rs", "src/contest.rs", "tests/a.rs"])
            ),
            ["tests/a.rs"]
        );
        assert!(of(Some("cargo test"), &changed(&["src/main.rs"])).is_empty());
        assert_eq!(
            of(Some("cargo test"), &changed(&["Cargo.toml"])),
            ["Cargo.toml"]
        );
    }
}
