//! The short working `tether.toml` of `tether init --agent`: who does the work, a judge of
//! another vendor than the agent's model, the channels a person at a terminal has, the plan —
//! each line commented, and the way to the full reference last.

use std::fmt::Write as _;

/// The agent a short `tether.toml` is written for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code (`kind = "claude"`).
    Claude,
    /// The Codex CLI (`kind = "codex"`).
    Codex,
    /// The pi coding agent (`kind = "pi"`).
    Pi,
    /// tether's own agent on a `[model]` (`kind = "builtin"`).
    Builtin,
    /// Any agent speaking the Agent Client Protocol, by its program (`kind = "acp"`).
    Acp(String),
}

/// A model vendor a judge (or the built-in agent's model) is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vendor {
    Anthropic,
    OpenAi,
}

impl Vendor {
    /// The vendor as the judge's comment names it: "an OpenAI", "an Anthropic".
    fn article_name(self) -> &'static str {
        match self {
            Vendor::Anthropic => "an Anthropic",
            Vendor::OpenAi => "an OpenAI",
        }
    }

    fn key_var(self) -> &'static str {
        match self {
            Vendor::Anthropic => "ANTHROPIC_API_KEY",
            Vendor::OpenAi => "OPENAI_API_KEY",
        }
    }

    /// The endpoint's lines: api, base_url, model, api_key_env, each with its comment.
    fn endpoint(self, model: &str) -> String {
        let (api, base_url) = match self {
            Vendor::Anthropic => ("anthropic", "https://api.anthropic.com"),
            Vendor::OpenAi => ("openai-chat", "https://api.openai.com/v1"),
        };
        format!(
            "# Its wire protocol, endpoint and model.\n\
             api = \"{api}\"\n\
             base_url = \"{base_url}\"\n\
             model = \"{model}\"\n\
             # The variable holding its key (export it; the key never lives in this file, nor \
             reaches the agent).\n\
             api_key_env = \"{}\"\n",
            self.key_var()
        )
    }

    /// The judge model written for this vendor.
    fn judge_model(self) -> &'static str {
        match self {
            Vendor::Anthropic => "claude-opus-4-5",
            Vendor::OpenAi => "gpt-5",
        }
    }
}

impl Agent {
    /// The vendor of the judge written for this agent, and why it was chosen when that is not
    /// plain from the agent (a comment above `[judge]`).
    fn judge(&self) -> (Vendor, Option<String>) {
        match self {
            Agent::Claude => (Vendor::OpenAi, None),
            Agent::Codex => (Vendor::Anthropic, None),
            Agent::Builtin => (Vendor::OpenAi, None),
            Agent::Pi => (
                Vendor::OpenAi,
                Some(
                    "# pi works on the provider its own settings choose. If that is OpenAI, make \
                     this judge\n# Anthropic's (api = \"anthropic\", base_url = \
                     \"https://api.anthropic.com\",\n# model = \"claude-opus-4-5\", api_key_env = \
                     \"ANTHROPIC_API_KEY\"): tether keeps its judge's key\n# from the agent.\n"
                        .to_owned(),
                ),
            ),
            Agent::Acp(program) => {
                let name = program.rsplit('/').next().unwrap_or(program).to_lowercase();
                if name.contains("claude") {
                    (Vendor::OpenAi, None)
                } else if name.contains("codex") {
                    (Vendor::Anthropic, None)
                } else {
                    (
                        Vendor::Anthropic,
                        Some(
                            "# tether cannot tell which vendor's model this agent uses: if it is \
                             Anthropic's, make\n# the judge OpenAI's (api = \"openai-chat\", \
                             base_url = \"https://api.openai.com/v1\",\n# model = \"gpt-5\", \
                             api_key_env = \"OPENAI_API_KEY\").\n"
                                .to_owned(),
                        ),
                    )
                }
            }
        }
    }

    /// The `[executor]` table (and `[model]` for the built-in agent).
    fn executor(&self) -> String {
        match self {
            Agent::Claude => "[executor]\n\
                 # Who does the work: Claude Code (`claude` on PATH, with your own login and \
                 settings),\n# given tether's tools over MCP.\n\
                 kind = \"claude\"\n"
                .to_owned(),
            Agent::Codex => "[executor]\n\
                 # Who does the work: the Codex CLI (`codex` on PATH, with your own login or \
                 OPENAI_API_KEY),\n# given tether's tools over MCP.\n\
                 kind = \"codex\"\n"
                .to_owned(),
            Agent::Pi => "[executor]\n\
                 # Who does the work: the pi coding agent (`pi` on PATH, with your own settings \
                 and login),\n# given tether's tools over MCP.\n\
                 kind = \"pi\"\n"
                .to_owned(),
            Agent::Builtin => format!(
                "[executor]\n\
                 # Who does the work: tether's own agent, on the model below.\n\
                 kind = \"builtin\"\n\
                 \n\
                 [model]\n\
                 # The built-in agent's model: Anthropic's.\n\
                 {}",
                Vendor::Anthropic.endpoint("claude-sonnet-4-5")
            ),
            Agent::Acp(program) => format!(
                "[executor]\n\
                 # Who does the work: an agent speaking the Agent Client Protocol, given tether's \
                 tools over MCP.\n\
                 kind = \"acp\"\n\
                 # Its program: a name on PATH or a path (its arguments, if any, go in args = \
                 [...]).\n\
                 program = {}\n",
                basic_string(program)
            ),
        }
    }

    /// What the agent is called in the file's first line and the `init` command that wrote it.
    fn names(&self) -> (&str, &'static str) {
        match self {
            Agent::Claude => ("Claude Code", "claude"),
            Agent::Codex => ("the Codex CLI", "codex"),
            Agent::Pi => ("the pi coding agent", "pi"),
            Agent::Builtin => ("tether's built-in agent", "builtin"),
            Agent::Acp(program) => (program.as_str(), "acp"),
        }
    }

    /// The variables whose keys this file reads, in order: what to export before `doctor`.
    pub fn key_vars(&self) -> Vec<&'static str> {
        let mut vars = Vec::new();
        if *self == Agent::Builtin {
            vars.push(Vendor::Anthropic.key_var());
        }
        vars.push(self.judge().0.key_var());
        vars
    }
}

/// A TOML basic string holding `text` exactly.
fn basic_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `text` for a comment line: its control characters (a line break would end the comment, an
/// escape sequence has no place in a file a person reads) written as `\u{…}`.
fn comment_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            let _ = write!(out, "\\u{{{:04X}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// The short working `tether.toml` for `agent`: its executor, a judge of another vendor, the
/// terminal's channels and the plan, every line commented.
pub fn starter(agent: &Agent) -> String {
    let (title, kind) = agent.names();
    let title = comment_text(title);
    let (judge, why) = agent.judge();
    let mut out = String::new();
    let command = match agent {
        // As a shell would take it back, and on one comment line.
        Agent::Acp(program) => comment_text(&format!(
            "tether init --agent acp {}",
            shlex::try_quote(program).unwrap_or_else(|_| program.as_str().into())
        )),
        _ => format!("tether init --agent {kind}"),
    };
    let _ = write!(
        out,
        "# tether.toml for {title}, written by `{command}`.\n\
         # `tether doctor` checks it; every setting not here keeps its default.\n\
         \n\
         # The plan file: the goals, each a contract, and the log.\n\
         plan = \"plan.md\"\n\
         \n\
         {}\
         \n\
         [judge]\n\
         # Who signs a goal off once its verify command passes: {} model, reading the \
         repository.\n# Of another vendor than the agent's: one of its own would share its blind \
         spots.\n\
         {}{}\
         \n\
         [human]\n\
         # Where the agent's questions reach you: this terminal and `tether questions` / `tether \
         answer`\n# (the dashboard, which every run serves, too).\n\
         channels = [\"terminal\", \"cli\"]\n\
         \n\
         # The full reference, every setting commented: tether init --full\n",
        agent.executor(),
        judge.article_name(),
        why.unwrap_or_default(),
        judge.endpoint(judge.judge_model()),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::{Agent, basic_string, starter};

    #[test]
    fn a_program_is_written_as_the_toml_string_of_its_exact_name() {
        assert_eq!(basic_string("my agent"), "\"my agent\"");
        assert_eq!(basic_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000A\"");
    }

    #[test]
    fn any_program_name_gives_a_file_that_parses_with_the_command_to_write_it_again() {
        for program in [
            "new\nline",
            "agent\x1b[2J",
            "npx @zed-industries/claude-code-acp",
            "it's",
        ] {
            let file = starter(&Agent::Acp(program.into()));
            let parsed: toml::Value =
                toml::from_str(&file).unwrap_or_else(|e| panic!("{program:?}: {e}\n{file}"));
            assert_eq!(parsed["executor"]["program"].as_str(), Some(program));
            assert!(!file.contains('\x1b'), "{file}");
        }
        let file = starter(&Agent::Acp("npx @zed-industries/claude-code-acp".into()));
        assert!(
            file.contains("`tether init --agent acp 'npx @zed-industries/claude-code-acp'`"),
            "{file}"
        );
    }

    #[test]
    fn the_judge_is_of_another_vendor_than_the_agent() {
        assert!(starter(&Agent::Claude).contains("api_key_env = \"OPENAI_API_KEY\""));
        assert!(starter(&Agent::Codex).contains("api_key_env = \"ANTHROPIC_API_KEY\""));
        let acp = |p: &str| starter(&Agent::Acp(p.to_owned()));
        assert!(acp("/usr/bin/claude-agent-acp").contains("model = \"gpt-5\""));
        assert!(acp("codex-acp").contains("model = \"claude-opus-4-5\""));
        assert!(acp("my-agent").contains("cannot tell which vendor"));
        assert_eq!(
            Agent::Builtin.key_vars(),
            ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"]
        );
    }

    #[test]
    fn every_line_is_short_and_the_last_names_the_full_reference() {
        for agent in [
            Agent::Claude,
            Agent::Codex,
            Agent::Pi,
            Agent::Builtin,
            Agent::Acp("my-agent".to_owned()),
        ] {
            let text = starter(&agent);
            for line in text.lines() {
                assert!(line.chars().count() <= 100, "{line}");
            }
            assert_eq!(
                text.lines().last(),
                Some("# The full reference, every setting commented: tether init --full")
            );
        }
    }
}
