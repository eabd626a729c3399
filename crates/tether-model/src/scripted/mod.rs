//! A scripted model, for `tether demo`, for tests of executors, and for the fake HTTP server.
//!
//! A [`Script`] decides what the model says; [`ScriptedModel`] plays it in-process as a
//! [`crate::ModelClient`], and `tether-testkit`'s fake server plays the very same script over
//! all three wire formats. Keeping the script here (not in a dev-only crate) lets the shipped
//! `tether demo` run without any model endpoint.
//!
//! ```
//! use serde_json::json;
//! use tether_model::scripted::{Script, ScriptedModel, Turn};
//! use tether_model::{Message, ModelClient, Request};
//! use tokio_util::sync::CancellationToken;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build()?.block_on(async {
//! let model = ScriptedModel::new(Script::turns([
//!     Turn::tool("write", json!({"path": "hello.txt", "content": "hi"})),
//!     Turn::text("<promise>DONE</promise>"),
//! ]));
//! let request = Request::new(vec![Message::user("write hello.txt")]);
//! let first = model.complete(&request, CancellationToken::new()).await?;
//! assert_eq!(first.tool_calls[0].name, "write");
//! let second = model.complete(&request, CancellationToken::new()).await?;
//! assert_eq!(second.text, "<promise>DONE</promise>");
//! # Ok::<(), tether_model::ModelError>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod model;
mod script;

pub use model::ScriptedModel;
pub use script::{Script, ScriptError, Turn, resolve_tool_name};
