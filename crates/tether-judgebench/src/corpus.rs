//! The corpus that ships in the binary, and cases a user adds from a directory.

use std::path::Path;

use crate::case::{Case, CaseError, parse};

/// The built-in cases, in the order they run: honest completions first, then the gamed ones.
const BUILTIN: &[(&str, &str)] = &[
    (
        "honest-fix-add",
        include_str!("../cases/honest-fix-add.case"),
    ),
    (
        "honest-new-function",
        include_str!("../cases/honest-new-function.case"),
    ),
    (
        "honest-off-by-one",
        include_str!("../cases/honest-off-by-one.case"),
    ),
    (
        "honest-cli-output",
        include_str!("../cases/honest-cli-output.case"),
    ),
    (
        "honest-config-default",
        include_str!("../cases/honest-config-default.case"),
    ),
    ("honest-docs", include_str!("../cases/honest-docs.case")),
    ("honest-rename", include_str!("../cases/honest-rename.case")),
    (
        "honest-error-handling",
        include_str!("../cases/honest-error-handling.case"),
    ),
    (
        "honest-two-criteria",
        include_str!("../cases/honest-two-criteria.case"),
    ),
    (
        "honest-shell-script",
        include_str!("../cases/honest-shell-script.case"),
    ),
    (
        "honest-sorted-json",
        include_str!("../cases/honest-sorted-json.case"),
    ),
    (
        "honest-edge-case",
        include_str!("../cases/honest-edge-case.case"),
    ),
    (
        "tautological-verify",
        include_str!("../cases/tautological-verify.case"),
    ),
    ("assert-true", include_str!("../cases/assert-true.case")),
    ("skipped-test", include_str!("../cases/skipped-test.case")),
    ("deleted-tests", include_str!("../cases/deleted-tests.case")),
    (
        "hardcoded-output",
        include_str!("../cases/hardcoded-output.case"),
    ),
    (
        "mocked-function",
        include_str!("../cases/mocked-function.case"),
    ),
    (
        "test-matches-bug",
        include_str!("../cases/test-matches-bug.case"),
    ),
    (
        "invented-lines",
        include_str!("../cases/invented-lines.case"),
    ),
    ("partly-done", include_str!("../cases/partly-done.case")),
    ("other-target", include_str!("../cases/other-target.case")),
    (
        "swallowed-exception",
        include_str!("../cases/swallowed-exception.case"),
    ),
    (
        "commented-assertion",
        include_str!("../cases/commented-assertion.case"),
    ),
    (
        "print-not-assert",
        include_str!("../cases/print-not-assert.case"),
    ),
    ("docs-only", include_str!("../cases/docs-only.case")),
];

/// The built-in corpus.
pub fn builtin() -> Result<Vec<Case>, CaseError> {
    BUILTIN
        .iter()
        .map(|(name, text)| parse(&format!("{name}.case"), text))
        .collect()
}

/// The largest case file read.
const MAX_CASE_BYTES: u64 = 1024 * 1024;

/// The cases in `dir`: every regular `*.case` file, in name order.
pub fn from_dir(dir: &Path) -> Result<Vec<Case>, CaseError> {
    let fail = |message: String| CaseError {
        source_name: dir.display().to_string(),
        line: 0,
        message,
    };
    let entries = std::fs::read_dir(dir).map_err(|e| fail(format!("cannot read it: {e}")))?;
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "case"))
        .collect();
    paths.sort();
    let mut cases = Vec::new();
    for path in paths {
        let shown = path.display().to_string();
        let meta = std::fs::symlink_metadata(&path).map_err(|e| fail(format!("{shown}: {e}")))?;
        if !meta.is_file() {
            return Err(fail(format!("{shown} is not a regular file")));
        }
        if meta.len() > MAX_CASE_BYTES {
            return Err(fail(format!(
                "{shown} is larger than {MAX_CASE_BYTES} bytes"
            )));
        }
        let text = std::fs::read_to_string(&path).map_err(|e| fail(format!("{shown}: {e}")))?;
        cases.push(parse(&shown, &text)?);
    }
    if cases.is_empty() {
        return Err(fail("it holds no *.case file".to_owned()));
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Expect;

    #[test]
    fn the_builtin_corpus_reads_and_is_balanced() {
        let cases = builtin().unwrap();
        assert!(cases.len() >= 24, "{}", cases.len());
        let honest = cases.iter().filter(|c| c.expect == Expect::Accept).count();
        assert!(honest >= 10 && cases.len() - honest >= 12, "{honest}");
        let mut names: Vec<_> = cases.iter().map(|c| c.name.as_str()).collect();
        for (case, (file, _)) in cases.iter().zip(BUILTIN) {
            assert_eq!(case.name, *file, "a case's name is its file's");
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), cases.len(), "names are unique");
    }
}
