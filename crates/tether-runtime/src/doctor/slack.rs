//! The Slack check, when `human.channels` lists it: its settings present, the bot token taken
//! (`auth.test`), the app-level token able to open a Socket Mode connection
//! (`apps.connections.open`, whose URL is not used) and the channel readable by the bot
//! (`conversations.history`). One bounded request each; a token is never printed, only the name
//! of the variable holding it.

use tether_config::{Channel, Config};
use tether_slack::{ApiOptions, SlackApi, SlackError, SlackSettings, Ts};

use super::Check;

const NAME: &str = "slack";

/// The Slack check of `config`.
pub async fn check(config: &Config) -> Check {
    if !config.human.channels.contains(&Channel::Slack) {
        return Check::skip(NAME, "not among human.channels");
    }
    let settings = match SlackSettings::from_config(&config.slack) {
        Ok(settings) => settings,
        Err(e) => {
            return Check::fail(
                NAME,
                e.to_string(),
                "set each missing value in [slack] or its environment variable",
            );
        }
    };
    let options = ApiOptions {
        connect_timeout: super::remote::TIMEOUT,
        request_timeout: super::remote::TIMEOUT,
    };
    let api = match SlackApi::new(&settings, &options) {
        Ok(api) => api,
        Err(e) => return Check::fail(NAME, e.to_string(), "check slack.api_url"),
    };
    let (bot_var, app_var) = (&config.slack.bot_token_env, &config.slack.app_token_env);
    let bot = match api.auth_test().await {
        Ok(bot) => bot,
        Err(e) => return failed(e, format!("check the bot token (xoxb-…) in {bot_var}")),
    };
    if let Err(e) = api.open_connection().await {
        return failed(
            e,
            format!(
                "check the app-level token (xapp-…, scope connections:write) in {app_var} and \
                 that Socket Mode is on in the app's settings"
            ),
        );
    }
    let channel = &settings.channel;
    let at = format!("bot {} in channel {channel}", bot.user_id);
    let now = Ts::parse(&format!("{}.000000", tether_store::now_ms() / 1000));
    let Some(now) = now else {
        return Check::fail(NAME, "the clock cannot be read", "check the system clock");
    };
    match api.history(channel, &now, 1).await {
        Ok(_) => Check::pass(
            NAME,
            format!("{at}: Socket Mode connects; questions go as a thread each"),
        ),
        Err(e) => Check::fail(
            NAME,
            format!("{at}: {e}"),
            "check slack.channel (SLACK_CHANNEL) is the channel's id, that the bot was invited \
             there (/invite), and its scopes (chat:write, channels:history, groups:history)",
        ),
    }
}

/// A failed request: a refused token names `fix`; anything else is about reaching Slack.
fn failed(e: SlackError, fix: String) -> Check {
    match e {
        SlackError::Auth { .. } => Check::fail(NAME, e.to_string(), fix),
        e => Check::fail(
            NAME,
            e.to_string(),
            "check slack.api_url and that the Slack API is reachable from here",
        ),
    }
}
