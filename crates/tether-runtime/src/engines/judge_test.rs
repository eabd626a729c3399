//! `tether judge test`'s run composed: the configured `[judge]` on the built-in corpus (and a
//! directory of the user's cases) through the real sign-off check, each case in a directory of
//! its own, with verify's timeout and tether's keys kept from its commands as a run has them.

use std::path::Path;
use std::time::Duration;

use tether_config::{Config, Env};
use tether_judgebench::{Case, CaseResult, RunOptions};
use tether_signoff::Judge;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};

/// The judge and the cases it is measured on.
pub struct JudgeTest {
    /// The judge `[judge]` describes.
    pub judge: Judge,
    /// The cases, in order.
    pub cases: Vec<Case>,
    options: RunOptions,
}

impl JudgeTest {
    /// `config`'s judge on the built-in cases and those of `dir`, narrowed to the names that
    /// contain `only`.
    pub fn new(
        config: &Config,
        env: &dyn Env,
        dir: Option<&Path>,
        only: Option<&str>,
    ) -> Result<Self> {
        let settings = config.judge.as_ref().ok_or(Error::NoJudgeToTest)?;
        let judge = Judge::from_config(settings, config.model.as_ref(), env)?;
        let mut cases = tether_judgebench::builtin().map_err(Error::BuiltinCases)?;
        if let Some(dir) = dir {
            cases.extend(tether_judgebench::from_dir(dir).map_err(Error::Cases)?);
        }
        if let Some(only) = only {
            cases.retain(|c| c.name.contains(only));
        }
        if cases.is_empty() {
            return Err(Error::NoCaseMatches);
        }
        let options = RunOptions {
            verify_timeout: Duration::from_secs(config.r#loop.verify_timeout_secs),
            env_remove: config.key_vars(),
        };
        Ok(JudgeTest {
            judge,
            cases,
            options,
        })
    }

    /// Runs the cases one after another; `decided` is told each result as it comes.
    pub async fn run(&self, mut decided: impl FnMut(&CaseResult)) -> Result<Vec<CaseResult>> {
        let cancel = CancellationToken::new();
        let mut results = Vec::with_capacity(self.cases.len());
        for case in &self.cases {
            let result = tether_judgebench::run_case(case, &self.judge, &self.options, &cancel)
                .await
                .map_err(|e| Error::Case(Box::new(e)))?;
            decided(&result);
            results.push(result);
        }
        Ok(results)
    }
}
