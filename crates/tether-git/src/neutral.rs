//! What makes git inert: the environment it gets and the configuration it is given on top of
//! the repository's own, so that no key of any configuration file — the repository's, one the
//! agent planted, one a submodule points to — makes git run a program.
//!
//! git reads configuration from the system file, the user's global file, the repository (and a
//! linked worktree's own file), then the command line, the last winning. tether gives it no
//! system and no global file (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`), removes
//! every `GIT_*` variable of its own environment (`GIT_DIR`, `GIT_CONFIG_PARAMETERS`,
//! `GIT_EXTERNAL_DIFF`, `GIT_SSH_COMMAND`, …) and the editors and pagers, and sets on the
//! command line (through `GIT_CONFIG_COUNT`, whose keys and values need no quoting) every key
//! that names a program ([`FIXED`]), plus the programs of every filter, diff and merge driver
//! the configuration defines ([`crate::drivers`]): attributes (`.gitattributes`, which the
//! agent writes) can only name a driver, and every driver git knows has no program left.

use std::ffi::OsStr;

/// Every key whose value git runs (or that makes git reach another repository or the network),
/// with the value that turns it off: hooks, the file-system monitor, editors, pagers, ssh and
/// proxies, credential helpers, signing programs, external diffs, submodule recursion,
/// transports, and background maintenance.
pub const FIXED: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.attributesFile", "/dev/null"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.pager", "cat"),
    ("core.askPass", ""),
    ("core.sshCommand", ""),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("diff.ignoreSubmodules", "all"),
    ("diff.submodule", "short"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("push.recurseSubmodules", "no"),
    ("protocol.allow", "never"),
    ("gpg.program", ""),
    ("gpg.openpgp.program", ""),
    ("gpg.x509.program", ""),
    ("gpg.ssh.program", ""),
    ("gpg.ssh.defaultKeyCommand", ""),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("push.gpgSign", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
];

/// The keys of a filter, diff or merge driver `<section>.<driver>.<key>` that name a program.
pub const DRIVER_PROGRAMS: &[(&str, &[&str])] = &[
    ("filter", &["clean", "smudge", "process"]),
    ("diff", &["command", "textconv"]),
    ("merge", &["driver"]),
];

/// Variables of tether's own environment that make a program run or a repository be chosen,
/// beyond `GIT_*` (all of which are removed).
const UNSET: &[&str] = &["EDITOR", "VISUAL", "PAGER", "SSH_ASKPASS", "LESSOPEN"];

/// `GIT_*` variables kept: the identity a person set for their commits (no program runs).
const KEPT: &[&str] = &[
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
];

/// The variables every git of tether's gets (`GIT_CONFIG_*` of the command line are added).
pub const SET: &[(&str, &str)] = &[
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_ATTR_NOSYSTEM", "1"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_OPTIONAL_LOCKS", "0"),
];

/// The names of `vars` (an environment) that git must not see.
pub fn removed<'a>(vars: impl Iterator<Item = &'a OsStr>) -> Vec<String> {
    let mut out: Vec<String> = vars
        .filter_map(OsStr::to_str)
        .filter(|name| name.starts_with("GIT_") && !KEPT.contains(name))
        .map(str::to_owned)
        .collect();
    out.extend(UNSET.iter().map(|n| (*n).to_owned()));
    out
}

/// The person's identity variables (`GIT_AUTHOR_NAME`, …) as tether's environment has them: a
/// sandboxed git is given them explicitly.
pub fn kept() -> Vec<(String, String)> {
    KEPT.iter()
        .filter_map(|name| Some(((*name).to_owned(), std::env::var(name).ok()?)))
        .collect()
}

/// The variables that give git `config` as command-line configuration (`GIT_CONFIG_COUNT`,
/// `GIT_CONFIG_KEY_<n>`, `GIT_CONFIG_VALUE_<n>`).
pub fn config_env(config: &[(String, String)]) -> Vec<(String, String)> {
    let mut env = Vec::with_capacity(config.len() * 2 + 1);
    env.push(("GIT_CONFIG_COUNT".to_owned(), config.len().to_string()));
    for (n, (key, value)) in config.iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{n}"), key.clone()));
        env.push((format!("GIT_CONFIG_VALUE_{n}"), value.clone()));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_git_variable_but_the_identity_is_removed() {
        let vars = [
            "GIT_DIR",
            "GIT_CONFIG_PARAMETERS",
            "GIT_EXTERNAL_DIFF",
            "GIT_AUTHOR_NAME",
            "HOME",
        ];
        let out = removed(vars.iter().map(OsStr::new));
        assert!(out.contains(&"GIT_DIR".to_owned()));
        assert!(out.contains(&"GIT_CONFIG_PARAMETERS".to_owned()));
        assert!(out.contains(&"GIT_EXTERNAL_DIFF".to_owned()));
        assert!(out.contains(&"EDITOR".to_owned()));
        assert!(!out.contains(&"GIT_AUTHOR_NAME".to_owned()));
        assert!(!out.contains(&"HOME".to_owned()));
    }

    #[test]
    fn the_configuration_is_numbered() {
        let env = config_env(&[("a.b".into(), "1".into()), ("c.d".into(), String::new())]);
        assert_eq!(
            env,
            [
                ("GIT_CONFIG_COUNT", "2"),
                ("GIT_CONFIG_KEY_0", "a.b"),
                ("GIT_CONFIG_VALUE_0", "1"),
                ("GIT_CONFIG_KEY_1", "c.d"),
                ("GIT_CONFIG_VALUE_1", ""),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
    }
}
