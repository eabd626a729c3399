mod human;
mod notify;
mod zulip_channel;
