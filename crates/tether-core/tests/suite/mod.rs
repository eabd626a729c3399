mod core;
mod drafting;
mod goal;
mod goal_context;
mod goal_exits;
mod planning;
mod ralph;
mod usage_limit;
