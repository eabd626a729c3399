//! Rules that involve more than one table, run after the schema walk.
//!
//! They see the environment-resolved config, so "missing" means missing from both the file and
//! the environment.

use crate::Config;
use crate::config::{Channel, ExecutorKind, ZulipConfig};
use crate::reader::Reader;
use crate::schema::Marks;

/// Runs every cross-table rule, adding problems to `r`.
pub(crate) fn run(config: &Config, marks: &Marks, r: &mut Reader) {
    judge_differs_from_model(config, marks, r);
    zulip_channel_is_complete(config, marks, r);
    chat_channel_is_complete(config, marks, r, Channel::Slack);
    chat_channel_is_complete(config, marks, r, Channel::Telegram);
    for sink in [
        Channel::Ntfy,
        Channel::Webhook,
        Channel::Email,
        Channel::NotifyCommand,
    ] {
        chat_channel_is_complete(config, marks, r, sink);
    }
}

/// A Slack or Telegram channel (or a notice sink) needs its destination and tokens; like Zulip's, what is missing
/// is a warning naming it.
fn chat_channel_is_complete(config: &Config, marks: &Marks, r: &mut Reader, channel: Channel) {
    if !config.human.channels.contains(&channel) {
        return;
    }
    let missing = match channel {
        Channel::Slack => crate::chat::slack_missing(&config.slack),
        Channel::Telegram => crate::chat::telegram_missing(&config.telegram),
        Channel::Ntfy => config.ntfy.missing(),
        Channel::Webhook => config.webhook.missing(),
        Channel::Email => config.email.missing(),
        Channel::NotifyCommand => config.notify_command.missing(),
        _ => return,
    };
    if !missing.is_empty() {
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

/// Cross-model by default: the judge may not be the executor's own model unless allowed.
/// Only the built-in executor runs on `[model]`; other executors bring their own model.
fn judge_differs_from_model(config: &Config, marks: &Marks, r: &mut Reader) {
    let (Some(model), Some(judge)) = (&config.model, &config.judge) else {
        return;
    };
    if config.executor.kind == ExecutorKind::Builtin
        && !judge.same_model
        && judge.endpoint.same_model_as(model)
    {
        r.report(
            marks.judge.clone(),
            "judge",
            format!(
                "the judge is the executor's own model ({} {} at {}), but the judge must be \
                 independent; set `judge.same_model = true` or pick another model",
                model.api.as_str(),
                model.model,
                model.base_url
            ),
        );
    }
}

/// A Zulip channel needs a server, a bot, a stream and a key. Missing ones are a warning, not
/// an error: the run goes on without Zulip and `ask_human` names what is missing.
fn zulip_channel_is_complete(config: &Config, marks: &Marks, r: &mut Reader) {
    if !config.human.channels.contains(&Channel::Zulip) {
        return;
    }
    let zulip = &config.zulip;
    let fields = [
        ("zulip.server_url", ZulipConfig::SERVER_URL_ENV),
        ("zulip.bot_email", ZulipConfig::BOT_EMAIL_ENV),
        ("zulip.stream", ZulipConfig::STREAM_ENV),
    ];
    let mut missing: Vec<String> = fields
        .iter()
        .zip(marks.zulip_given)
        .filter(|(_, given)| !given)
        .map(|((key, var), _)| format!("`{key}` (or {var})"))
        .collect();
    if zulip.api_key.is_none() {
        missing.push(format!("the bot's API key (set {})", zulip.api_key_env));
    }
    if !missing.is_empty() {
        r.warn(
            marks.channels.clone(),
            "human.channels",
            format!(
                "\"zulip\" is a channel but its settings are missing: {}",
                missing.join(", ")
            ),
        );
    }
}
