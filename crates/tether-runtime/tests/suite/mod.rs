mod launch;
mod scheduler;
