//! The settings of the tables integrations declare, as a configuration holds them: each read by
//! its declaration's function ([`crate::TableDecl::read`]) into the integration's own type, kept
//! here without it ([`Integrations`]) and read back typed by the integration
//! ([`crate::Config::integration`]); with each the variables its secrets are named by, which
//! tether-config resolved itself ([`crate::Config::key_vars`] reads them).

use std::sync::Arc;

use toml::de::DeTable;

use crate::declare::{Settings, TableDecl};
use crate::env::Env;
use crate::reader::{Reader, Table};
use crate::table_reader::TableReader;
use crate::{Channel, Schema};

/// The declared tables' settings of one configuration, in the schema's order.
///
/// `Debug` shows each table's settings as its type shows them (secrets redacted); two are equal
/// when they hold the same tables with equal settings and secrets' variables.
#[derive(Clone, Default)]
pub struct Integrations {
    tables: Vec<Read>,
}

/// One declared table, read.
#[derive(Clone)]
struct Read {
    decl: &'static TableDecl,
    settings: Arc<dyn Settings>,
    /// Each key naming a secret's variable, with the variable it names.
    secrets: Vec<(&'static str, Option<String>)>,
}

/// A setting naming the variable of one of tether's keys in a declared table.
pub(crate) struct SecretVar<'c> {
    /// Its table.
    pub(crate) table: &'static str,
    /// Its key.
    pub(crate) key: &'static str,
    /// The variable it names, if any.
    pub(crate) var: Option<&'c str>,
}

impl Integrations {
    /// Every declared table of `schema` with its defaults.
    pub(crate) fn defaults(schema: &Schema) -> Integrations {
        let tables = schema
            .declared()
            .iter()
            .map(|decl| Read {
                decl,
                settings: (decl.default)(),
                secrets: decl
                    .keys
                    .iter()
                    .filter_map(|k| match k.kind {
                        crate::KeyKind::SecretVar { default } => {
                            Some((k.name, default.map(str::to_owned)))
                        }
                        _ => None,
                    })
                    .collect(),
            })
            .collect();
        Integrations { tables }
    }

    /// The settings of type `T`, when a table read holds them.
    pub fn get<T: Settings>(&self) -> Option<&T> {
        self.tables
            .iter()
            .find_map(|read| read.settings.as_ref().as_any().downcast_ref::<T>())
    }

    /// The names of the tables read, in order.
    pub fn tables(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tables.iter().map(|read| read.decl.name)
    }

    /// Every setting naming a secret's variable, with the variable it names.
    pub(crate) fn secret_vars(&self) -> impl Iterator<Item = SecretVar<'_>> {
        self.tables.iter().flat_map(|read| {
            read.secrets.iter().map(|(key, var)| SecretVar {
                table: read.decl.name,
                key,
                var: var.as_deref(),
            })
        })
    }
}

impl PartialEq for Integrations {
    fn eq(&self, other: &Self) -> bool {
        self.tables.len() == other.tables.len()
            && self.tables.iter().zip(&other.tables).all(|(a, b)| {
                a.decl.name == b.decl.name
                    && a.settings.same(b.settings.as_ref())
                    && a.secrets == b.secrets
            })
    }
}

impl std::fmt::Debug for Integrations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(
                self.tables
                    .iter()
                    .map(|read| (read.decl.name, &read.settings)),
            )
            .finish()
    }
}

/// What a channel's table lacks, by channel.
pub(crate) type Lacking = Vec<(Channel, Vec<String>)>;

/// Reads every declared table of the reader's schema from `doc` (a table absent from the file
/// is read too: the environment may configure it), and what each channel's table lacks.
pub(crate) fn read(doc: &DeTable<'_>, r: &mut Reader, env: &dyn Env) -> (Integrations, Lacking) {
    let root = Table {
        path: "",
        entries: doc,
        span: None,
    };
    let mut tables = Vec::new();
    let mut lacking = Vec::new();
    for decl in r.schema.declared().to_vec() {
        let table = r.table(&root, decl.name);
        let mut reader = TableReader::new(r, table, decl, env);
        let settings = (decl.read)(&mut reader);
        let (secrets, lacks) = reader.finish();
        if let Some(channel) = decl.channel()
            && !lacks.is_empty()
        {
            lacking.push((channel, lacks));
        }
        tables.push(Read {
            decl,
            settings,
            secrets,
        });
    }
    (Integrations { tables }, lacking)
}
