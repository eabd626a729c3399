//! Test modules, one per fake server.

mod gemini_server;
mod model_server;
mod telegram_server;
mod zulip_server;
