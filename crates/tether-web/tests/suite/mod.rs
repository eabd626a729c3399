mod api;
mod channel;
mod choices;
mod escaping;
mod launch;
mod security;
mod sse;
mod team;
