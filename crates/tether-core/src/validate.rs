//! `tether validate`: every problem in `tether.toml` and `plan.md`, in one list.
//!
//! Configuration and plan problems are gathered into one shape (file, line, severity, message)
//! so a human sees them all at once and a program can read them as JSON.

use std::path::PathBuf;

use serde::Serialize;
use tether_config::{ConfigError, Env};
use tether_plan::Severity;

use tether_config::Workspace;
use tether_plan::file::{self as plan_file, PlanFileError};

/// One problem, in either file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The file, relative to the workspace root when inside it.
    pub file: PathBuf,
    /// The 1-based line, when the problem has one.
    pub line: Option<usize>,
    /// Error or warning.
    pub severity: Severity,
    /// The config key path (`loop.max_iterations`), for config problems.
    pub key: Option<String>,
    /// A stable code: `config`, `unreadable`, or the plan problem's (`duplicate_id`, …).
    pub code: String,
    /// What is wrong and what was expected.
    pub message: String,
}

/// Everything `validate` found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// The config file read or found invalid, if any (absent = defaults).
    pub config_file: Option<PathBuf>,
    /// The plan file read.
    pub plan_file: PathBuf,
    /// How many goals the plan has (0 when it could not be read).
    pub goals: usize,
    /// Every problem, config first, then plan, each in line order.
    pub findings: Vec<Finding>,
}

impl Report {
    /// Whether anything at all was found.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }

    /// How many findings are errors.
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }
}

/// Checks the workspace's config (against `schema`) and plan.
pub fn validate(ws: &Workspace, schema: &tether_config::Schema, env: &dyn Env) -> Report {
    let rel = |p: &std::path::Path| PathBuf::from(ws.display(p).as_ref());
    let mut report = Report::default();
    let config = match tether_config::load(schema, ws.root(), env) {
        Ok(loaded) => {
            report.config_file = loaded.source.as_deref().map(rel);
            report
                .findings
                .extend(loaded.warnings.iter().map(|p| Finding {
                    file: rel(&p.file),
                    line: p.line,
                    severity: Severity::Warning,
                    key: Some(p.key.clone()).filter(|k| !k.is_empty()),
                    code: "config".to_owned(),
                    message: p.message.clone(),
                }));
            Some(loaded.config)
        }
        Err(e) => {
            report.findings.extend(config_findings(&e, &rel));
            report.config_file = report.findings.first().map(|f| f.file.clone());
            None
        }
    };
    let plan_path = config
        .as_ref()
        .map_or_else(|| ws.root().join("plan.md"), |c| c.plan_path(ws.root()));
    report.plan_file = rel(&plan_path);
    match plan_file::read(&plan_path) {
        Ok(doc) => {
            report.goals = doc.plan().goals.len();
            report
                .findings
                .extend(doc.plan().problems.iter().map(|p| Finding {
                    file: rel(&plan_path),
                    line: Some(p.line),
                    severity: p.severity,
                    key: None,
                    code: p.kind.code().to_owned(),
                    message: p.message.clone(),
                }));
        }
        Err(e) => {
            let line = match &e {
                PlanFileError::NotUtf8 { line, .. } => Some(*line),
                _ => None,
            };
            // The finding names the file already: its message need not repeat the path.
            let message = e.to_string();
            let prefix = format!("{}: ", plan_path.display());
            report.findings.push(Finding {
                file: rel(&plan_path),
                line,
                severity: Severity::Error,
                key: None,
                code: "unreadable".to_owned(),
                message: message
                    .strip_prefix(&prefix)
                    .map_or_else(|| message.clone(), str::to_owned),
            });
        }
    }
    report
}

fn config_findings(e: &ConfigError, rel: &dyn Fn(&std::path::Path) -> PathBuf) -> Vec<Finding> {
    if e.problems().is_empty() {
        let file = match e {
            ConfigError::Io { path, .. } | ConfigError::NotFound { path } => rel(path),
            _ => PathBuf::from(tether_config::FILE_NAME),
        };
        return vec![Finding {
            file,
            line: None,
            severity: Severity::Error,
            key: None,
            code: "unreadable".to_owned(),
            message: e.to_string(),
        }];
    }
    e.problems()
        .iter()
        .map(|p| Finding {
            file: rel(&p.file),
            line: p.line,
            severity: Severity::Error,
            key: Some(p.key.clone()).filter(|k| !k.is_empty()),
            code: "config".to_owned(),
            message: p.message.clone(),
        })
        .collect()
}
