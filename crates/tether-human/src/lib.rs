//! Asking a human, and never losing the answer.
//!
//! A question is stored first (pending), then offered on every channel at once — the terminal,
//! Zulip, Slack, and the store itself, which `tether answer` writes to from any shell — and the first
//! answer wins ([`broker`]). Waiters in other processes are woken through a per-workspace
//! notification socket ([`notify`]). The interaction threshold answers confident questions
//! without bothering anyone ([`threshold`]); [`asking`] is the `ask_human` behaviour shared by
//! the built-in agent's tool ([`tool`]) and the MCP server; [`prompts`] holds every text a model
//! reads about it. [`channels`] is the interface a channel implements ([`terminal`] and the
//! notice sinks directly; the chat channels [`zulip`], [`slack`] and [`telegram`] through the
//! one adapter of [`chat`], each implementing only what its service does its own way).
//!
//! Every kind of channel is one descriptor in [`registry`], its `tether.toml` table declared
//! once beside it ([`tables`]): the configuration's schema, its template and the secrets kept
//! from the agent are assembled from [`registry::CHANNELS`], never written out elsewhere.
//!
//! Only a person answers: a channel whose reply path the agent could read or reach (its
//! descriptor in [`registry`] says, given what the agent reaches) is kept to telling
//! ([`tell_only`]). A question an agent asks again after a crash started its work over is given
//! back rather than posted again ([`repeat`]).
//!
//! [`desk`] is the one constructor: the loops (and a resumed run waiting for a question its
//! killed process left pending), `tether ask`, `tether mcp` and the demo all get their human
//! side from [`Desk::from_config`]. This crate sits below the loops and knows nothing of
//! executors.
//!
//! Notices (a run finished, paused, failed, signed a goal off, keeps being rejected) come from
//! the run's journal ([`notice_events`]: a sink among the loop's others) and go to the channels
//! `[notify]` routes them to ([`Desk::notify`]), and to the desktop ([`desktop`]).
//!
//! The notice sinks reach a person rather than hold a conversation: [`ntfy`] (pushes to a
//! phone, a question's options as buttons that answer it), [`webhook`], [`email`] and
//! [`notify_command`], all sending the one document of [`sink_body`] and built by [`sinks`].
//! They are channels like the others: listed in `human.channels`, offered every question, sent
//! the notices `[notify]` routes to them. The broker also reminds the channels of a question
//! still waiting (`human.remind_after`) and offers it on the escalation sinks
//! (`human.escalate_to`) once it waited `human.escalate_after`. Whoever waits for a question
//! tells its channels who answered; [`late_answer`] is who tells the sinks when nobody waits.
//!
//! [`keyboard`] is the one reader of the process's standard input: the terminal card and every
//! prompt of the binary (contract approval, the plan review) take their lines from it.
//!
//! [`visible`] is the one escaping of text shown to a person: every human-facing text output of
//! tether (the terminal card here, and the binary's commands) passes agent- and user-written
//! text through it, so no control character reaches a terminal raw.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod asking;
pub mod broker;
pub mod channels;
pub mod chat;
pub mod desk;
pub mod desktop;
pub mod discord;
pub mod email;
pub mod keyboard;
pub mod late_answer;
pub mod notice_events;
pub mod notices;
pub mod notify;
pub mod notify_command;
pub mod ntfy;
pub mod person;
pub mod prompts;
pub mod registry;
mod relay;
pub mod repeat;
pub mod sink_body;
pub mod sinks;
pub mod slack;
mod slack_registry;
mod slack_router;
mod state_file;
pub mod tables;
pub mod telegram;
pub mod tell_only;
pub mod terminal;
pub mod threshold;
pub mod tool;
pub mod visible;
pub mod webhook;
pub mod zulip;

pub use asking::{AskFailed, AskPolicy, Reply};
pub use broker::{Answer, Broker, BrokerError, Escalation, Timeout};
pub use channels::{AnswerBody, Channel, ChannelAnswer, DynChannel};
pub use desk::{Console, DELIVERY_GRACE, Desk};
pub use keyboard::Keyboard;
pub use late_answer::LateAnswer;
pub use notice_events::{NoticeQueue, NoticeSink, NoticeWatch};
pub use notices::{Notice, NoticeRoutes};
