mod follow;
mod publish;
