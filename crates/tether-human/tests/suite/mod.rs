mod human;
mod notify;
mod resume;
mod zulip_channel;
