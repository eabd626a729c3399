mod human;
mod notices;
mod notify;
mod resume;
mod visible;
mod zulip_channel;
