mod builtin;
mod command;
mod pi;
