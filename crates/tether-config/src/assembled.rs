//! The schema: every table and key `tether.toml` can hold, in the order the template documents
//! them — the core tables (their keys listed in `keys.rs`), the tables integrations declare
//! ([`TableDecl`]) and the agent CLIs `[executor] kind` spells ([`AgentDecl`]), which the
//! caller hands in from its registries ([`Schema::with`], [`Schema::with_agents`]).
//! tether-config names no integration: a channel's, a sink's or an agent's settings are in the
//! schema because its caller's registries declare them.
//!
//! One [`Schema`] serves the unknown-key check, the "did you mean" suggestions, the hint that a
//! key belongs in another table, the spellings `human.channels`, `human.escalate_to` and
//! `[executor] kind` take, the template `tether init` writes (and so the configuration
//! reference), the credentials hidden from a run's record and the order its recorded changes
//! are said in, the settings naming tether's keys, and the tests that the template and a run's
//! record cover every key ([`Schema::settings`]).

use crate::declare::{AgentDecl, KeyKind, Role, TableDecl};
use crate::keys::{
    EXECUTOR, HUMAN, JUDGE, LOOP, LOOP_JUDGE, MODEL, NOTIFY, PLANNING, RUN, SANDBOX, SCHEDULE,
    SERVER, SIDE, STORE,
};
use crate::{Channel, ExecutorKind};

/// The core tables before the declared ones, with their keys.
const CORE_BEFORE: &[(&str, &[&str])] = &[
    ("model", MODEL),
    ("planning", PLANNING),
    ("judge", JUDGE),
    ("loop_judge", LOOP_JUDGE),
    ("side", SIDE),
    ("loop", LOOP),
    ("human", HUMAN),
    ("notify", NOTIFY),
];

/// The core tables after the declared ones, with their keys.
const CORE_AFTER: &[(&str, &[&str])] = &[
    ("executor", EXECUTOR),
    ("server", SERVER),
    ("store", STORE),
    ("sandbox", SANDBOX),
    ("run", RUN),
    ("schedule", SCHEDULE),
];

/// Every table and key `tether.toml` can hold: the core tables and the declared ones, in the
/// template's order (the core tables up to `[notify]`, the declared ones in the order they were
/// handed in, then `[executor]` and the rest).
#[derive(Clone)]
pub struct Schema {
    declared: Vec<&'static TableDecl>,
    agents: Vec<AgentDecl>,
}

impl Schema {
    /// The core tables alone: every integration's table is unknown to it, and `[executor] kind`
    /// knows no agent CLI.
    pub fn core() -> Schema {
        Schema {
            declared: Vec::new(),
            agents: Vec::new(),
        }
    }

    /// This schema with the agent CLIs `agents` spelled in `[executor] kind`, in order. One
    /// whose spelling is taken (by tether's own kinds or an agent before it) is not added.
    #[must_use]
    pub fn with_agents(mut self, agents: impl IntoIterator<Item = AgentDecl>) -> Schema {
        for agent in agents {
            if !self.executor_kinds().iter().any(|(k, _)| *k == agent.kind) {
                self.agents.push(agent);
            }
        }
        self
    }

    /// The agent CLIs `[executor] kind` knows, in order.
    pub fn agents(&self) -> &[AgentDecl] {
        &self.agents
    }

    /// Every `[executor] kind` with its spelling: `builtin`, each agent CLI, `command`, `acp`.
    pub fn executor_kinds(&self) -> Vec<(&'static str, ExecutorKind)> {
        let agents = self
            .agents
            .iter()
            .map(|agent| (agent.kind, ExecutorKind::Cli(agent.kind)));
        let [builtin, command, acp] = ExecutorKind::OWN;
        std::iter::once(builtin)
            .chain(agents)
            .chain([command, acp])
            .collect()
    }

    /// This schema with `tables` declared after its own, in order. A table whose name is
    /// taken is not added: [`Schema::conflicts`] names it (a registry's test checks there is
    /// none).
    #[must_use]
    pub fn with(mut self, tables: impl IntoIterator<Item = &'static TableDecl>) -> Schema {
        for table in tables {
            if !self.has_table(table.name) && table.name != "plan" {
                self.declared.push(table);
            }
        }
        self
    }

    /// What keeps `tables` from being declared together with the core tables: a name taken
    /// twice (or one of tether's own channels'), a key declared twice in a table, a key naming a
    /// variable (`…_env`) not declared as a secret's, two tables read into one type, advice
    /// pointing at a key that names no secret's variable. Each registry's tests check there is
    /// none.
    pub fn conflicts(tables: &[&'static TableDecl]) -> Vec<String> {
        let mut out = Vec::new();
        for (i, table) in tables.iter().enumerate() {
            let core = CORE_BEFORE.iter().chain(CORE_AFTER);
            if core
                .map(|(name, _)| *name)
                .chain(["plan"])
                .any(|n| n == table.name)
                || tables[..i].iter().any(|t| t.name == table.name)
            {
                out.push(format!("[{}] is declared twice", table.name));
            }
            if Channel::OWN.iter().any(|c| c.as_str() == table.name) {
                out.push(format!(
                    "[{}] is the name of one of tether's own channels",
                    table.name
                ));
            }
            for (j, key) in table.keys.iter().enumerate() {
                if table.keys[..j].iter().any(|k| k.name == key.name) {
                    out.push(format!("{}.{} is declared twice", table.name, key.name));
                }
                if key.name.ends_with("_env") && !matches!(key.kind, KeyKind::SecretVar { .. }) {
                    out.push(format!(
                        "{}.{} names a variable but is not declared as a secret's: it would not \
                         be kept from the agent",
                        table.name, key.name
                    ));
                }
            }
            let settings = (table.default)();
            let of_type = settings.as_ref().as_any().type_id();
            if tables[..i]
                .iter()
                .any(|t| (t.default)().as_ref().as_any().type_id() == of_type)
            {
                out.push(format!(
                    "[{}] is read into the type of a table before it: each is read back by its type",
                    table.name
                ));
            }
            if let Some(advice) = table.advice
                && !matches!(
                    table.key(advice).map(|k| k.kind),
                    Some(KeyKind::SecretVar { .. })
                )
            {
                out.push(format!(
                    "{}.{advice} names no secret's variable",
                    table.name
                ));
            }
        }
        out
    }

    /// The declared tables, in order.
    pub fn declared(&self) -> &[&'static TableDecl] {
        &self.declared
    }

    /// The declared table `name`.
    pub fn declared_table(&self, name: &str) -> Option<&'static TableDecl> {
        self.declared.iter().copied().find(|t| t.name == name)
    }

    fn has_table(&self, name: &str) -> bool {
        self.tables().any(|(table, _)| table == name)
    }

    /// Every table with its keys, in the template's order.
    pub(crate) fn tables(&self) -> impl Iterator<Item = (&'static str, Vec<&'static str>)> + '_ {
        let core = |tables: &'static [(&'static str, &'static [&'static str])]| {
            tables.iter().map(|(name, keys)| (*name, keys.to_vec()))
        };
        let declared = self
            .declared
            .iter()
            .map(|t| (t.name, t.keys.iter().map(|k| k.name).collect()));
        core(CORE_BEFORE).chain(declared).chain(core(CORE_AFTER))
    }

    /// The keys of the table `name`, when there is one.
    pub(crate) fn keys_of(&self, name: &str) -> Option<Vec<&'static str>> {
        self.tables()
            .find(|(table, _)| *table == name)
            .map(|(_, keys)| keys)
    }

    /// Keys allowed at the top level: `plan` and the tables.
    pub(crate) fn top_level(&self) -> Vec<&'static str> {
        std::iter::once("plan")
            .chain(self.tables().map(|(table, _)| table))
            .collect()
    }

    /// Every setting as `(table, key)`, the top level's (`plan`) with an empty table, in the
    /// template's order: the one list of what tether.toml can say.
    pub fn settings(&self) -> Vec<(&'static str, &'static str)> {
        let tables = self
            .tables()
            .flat_map(|(table, keys)| keys.into_iter().map(move |key| (table, key)));
        std::iter::once(("", "plan")).chain(tables).collect()
    }

    /// Every setting naming the variable of one of tether's keys, as `(table, key)`: the core
    /// tables' and every key a declared table declares as a secret's variable.
    pub fn key_settings(&self) -> Vec<(&'static str, &'static str)> {
        let declared = self.declared.iter().flat_map(|table| {
            table
                .keys
                .iter()
                .filter(|k| matches!(k.kind, KeyKind::SecretVar { .. }))
                .map(|k| (table.name, k.name))
        });
        let core = crate::key_settings::KEY_SETTINGS
            .iter()
            .map(|setting| (setting.table, setting.key));
        core.chain(declared).collect()
    }

    /// Every channel `human.channels` may list, with its spelling: tether's own, then each
    /// declared channel's and sink's.
    pub fn channels(&self) -> Vec<(&'static str, Channel)> {
        let declared = self.declared.iter().filter_map(|t| t.channel());
        Channel::OWN
            .into_iter()
            .chain(declared)
            .map(|c| (c.as_str(), c))
            .collect()
    }

    /// The declared notice sinks, in order.
    pub(crate) fn sinks(&self) -> Vec<&'static TableDecl> {
        self.declared
            .iter()
            .copied()
            .filter(|t| matches!(t.role, Role::Sink { .. }))
            .collect()
    }

    /// Every spelling `human.escalate_to` takes, quoted: each sink's name, and `name:<arg>`
    /// after it when it takes an argument.
    pub(crate) fn escalation_spellings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for sink in self.sinks() {
            out.push(format!("{:?}", sink.name));
            if let Role::Sink { arg: Some(arg) } = sink.role {
                out.push(format!("\"{}:<{}>\"", sink.name, arg.name));
            }
        }
        out
    }

    /// The tables (other than `current`) that have a key spelled exactly `key`.
    pub(crate) fn tables_with(&self, key: &str, current: &str) -> Vec<&'static str> {
        self.tables()
            .filter(|(table, keys)| *table != current && keys.contains(&key))
            .map(|(table, _)| table)
            .collect()
    }

    /// Where `path` (a table, then a key) comes in the template's order; a table or key the
    /// schema does not know after the known ones.
    pub(crate) fn position(&self, table: &str, key: Option<&str>) -> (usize, usize) {
        let tables = self.top_level();
        let at = tables
            .iter()
            .position(|t| *t == table)
            .unwrap_or(usize::MAX);
        let key_at = key.map_or(0, |key| {
            self.keys_of(table)
                .and_then(|keys| keys.iter().position(|k| *k == key))
                .unwrap_or(usize::MAX)
        });
        (at, key_at)
    }
}

/// Two schemas are the same when they hold the same tables and agents.
impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        let names = |s: &Schema| s.declared.iter().map(|t| t.name).collect::<Vec<_>>();
        names(self) == names(other) && self.agents == other.agents
    }
}

impl Eq for Schema {}

impl Default for Schema {
    fn default() -> Self {
        Schema::core()
    }
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.declared.iter().map(|t| t.name).collect();
        let agents: Vec<&str> = self.agents.iter().map(|a| a.kind).collect();
        f.debug_struct("Schema")
            .field("declared", &names)
            .field("agents", &agents)
            .finish()
    }
}
