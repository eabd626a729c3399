mod human;
mod notices;
mod notify;
mod resume;
mod slack_channel;
mod telegram_channel;
mod visible;
mod zulip_channel;
