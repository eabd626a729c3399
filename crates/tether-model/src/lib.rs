//! Streaming model clients for tether's built-in agent and its sign-off judge.
//!
//! One dyn-compatible trait, [`ModelClient`], with one required streaming method and a
//! provided [`ModelClient::complete`]; implementations:
//! - [`HttpModel`] — OpenAI Chat Completions, OpenAI Responses or Anthropic Messages, chosen by
//!   [`Endpoint::api`], with retries ([`RetryPolicy`]) and cancellation;
//! - [`scripted::ScriptedModel`] — answers from a [`scripted::Script`], in-process.
//!
//! The conversation types ([`Request`], [`Message`], [`ToolCall`], [`Response`]) are
//! provider-neutral; the wire mapping lives in one module per API. A request's tools are the
//! [`ToolSpec`]s of a `tether_tools::ToolSet`, defined in `tether-tools` and re-exported here
//! unchanged: each wire module writes them in its API's format, and nothing else translates
//! them. Errors are typed by what
//! the caller can do ([`ModelError`]) and never contain the API key.
//!
//! Prompt caching: a request's body is a pure function of the request, so a conversation's
//! next call begins with the bytes of the one before; on Anthropic the body also marks the
//! cache breakpoints ([`Request::cache_conversation`]). [`Usage`] splits the input into what
//! the provider's cache served, what was written to it, and the rest.
//!
//! ```no_run
//! use tether_config::{Api, Secret};
//! use tether_model::{Endpoint, HttpModel, Message, ModelClient, Request};
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn run() -> Result<(), tether_model::ModelError> {
//! let endpoint = Endpoint::new(Api::Anthropic, "https://api.anthropic.com", "claude-opus-4-5")
//!     .with_api_key(Secret::new("sk-…"));
//! let model = HttpModel::new(endpoint)?;
//! let request = Request::new(vec![Message::user("Say hi")]).with_system("Be brief.");
//! let response = model.complete(&request, CancellationToken::new()).await?;
//! println!("{} ({} tokens out)", response.text, response.usage.output_tokens);
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod client;
mod error;
mod http;
mod retry;
pub mod scripted;
pub mod sse;
mod types;
mod wire;

pub use client::{EventStream, ModelClient, collect};
pub use error::ModelError;
pub use http::{Endpoint, HttpModel, HttpOptions, Probe, connect, models_url, probe};
pub use retry::{RetryPolicy, parse_retry_after};
pub use tether_tools::ToolSpec;
pub use types::{Message, Request, Response, Role, StopReason, StreamEvent, ToolCall, Usage};
pub use wire::{ANTHROPIC_VERSION, request_url};
