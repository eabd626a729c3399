//! The notice sinks' check, when `human.channels` lists one or `human.escalate_to` names one:
//! each sink's settings and variables present and usable (ntfy's topic and tokens, the
//! webhook's URL, the mail server and addresses, the command). Nothing is sent; secrets are
//! named by their variables only.

use tether_config::Config;

use super::Check;

const NAME: &str = "notices";

/// The notice sinks' check of `config`.
pub fn check(config: &Config) -> Check {
    let sinks: Vec<&str> = config
        .human
        .channels
        .iter()
        .filter(|c| tether_human::registry::find(**c).is_some_and(|def| def.is_sink()))
        .map(|c| c.as_str())
        .collect();
    let escalation =
        config.human.escalate_after_secs.is_some() && !config.human.escalate_to.is_empty();
    if sinks.is_empty() && !escalation {
        return Check::skip(
            NAME,
            "no notice sink among human.channels or human.escalate_to",
        );
    }
    let problems = tether_human::sinks::problems(config);
    if problems.is_empty() {
        let mut detail = if sinks.is_empty() {
            "no notice sink among human.channels".to_owned()
        } else {
            format!("{} set up", sinks.join(", "))
        };
        if escalation {
            let targets: Vec<String> = config
                .human
                .escalate_to
                .iter()
                .map(|t| t.spelling())
                .collect();
            detail.push_str(&format!("; escalation to {}", targets.join(", ")));
        }
        Check::pass(NAME, detail)
    } else {
        Check::fail(
            NAME,
            problems.join("\n"),
            "set what each line names (in tether.toml, or the environment variable it names)",
        )
    }
}
