mod contract;
mod http;
mod judge;
mod tools;
mod verify;
