mod acp_context;
mod builtin;
mod builtin_context;
mod command;
mod pi;
