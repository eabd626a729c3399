mod acp_context;
mod builtin;
mod builtin_cache;
mod builtin_context;
mod command;
mod pi;
