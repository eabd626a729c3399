//! The Telegram check, when `human.channels` lists it: its settings present, the token taken
//! (`getMe`) and the chat reachable by the bot (`getChat`). One bounded request each; the token
//! is never printed, only the name of the variable holding it.

use tether_config::{Channel, Config};
use tether_telegram::{ApiOptions, TelegramApi, TelegramError, TelegramSettings};

use super::Check;

const NAME: &str = "telegram";

/// The Telegram check of `config`.
pub async fn check(config: &Config) -> Check {
    if !config.human.channels.contains(&Channel::Telegram) {
        return Check::skip(NAME, "not among human.channels");
    }
    let settings = match TelegramSettings::from_config(&config.telegram) {
        Ok(settings) => settings,
        Err(e) => {
            return Check::fail(
                NAME,
                e.to_string(),
                "set each missing value in [telegram] or its environment variable",
            );
        }
    };
    let options = ApiOptions {
        connect_timeout: super::remote::TIMEOUT,
        request_timeout: super::remote::TIMEOUT,
        ..ApiOptions::default()
    };
    let api = match TelegramApi::new(&settings, options) {
        Ok(api) => api,
        Err(e) => return Check::fail(NAME, e.to_string(), "check telegram.api_url"),
    };
    let token_var = &config.telegram.bot_token_env;
    let bot = match api.get_me().await {
        Ok(bot) => bot,
        Err(e @ TelegramError::Unauthorized { .. }) => {
            return Check::fail(
                NAME,
                e.to_string(),
                format!("check the bot token in {token_var} (from @BotFather)"),
            );
        }
        Err(e) => {
            return Check::fail(
                NAME,
                e.to_string(),
                "check telegram.api_url and that the Bot API is reachable from here",
            );
        }
    };
    let name = match &bot.username {
        Some(user) => format!("{} (@{user})", bot.first_name),
        None => bot.display_name(),
    };
    let at = format!("bot {name} in chat {}", settings.chat_id);
    match api.get_chat(&settings.chat_id).await {
        Ok(chat) => {
            let place = if chat.is_forum {
                "a topic per conversation"
            } else {
                "reply chains"
            };
            Check::pass(
                NAME,
                format!("{at} ({}): questions go as {place}", chat.kind),
            )
        }
        Err(e) => Check::fail(
            NAME,
            format!("{at}: {e}"),
            "check telegram.chat_id (TELEGRAM_CHAT_ID) and that the bot is a member of that chat",
        ),
    }
}
