mod api;
mod channel;
mod choices;
mod escaping;
mod security;
mod sse;
mod team;
