mod core;
mod drafting;
mod goal;
mod planning;
mod ralph;
