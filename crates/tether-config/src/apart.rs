//! A variable a channel or a notice sink reads its key from is never one a model endpoint
//! reads its key from: what a channel reads travels where its notices go (an ntfy reply token
//! inside every question's buttons, a webhook's URL is where it posts), so a channel naming
//! `[model] api_key_env`'s variable would publish the model's key. The model's variables are
//! those `[model]`, `[judge]`, `[loop_judge]` and `[planning]` name, and the variables model
//! keys are conventionally held in (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`: the agent CLIs read
//! them when nothing else is named); a channel's are those its `*_env` settings name, or their
//! defaults.

use std::ops::Range;

use toml::de::{DeTable, DeValue};

use crate::key_settings::{KEY_SETTINGS, KeySetting, Reader as Who};
use crate::reader::Reader;
use crate::{Api, Config};

/// Reports every channel setting whose variable is a model's key's, at the setting's line (or,
/// when the channel's is its default, at the model's).
pub(crate) fn check(config: &Config, doc: &DeTable<'_>, r: &mut Reader) {
    let models = model_vars(config);
    for setting in KEY_SETTINGS.iter().filter(|s| s.reader == Who::Channel) {
        let Some(var) = (setting.var)(config) else {
            continue;
        };
        let Some((_, model)) = models.iter().find(|(v, _)| v == var) else {
            continue;
        };
        let channel = format!("{}.{}", setting.table, setting.key);
        let message = |whose: &str| {
            format!(
                "{whose} {var}, the variable {} reads its key from: a channel or sink never \
                 reads a model's key (it would send it where its notices go); name a variable \
                 of its own",
                model.name
            )
        };
        match (span(doc, setting), &model.setting) {
            (Some(at), _) => r.report(Some(at), channel, message("names")),
            (None, Some(of_model)) => r.report(
                span(doc, of_model),
                format!("{}.{}", of_model.table, of_model.key),
                message(&format!("`{channel}` reads (its default),")),
            ),
            (None, None) => r.report(None, channel, message("names")),
        }
    }
}

/// A model's key variable: who names it.
struct Model {
    /// For people: `` `model.api_key_env` `` or the convention.
    name: String,
    /// The setting naming it, when one does.
    setting: Option<&'static KeySetting>,
}

/// Every variable a model's key is read from, with who names it.
fn model_vars(config: &Config) -> Vec<(String, Model)> {
    let named = KEY_SETTINGS
        .iter()
        .filter(|s| s.reader == Who::Model)
        .filter_map(|s| {
            let var = (s.var)(config)?;
            let name = format!("`{}.{}`", s.table, s.key);
            Some((
                var.to_owned(),
                Model {
                    name,
                    setting: Some(s),
                },
            ))
        });
    let conventional = Api::CHOICES.iter().map(|(spelling, api)| {
        let name = format!("an agent CLI speaking {spelling} conventionally");
        let model = Model {
            name,
            setting: None,
        };
        (api.conventional_key_env().to_owned(), model)
    });
    named.chain(conventional).collect()
}

/// Where `setting`'s value is in the file, if the file sets it.
fn span(doc: &DeTable<'_>, setting: &KeySetting) -> Option<Range<usize>> {
    let DeValue::Table(table) = doc.get(setting.table)?.get_ref() else {
        return None;
    };
    Some(table.get(setting.key)?.span())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::MapEnv;

    const MODEL: &str = "[model]\napi = \"anthropic\"\nbase_url = \"http://127.0.0.1:9\"\n\
                         model = \"m\"\napi_key_env = \"MY_MODEL_KEY\"\n";

    fn problems(extra: &str) -> Vec<String> {
        let text = format!("{MODEL}{extra}");
        match crate::check(&text, Path::new("tether.toml"), &MapEnv::new()) {
            Ok(_) => Vec::new(),
            Err(problems) => problems.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn a_sink_naming_the_models_key_is_refused_at_its_line() {
        assert_eq!(
            problems("[ntfy]\ntopic = \"t\"\nreply_token_env = \"MY_MODEL_KEY\"\n"),
            [
                "tether.toml:8: ntfy.reply_token_env: names MY_MODEL_KEY, the variable \
              `model.api_key_env` reads its key from: a channel or sink never reads a model's \
              key (it would send it where its notices go); name a variable of its own"
            ]
        );
        let webhook = problems("[webhook]\nurl_env = \"ANTHROPIC_API_KEY\"\n");
        assert_eq!(webhook.len(), 1, "{webhook:?}");
        assert!(webhook[0].starts_with("tether.toml:7: webhook.url_env: names ANTHROPIC_API_KEY"));
        let judge = "[judge]\napi = \"openai-chat\"\nbase_url = \"http://127.0.0.1:8\"\n\
                     model = \"j\"\napi_key_env = \"JUDGE_KEY\"\n[slack]\nbot_token_env = \"JUDGE_KEY\"\n";
        let slack = problems(judge);
        assert_eq!(slack.len(), 1, "{slack:?}");
        assert!(
            slack[0].contains("slack.bot_token_env: names JUDGE_KEY"),
            "{slack:?}"
        );
    }

    #[test]
    fn a_model_key_a_channel_reads_by_default_is_refused_at_the_models_line() {
        let text = MODEL.replace("MY_MODEL_KEY", "ZULIP_BOT_API_KEY");
        let Err(problems) = crate::check(&text, Path::new("tether.toml"), &MapEnv::new()) else {
            panic!("accepted");
        };
        assert_eq!(
            problems[0].to_string(),
            "tether.toml:5: model.api_key_env: `zulip.api_key_env` reads (its default), \
             ZULIP_BOT_API_KEY, the variable `model.api_key_env` reads its key from: a channel \
             or sink never reads a model's key (it would send it where its notices go); name a \
             variable of its own"
        );
    }

    #[test]
    fn channels_with_variables_of_their_own_pass() {
        assert!(
            problems(
                "[ntfy]\ntopic = \"t\"\ntoken_env = \"NTFY_TOKEN\"\nreply_token_env = \"NTFY_REPLY\"\n\
                 [webhook]\nurl_env = \"TETHER_WEBHOOK_URL\"\n[email]\npassword_env = \"SMTP_PASSWORD\"\n"
            )
            .is_empty()
        );
    }
}
