//! Rules that involve more than one table, run after the schema walk.
//!
//! They see the environment-resolved config, so "missing" means missing from both the file and
//! the environment.

use crate::Config;
use crate::config::ExecutorKind;
use crate::reader::Reader;
use crate::schema::Marks;

/// Runs every cross-table rule, adding problems to `r`.
pub(crate) fn run(config: &Config, marks: &Marks, r: &mut Reader) {
    judge_differs_from_model(config, marks, r);
    listed_channels_are_complete(config, marks, r);
}

/// A channel or a notice sink `human.channels` lists needs what its table's read function
/// found lacking (a destination, a token's variable set). What is missing is a warning naming
/// it, not an error: the run goes on without that channel and `ask_human` names what to fix.
fn listed_channels_are_complete(config: &Config, marks: &Marks, r: &mut Reader) {
    for (channel, missing) in &marks.lacking {
        if config.human.channels.contains(channel) {
            r.warn(
                marks.channels.clone(),
                "human.channels",
                format!(
                    "\"{}\" is a channel but its settings are missing: {}",
                    channel.as_str(),
                    missing.join(", ")
                ),
            );
        }
    }
}

/// Cross-model by default: no judge (`[judge]`, nor one of its panel) may be the executor's
/// own model unless it allows it. Only the built-in executor runs on `[model]`; other
/// executors bring their own model.
fn judge_differs_from_model(config: &Config, marks: &Marks, r: &mut Reader) {
    let (Some(model), Some(judge)) = (&config.model, &config.judge) else {
        return;
    };
    if config.executor.kind != ExecutorKind::Builtin {
        return;
    }
    for (n, one) in judge.judges().enumerate() {
        if one.same_model || !one.endpoint.same_model_as(model) {
            continue;
        }
        let (path, which) = match n {
            0 => ("judge", "the judge"),
            _ => ("judge.panel", "a judge of the panel"),
        };
        r.report(
            marks.judge.clone(),
            path,
            format!(
                "{which} is the executor's own model ({} {} at {}), but every judge must be \
                 independent; set `{path}.same_model = true` or pick another model",
                model.api.as_str(),
                model.model,
                model.base_url
            ),
        );
    }
}
