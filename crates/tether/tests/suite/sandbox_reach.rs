//! Nothing the agent runs reaches past its sandbox, each attack tried against the real binary by
//! a scripted hostile agent (the built-in agent, its `bash` running the attack), as root and as an
//! ordinary user: the person's terminal (typing into it, opening the others), descriptors tether
//! inherited, the secrets in the home directory wherever the binary is kept, and the bridge's
//! calls, which reuse the run's sandbox instead of building one each.

mod bridge;
mod configured;
mod credentials;
mod descriptors;
mod git_pointer;
mod home;
mod installed;
mod lifetime;
mod sockets;
mod support;
mod terminal;
