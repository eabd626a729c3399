mod builtin;
mod builtin_cache;
mod command;
mod pi;
