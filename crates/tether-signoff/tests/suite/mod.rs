mod contract;
mod http;
mod judge;
mod panel;
mod tools;
mod verify;
