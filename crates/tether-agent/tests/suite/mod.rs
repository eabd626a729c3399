mod builtin;
mod command;
