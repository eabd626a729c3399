mod human;
mod notices;
mod notify;
mod resume;
mod telegram_channel;
mod visible;
mod zulip_channel;
