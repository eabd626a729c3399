//! `tether judge test`'s run composed: the configured `[judge]` (and each judge of its panel)
//! on the built-in corpus (and a directory of the user's cases) through the real sign-off
//! check, each case in a directory of its own, with verify's timeout and tether's keys kept from
//! its commands as a run has them. A panel is measured judge by judge, and as a panel: on each
//! case, the decision its rule makes of its judges' ([`tether_judgebench::panel_case`]).

use std::path::Path;
use std::time::Duration;

use tether_config::{Config, Env};
use tether_judgebench::{Case, CaseResult, RunOptions};
use tether_signoff::Panel;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};

/// The judges and the cases they are measured on.
pub struct JudgeTest {
    /// The judges `[judge]` and its `[[judge.panel]]` describe.
    pub panel: Panel,
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
        let panel = Panel::from_config(settings, config.model.as_ref(), env)?;
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
            panel,
            cases,
            options,
        })
    }

    /// Runs the cases one after another, judge after judge; `decided` is told each judge's
    /// result (with the judge's place in the panel) as it comes.
    pub async fn run(&self, mut decided: impl FnMut(usize, &CaseResult)) -> Result<Measured> {
        let cancel = CancellationToken::new();
        let mut judges = Vec::with_capacity(self.panel.judges().len());
        for (n, judge) in self.panel.judges().iter().enumerate() {
            let mut results = Vec::with_capacity(self.cases.len());
            for case in &self.cases {
                let result = tether_judgebench::run_case(case, judge, &self.options, &cancel)
                    .await
                    .map_err(|e| Error::Case(Box::new(e)))?;
                decided(n, &result);
                results.push(result);
            }
            judges.push(results);
        }
        let panel = self.panel.is_panel().then(|| {
            (0..self.cases.len())
                .filter_map(|case| {
                    let votes: Vec<CaseResult> = judges
                        .iter()
                        .filter_map(|results| results.get(case).cloned())
                        .collect();
                    tether_judgebench::panel_case(&votes, self.panel.agree())
                })
                .collect()
        });
        Ok(Measured { judges, panel })
    }
}

/// What a judge test measured.
pub struct Measured {
    /// Each judge's results, in the panel's order (one judge: one list).
    pub judges: Vec<Vec<CaseResult>>,
    /// The panel's results, when there are several judges.
    pub panel: Option<Vec<CaseResult>>,
}
