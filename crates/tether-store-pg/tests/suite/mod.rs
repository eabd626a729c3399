mod common;
mod contract;
mod journal;
mod listen;
mod migrations;
mod questions;
