//! The one schema of `tether.toml`: the core tables, every table an integration declares —
//! each channel's and notice sink's, from [`tether_human::registry::CHANNELS`] — and the
//! spelling of every agent CLI of [`tether_agent::cli::AGENT_CLIS`] in `[executor] kind`. The
//! runtime sees every registry, so it assembles it; the binary and the runtime load every
//! configuration with it (its template is what `tether init` writes and the configuration
//! reference shows).
//!
//! The agent CLIs declare no table of their own: the `[executor]` settings they read
//! (`program`, `args`, `env`, `turn_timeout_secs`) are every agent CLI's, and `permissions` the
//! ACP agent's, all checked against `[executor] kind` in tether-config's core table.

use std::sync::OnceLock;

use tether_config::{AgentDecl, Schema, TableDecl};

/// The tables integrations declare, in the template's order.
pub fn declared() -> impl Iterator<Item = &'static TableDecl> {
    tether_human::registry::tables()
}

/// Every agent CLI as `[executor] kind` spells it, in the registry's order.
pub fn agents() -> impl Iterator<Item = AgentDecl> {
    tether_agent::cli::AGENT_CLIS.iter().map(|cli| AgentDecl {
        kind: cli.kind,
        about: cli.about,
    })
}

/// The schema every configuration is loaded with.
pub fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| Schema::core().with(declared()).with_agents(agents()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_declared_table_is_in_the_schema_once() {
        let tables: Vec<&'static TableDecl> = declared().collect();
        assert_eq!(Schema::conflicts(&tables), Vec::<String>::new());
        assert_eq!(schema().declared().len(), tables.len());
        assert_eq!(schema().agents().len(), tether_agent::cli::AGENT_CLIS.len());
    }
}
