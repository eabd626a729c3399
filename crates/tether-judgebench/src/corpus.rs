//! The corpus that ships in the binary, and cases a user adds from a directory.

use std::path::Path;

use crate::case::{Case, CaseError, parse};

/// The built-in cases, in the order they run: honest completions first (the honest short fixes
/// last of them), then the gamed ones (the judges accepting on trivial quotes last).
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
        "short-c-include",
        include_str!("../cases/short-c-include.case"),
    ),
    ("short-calc-sh", include_str!("../cases/short-calc-sh.case")),
    ("short-counter", include_str!("../cases/short-counter.case")),
    ("short-css-gap", include_str!("../cases/short-css-gap.case")),
    (
        "short-dockerfile-user",
        include_str!("../cases/short-dockerfile-user.case"),
    ),
    ("short-go-abs", include_str!("../cases/short-go-abs.case")),
    ("short-ini-ttl", include_str!("../cases/short-ini-ttl.case")),
    (
        "short-js-empty",
        include_str!("../cases/short-js-empty.case"),
    ),
    (
        "short-makefile-cc",
        include_str!("../cases/short-makefile-cc.case"),
    ),
    (
        "short-new-nvmrc",
        include_str!("../cases/short-new-nvmrc.case"),
    ),
    ("short-nvmrc", include_str!("../cases/short-nvmrc.case")),
    (
        "short-port-json",
        include_str!("../cases/short-port-json.case"),
    ),
    (
        "short-python-import",
        include_str!("../cases/short-python-import.case"),
    ),
    (
        "short-python-negate",
        include_str!("../cases/short-python-negate.case"),
    ),
    (
        "short-python-version",
        include_str!("../cases/short-python-version.case"),
    ),
    (
        "short-ruby-version",
        include_str!("../cases/short-ruby-version.case"),
    ),
    (
        "short-rust-body",
        include_str!("../cases/short-rust-body.case"),
    ),
    ("short-rust-ok", include_str!("../cases/short-rust-ok.case")),
    (
        "short-shell-set-e",
        include_str!("../cases/short-shell-set-e.case"),
    ),
    (
        "short-toml-jobs",
        include_str!("../cases/short-toml-jobs.case"),
    ),
    (
        "short-yaml-matrix",
        include_str!("../cases/short-yaml-matrix.case"),
    ),
    (
        "short-yaml-replicas",
        include_str!("../cases/short-yaml-replicas.case"),
    ),
    ("met-calc-sh", include_str!("../cases/met-calc-sh.case")),
    ("met-css-gap", include_str!("../cases/met-css-gap.case")),
    (
        "met-dockerfile-user",
        include_str!("../cases/met-dockerfile-user.case"),
    ),
    ("met-go-abs", include_str!("../cases/met-go-abs.case")),
    ("met-json-port", include_str!("../cases/met-json-port.case")),
    (
        "met-python-subtract",
        include_str!("../cases/met-python-subtract.case"),
    ),
    ("met-toml-jobs", include_str!("../cases/met-toml-jobs.case")),
    (
        "met-toml-timeout",
        include_str!("../cases/met-toml-timeout.case"),
    ),
    (
        "met-tool-versions",
        include_str!("../cases/met-tool-versions.case"),
    ),
    (
        "met-yaml-replicas",
        include_str!("../cases/met-yaml-replicas.case"),
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
    ("trivial-brace", include_str!("../cases/trivial-brace.case")),
    (
        "trivial-c-include",
        include_str!("../cases/trivial-c-include.case"),
    ),
    (
        "trivial-changed-brace",
        include_str!("../cases/trivial-changed-brace.case"),
    ),
    (
        "trivial-common-line",
        include_str!("../cases/trivial-common-line.case"),
    ),
    (
        "trivial-copyright",
        include_str!("../cases/trivial-copyright.case"),
    ),
    ("trivial-done", include_str!("../cases/trivial-done.case")),
    ("trivial-end", include_str!("../cases/trivial-end.case")),
    ("trivial-esac", include_str!("../cases/trivial-esac.case")),
    ("trivial-fi", include_str!("../cases/trivial-fi.case")),
    (
        "trivial-import-os",
        include_str!("../cases/trivial-import-os.case"),
    ),
    (
        "trivial-json-key",
        include_str!("../cases/trivial-json-key.case"),
    ),
    (
        "trivial-license-file",
        include_str!("../cases/trivial-license-file.case"),
    ),
    (
        "trivial-lone-return",
        include_str!("../cases/trivial-lone-return.case"),
    ),
    (
        "trivial-md-heading",
        include_str!("../cases/trivial-md-heading.case"),
    ),
    (
        "trivial-no-git",
        include_str!("../cases/trivial-no-git.case"),
    ),
    (
        "trivial-return-zero",
        include_str!("../cases/trivial-return-zero.case"),
    ),
    (
        "trivial-rust-use",
        include_str!("../cases/trivial-rust-use.case"),
    ),
    (
        "trivial-shebang",
        include_str!("../cases/trivial-shebang.case"),
    ),
    ("trivial-spdx", include_str!("../cases/trivial-spdx.case")),
    (
        "trivial-stub-raise",
        include_str!("../cases/trivial-stub-raise.case"),
    ),
    (
        "trivial-super-init",
        include_str!("../cases/trivial-super-init.case"),
    ),
    (
        "trivial-toml-section",
        include_str!("../cases/trivial-toml-section.case"),
    ),
    (
        "trivial-yaml-dashes",
        include_str!("../cases/trivial-yaml-dashes.case"),
    ),
    (
        "trivial-yaml-key",
        include_str!("../cases/trivial-yaml-key.case"),
    ),
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
        assert!(cases.len() >= 60, "{}", cases.len());
        let honest = cases.iter().filter(|c| c.expect == Expect::Accept).count();
        assert!(honest >= 30 && cases.len() - honest >= 28, "{honest}");
        let mut names: Vec<_> = cases.iter().map(|c| c.name.as_str()).collect();
        for (case, (file, _)) in cases.iter().zip(BUILTIN) {
            assert_eq!(case.name, *file, "a case's name is its file's");
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), cases.len(), "names are unique");
    }

    /// The quote check alone over every case that scripts an accepting judge's quotes: the
    /// quotes of each honest case count, and those of each case that is not done do not.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_quote_check_alone_makes_no_mistake_on_the_corpus() {
        let options = crate::RunOptions {
            verify_timeout: std::time::Duration::from_secs(60),
            env_remove: Vec::new(),
        };
        let cancel = tokio_util::sync::CancellationToken::new();
        let (mut honest, mut trivial) = (0, 0);
        let mut false_rejects = Vec::new();
        let mut false_accepts = Vec::new();
        for case in builtin().unwrap() {
            let Some(check) = crate::check_scripted_quotes(&case, &options, &cancel)
                .await
                .unwrap()
            else {
                continue;
            };
            match case.expect {
                Expect::Accept => {
                    honest += 1;
                    if !check.held {
                        false_rejects.push(format!("{}: {:?}", case.name, check.problems));
                    }
                }
                Expect::Reject => {
                    trivial += 1;
                    if check.held {
                        false_accepts.push(case.name.clone());
                    }
                }
            }
            assert_eq!(check.correct, check.held == (case.expect == Expect::Accept));
        }
        assert!(
            honest >= 20 && trivial >= 10,
            "{honest} honest, {trivial} trivial"
        );
        assert_eq!(false_rejects, Vec::<String>::new(), "honest quotes refused");
        assert_eq!(
            false_accepts,
            Vec::<String>::new(),
            "trivial quotes that counted"
        );
    }
}
