mod common;
mod journal;
mod listen;
mod migrations;
mod questions;
mod usage_index;
