mod api;
mod channel;
mod escaping;
mod security;
mod sse;
