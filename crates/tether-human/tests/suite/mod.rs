mod human;
mod notify;
mod resume;
mod visible;
mod zulip_channel;
