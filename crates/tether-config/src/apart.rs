//! A variable a channel or a notice sink reads its key from is never one a model endpoint
//! reads its key from: what a channel reads travels where its notices go (an ntfy reply token
//! inside every question's buttons, a webhook's URL is where it posts), so a channel naming
//! `[model] api_key_env`'s variable would publish the model's key. The model's variables are
//! those `[model]`, `[judge]`, `[loop_judge]`, `[side]` and `[planning]` name, and the
//! variables model keys are conventionally held in (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`: the
//! agent CLIs read them when nothing else is named); a channel's are those the keys its table
//! declares as a secret's variable name, or their defaults.

use std::ops::Range;

use toml::de::{DeTable, DeValue};

use crate::key_settings::{Named, Reader as Who, named};
use crate::reader::Reader;
use crate::{Api, Config};

/// Reports every channel setting whose variable is a model's key's, at the setting's line (or,
/// when the channel's is its default, at the model's).
pub(crate) fn check(config: &Config, doc: &DeTable<'_>, r: &mut Reader) {
    let settings = named(config);
    let models = model_vars(&settings);
    for setting in settings.iter().filter(|s| s.reader == Who::Channel) {
        let Some(var) = setting.var else {
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
        match (span(doc, setting.table, setting.key), model.setting) {
            (Some(at), _) => r.report(Some(at), channel, message("names")),
            (None, Some((table, key))) => r.report(
                span(doc, table, key),
                format!("{table}.{key}"),
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
    /// The setting naming it (table, key), when one does.
    setting: Option<(&'static str, &'static str)>,
}

/// Every variable a model's key is read from, with who names it.
fn model_vars(settings: &[Named<'_>]) -> Vec<(String, Model)> {
    let named = settings
        .iter()
        .filter(|s| s.reader == Who::Model)
        .filter_map(|s| {
            let var = s.var?;
            let name = format!("`{}.{}`", s.table, s.key);
            Some((
                var.to_owned(),
                Model {
                    name,
                    setting: Some((s.table, s.key)),
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

/// Where `table.key`'s value is in the file, if the file sets it.
fn span(doc: &DeTable<'_>, table: &str, key: &str) -> Option<Range<usize>> {
    let DeValue::Table(table) = doc.get(table)?.get_ref() else {
        return None;
    };
    Some(table.get(key)?.span())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::MapEnv;
    use crate::test_table::schema;

    const MODEL: &str = "[model]\napi = \"anthropic\"\nbase_url = \"http://127.0.0.1:9\"\n\
                         model = \"m\"\napi_key_env = \"MY_MODEL_KEY\"\n";

    fn problems(extra: &str) -> Vec<String> {
        let text = format!("{MODEL}{extra}");
        match crate::check(&schema(), &text, Path::new("tether.toml"), &MapEnv::new()) {
            Ok(_) => Vec::new(),
            Err(problems) => problems.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn a_sink_naming_the_models_key_is_refused_at_its_line() {
        assert_eq!(
            problems("[pager]\nroom = \"r\"\ntoken_env = \"MY_MODEL_KEY\"\n"),
            [
                "tether.toml:8: pager.token_env: names MY_MODEL_KEY, the variable \
              `model.api_key_env` reads its key from: a channel or sink never reads a model's \
              key (it would send it where its notices go); name a variable of its own"
            ]
        );
        let pager = problems("[pager]\ntoken_env = \"ANTHROPIC_API_KEY\"\n");
        assert_eq!(pager.len(), 1, "{pager:?}");
        assert!(pager[0].starts_with("tether.toml:7: pager.token_env: names ANTHROPIC_API_KEY"));
        let judge = "[judge]\napi = \"openai-chat\"\nbase_url = \"http://127.0.0.1:8\"\n\
                     model = \"j\"\napi_key_env = \"JUDGE_KEY\"\n[pager]\ntoken_env = \"JUDGE_KEY\"\n";
        let judged = problems(judge);
        assert_eq!(judged.len(), 1, "{judged:?}");
        assert!(
            judged[0].contains("pager.token_env: names JUDGE_KEY"),
            "{judged:?}"
        );
    }

    #[test]
    fn a_model_key_a_channel_reads_by_default_is_refused_at_the_models_line() {
        let text = MODEL.replace("MY_MODEL_KEY", "PAGER_TOKEN");
        let Err(problems) =
            crate::check(&schema(), &text, Path::new("tether.toml"), &MapEnv::new())
        else {
            panic!("accepted");
        };
        assert_eq!(
            problems[0].to_string(),
            "tether.toml:5: model.api_key_env: `pager.token_env` reads (its default), \
             PAGER_TOKEN, the variable `model.api_key_env` reads its key from: a channel \
             or sink never reads a model's key (it would send it where its notices go); name a \
             variable of its own"
        );
    }

    #[test]
    fn channels_with_variables_of_their_own_pass() {
        assert!(problems("[pager]\nroom = \"r\"\ntoken_env = \"MY_PAGER_TOKEN\"\n").is_empty());
    }
}
