//! Test modules, one per fake server.

mod model_server;
mod telegram_server;
mod zulip_server;
