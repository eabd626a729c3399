//! The command sink: a program of the user's, run for each notice and question with the
//! document of [`crate::sink_body`] as one JSON object on stdin.
//!
//! For everything tether has no sink for (a pager's CLI, a home-automation hook, a log): the
//! program gets exactly what a `json` webhook would get. It runs through tether's own program
//! runner: in its own process group, with stdout and stderr captured up to a few kilobytes
//! (stderr is logged when it fails), tether's keys removed from its environment, and the whole
//! group killed when `[notify_command] timeout_secs` passes.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tether_tools::{ProgramCommand, ProgramRun, ShellEnd};
use tokio_util::sync::CancellationToken;

use crate::channels::BoxFuture;
use crate::sink_body::SinkBody;
use crate::sinks::{Deliver, SinkError};
use crate::tables::notify_command::NotifyCommandConfig;

/// The name this sink's runs are logged under.
const NAME: &str = "notify_command";
/// Bytes of stdout and stderr kept.
const CAPTURE: usize = 4096;

/// Runs a program per notice and question.
pub struct NotifyCommand {
    template: Arc<ProgramCommand>,
}

impl NotifyCommand {
    /// The sink `config` describes, running in `cwd` without the variables `env_remove` names
    /// (tether's keys).
    pub fn from_config(
        config: &NotifyCommandConfig,
        cwd: PathBuf,
        env_remove: Vec<String>,
    ) -> Result<Self, SinkError> {
        let Some(program) = &config.program else {
            return Err(SinkError::Missing {
                sink: NAME,
                missing: config.missing(),
            });
        };
        let mut argv = vec![program.clone()];
        argv.extend(config.args.iter().cloned());
        Ok(NotifyCommand {
            template: Arc::new(ProgramCommand {
                argv,
                cwd,
                input: None,
                timeout: Duration::from_secs(config.timeout_secs),
                kill_grace: Duration::from_secs(1),
                stdout_cap: CAPTURE,
                stderr_cap: CAPTURE,
                env_remove,
                env: Vec::new(),
                sandbox: None,
            }),
        })
    }

    /// Runs the program with `body` on stdin and waits for it (at most the timeout).
    pub async fn run(&self, body: &SinkBody) -> std::io::Result<ProgramRun> {
        let mut spec = (*self.template).clone();
        let mut input = body.json().to_string().into_bytes();
        input.push(b'\n');
        spec.input = Some(input);
        tether_tools::run_program(&spec, &CancellationToken::new()).await
    }

    async fn run_logged(&self, body: SinkBody) {
        match self.run(&body).await {
            Ok(run) if run.end == ShellEnd::Exited(0) => {}
            Ok(run) => {
                tracing::warn!(sink = NAME, end = ?run.end, stderr = %run.stderr.trim(), "the notice command failed");
            }
            Err(e) => tracing::warn!(sink = NAME, error = %e, "the notice command could not start"),
        }
    }
}

impl Deliver for NotifyCommand {
    fn name(&self) -> &'static str {
        NAME
    }

    fn deliver(&self, body: SinkBody) -> BoxFuture<'_, ()> {
        Box::pin(self.run_logged(body))
    }
}

/// The command sink in the registry ([`crate::registry`]), its table `[notify_command]`
/// ([`crate::tables::notify_command`]).
pub const DEF: crate::registry::ChannelDef = crate::registry::ChannelDef {
    settings: &crate::tables::notify_command::TABLE,
    build: |setup, role| {
        let command = NotifyCommand::from_config(
            &NotifyCommandConfig::of(setup.config),
            setup.ws.root().to_path_buf(),
            setup.config.key_vars(),
        )
        .map_err(|e| e.to_string())?;
        setup.one_way(command, role.sent_key("notify_command"))
    },
    check: |config, _| {
        let command = NotifyCommandConfig::of(config);
        if command.program.is_some() {
            Ok(())
        } else {
            Err(crate::sinks::SinkError::Missing {
                sink: "notify_command",
                missing: command.missing(),
            }
            .to_string())
        }
    },
    probe: None,
    notices: |config| NotifyCommandConfig::of(config).notify.clone(),
    reply: |_, _, _| crate::registry::ReplyPath::None,
};
