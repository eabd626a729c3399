//! The parser: one pass over the lines, tracking code fences and sections.
//!
//! Parsing is total — any text yields a `Plan` — and every irregularity becomes a located
//! `Problem`. That lets `tether plan` and `tether validate` show everything at once, while the
//! patcher refuses to touch a plan that has errors.

use std::collections::HashMap;

use crate::lines::{self, Line};
use crate::model::{Field, Goal, Located, Log, LogEntry, Plan, Status, Subtask};
use crate::problem::{Problem, ProblemKind, Severity};
use crate::syntax;

/// The fields a goal may have, as written in the file.
pub(crate) const FIELDS: [&str; 9] = [
    "status",
    "done_when",
    "verify",
    "failure_modes",
    "ask_before",
    "threshold",
    "budget",
    "network",
    "after",
];

/// What an `after:` line holds, for messages.
const AFTER_EXPECTED: &str =
    "the ids of the goals that must be signed off first, separated by commas";

/// Parses `text`, returning the plan and the line table it was read from.
pub(crate) fn parse(text: &str) -> (Plan, Vec<Line>) {
    let lines = lines::split(text);
    let mut p = Parser::default();
    for (i, line) in lines.iter().enumerate() {
        let content = &text[line.start..line.content_end];
        // A byte-order mark (editors on Windows write one) is not part of the first line.
        let content = if i == 0 {
            content.strip_prefix('\u{feff}').unwrap_or(content)
        } else {
            content
        };
        p.line(i + 1, content);
    }
    let plan = p.finish(lines.len(), lines::dominant(&lines));
    (plan, lines)
}

#[derive(Default)]
struct Parser {
    title: Option<Located<String>>,
    goals: Vec<Goal>,
    log: Option<Log>,
    problems: Vec<Problem>,
    section: Section,
    fence: Option<(u8, usize, usize)>,
    /// The line an open HTML comment block started on.
    comment: Option<usize>,
    /// State of the goal being read.
    cur: GoalState,
}

#[derive(Default, PartialEq, Eq, Clone, Copy)]
enum Section {
    #[default]
    Preamble,
    Goal,
    Log,
    /// A second `## Log` or any other `##` section: kept, not interpreted.
    Other,
}

#[derive(Default)]
struct GoalState {
    /// Which list the following bullet items belong to.
    list: Option<List>,
    /// The line `failure_modes:` was declared on, if it was.
    failure_modes_line: Option<usize>,
    /// First line of each field seen (indexed like `FIELDS`), for duplicate detection.
    seen: [Option<usize>; FIELDS.len()],
}

impl GoalState {
    fn seen(&self, field: &str) -> bool {
        FIELDS
            .iter()
            .position(|f| *f == field)
            .is_some_and(|i| self.seen[i].is_some())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    FailureModes,
    AskBefore,
}

impl Parser {
    fn problem(&mut self, severity: Severity, kind: ProblemKind, line: usize, message: String) {
        let goal = (self.section == Section::Goal).then(|| self.goals.len().saturating_sub(1));
        self.problems.push(Problem {
            severity,
            kind,
            line,
            goal,
            message,
        });
    }

    fn line(&mut self, n: usize, content: &str) {
        if self.comment.is_some() {
            if syntax::closes_comment_block(content) {
                self.comment = None;
            }
            return;
        }
        if let Some((ch, len, _)) = self.fence {
            if let Some((c, l, rest)) = syntax::fence(content)
                && c == ch
                && l >= len
                && rest.trim_ascii().is_empty()
            {
                self.fence = None;
            }
            return;
        }
        if let Some((ch, len, _)) = syntax::fence(content) {
            self.fence = Some((ch, len, n));
            self.end_list();
            return;
        }
        if syntax::opens_comment_block(content) {
            self.comment = Some(n);
            self.end_list();
            return;
        }
        if let Some((level, text)) = syntax::heading(content)
            && level <= 2
        {
            self.close_section(n - 1);
            self.heading(n, level, text);
            return;
        }
        match self.section {
            Section::Goal => self.goal_line(n, content),
            Section::Log => {
                if let Some(item) = syntax::list_item(content)
                    && let Some(log) = self.log.as_mut()
                {
                    log.entries.push(LogEntry {
                        text: item.to_owned(),
                        line: n,
                    });
                }
            }
            Section::Preamble | Section::Other => {}
        }
    }

    fn heading(&mut self, n: usize, level: usize, text: &str) {
        if level == 1 {
            if self.title.is_none() {
                self.title = Some(Located {
                    value: syntax::plan_title(text).to_owned(),
                    line: n,
                });
            }
            self.section = Section::Other;
            return;
        }
        if let Some(title) = syntax::goal_title(text) {
            self.goals.push(Goal {
                title: title.to_owned(),
                heading_line: n,
                end_line: n,
                id: None,
                status: None,
                done_when: None,
                verify: None,
                failure_modes: Vec::new(),
                ask_before: Vec::new(),
                threshold: None,
                budget: None,
                network: None,
                after: None,
                subtasks: Vec::new(),
            });
            self.cur = GoalState::default();
            self.section = Section::Goal;
            if title.is_empty() {
                self.problem(
                    Severity::Error,
                    ProblemKind::EmptyTitle,
                    n,
                    "goal heading has no title; expected `## Goal: <title>`".to_owned(),
                );
            }
        } else if syntax::is_log_heading(text) {
            if let Some(log) = &self.log {
                let first = log.heading_line;
                self.section = Section::Other;
                self.problem(
                    Severity::Error,
                    ProblemKind::SecondLog,
                    n,
                    format!(
                        "a second `## Log` section; the log starts at line {first}, merge them"
                    ),
                );
            } else {
                self.log = Some(Log {
                    heading_line: n,
                    end_line: n,
                    entries: Vec::new(),
                });
                self.section = Section::Log;
            }
        } else {
            self.section = Section::Other;
        }
    }

    /// Ends the current section at line `last` (inclusive) and runs the end-of-goal checks.
    fn close_section(&mut self, last: usize) {
        match self.section {
            Section::Goal => {
                if let Some(g) = self.goals.last_mut() {
                    g.end_line = last.max(g.heading_line);
                }
                self.check_goal();
            }
            Section::Log => {
                if let Some(log) = self.log.as_mut() {
                    log.end_line = last.max(log.heading_line);
                }
            }
            Section::Preamble | Section::Other => {}
        }
    }

    fn end_list(&mut self) {
        self.cur.list = None;
    }

    fn goal_line(&mut self, n: usize, content: &str) {
        if let Some(id) = syntax::id_comment(content) {
            self.end_list();
            return self.id_line(n, id);
        }
        if let Some((checked, text, _)) = syntax::checkbox(content) {
            self.end_list();
            if let Some(g) = self.goals.last_mut() {
                g.subtasks.push(Subtask {
                    text: text.to_owned(),
                    checked,
                    line: n,
                });
            }
            return;
        }
        if let Some(list) = self.cur.list {
            if let Some(item) = syntax::list_item(content) {
                if !item.is_empty() {
                    self.list_item(list, n, item);
                }
                return;
            }
            if content.trim_ascii().is_empty() {
                return;
            }
            self.end_list();
        }
        if let Some((key, value, _)) = syntax::field(content) {
            self.field_line(n, key, value);
        }
    }

    fn list_item(&mut self, list: List, n: usize, item: &str) {
        let Some(g) = self.goals.last_mut() else {
            return;
        };
        let located = Located {
            value: item.to_owned(),
            line: n,
        };
        match list {
            List::FailureModes => g.failure_modes.push(located),
            List::AskBefore => g.ask_before.push(located),
        }
    }

    fn id_line(&mut self, n: usize, id: &str) {
        let existing = self
            .goals
            .last()
            .and_then(|g| g.id.as_ref())
            .map(|l| l.line);
        if let Some(first) = existing {
            return self.problem(
                Severity::Error,
                ProblemKind::SecondId,
                n,
                format!("a second id line in this goal (the first is at line {first}); keep one"),
            );
        }
        if !syntax::valid_id(id) {
            self.problem(
                Severity::Error,
                ProblemKind::InvalidId,
                n,
                format!(
                    "`{id}` is not a valid id; expected letters, digits, `.`, `_` or `-` \
                     (starting with a letter or digit, at most 64 characters)"
                ),
            );
        }
        if let Some(g) = self.goals.last_mut() {
            g.id = Some(Located {
                value: id.to_owned(),
                line: n,
            });
        }
    }

    fn field_line(&mut self, n: usize, key: &str, value: &str) {
        let Some(index) = FIELDS.iter().position(|f| f.eq_ignore_ascii_case(key)) else {
            return self.unknown_key(n, key);
        };
        let name = FIELDS[index];
        if let Some(first) = self.cur.seen[index] {
            return self.problem(
                Severity::Error,
                ProblemKind::DuplicateField,
                n,
                format!("`{name}:` appears twice in this goal (first at line {first}); keep one"),
            );
        }
        self.cur.seen[index] = Some(n);
        let is_list = matches!(name, "failure_modes" | "ask_before");
        if value.is_empty() && !is_list {
            let expected = match name {
                "status" => "one of open, active, done, cancelled",
                "threshold" => "an integer from 0 to 5",
                "verify" => "a shell command",
                "budget" => "amounts such as `400k tokens, $5, 2h`",
                "network" => "on or off",
                "after" => AFTER_EXPECTED,
                _ => "the condition that means the goal is done",
            };
            return self.problem(
                Severity::Error,
                ProblemKind::EmptyField,
                n,
                format!("`{name}:` has no value; expected {expected}"),
            );
        }
        match name {
            "status" => self.status_field(n, value),
            "threshold" => self.threshold_field(n, value),
            "budget" => self.budget_field(n, value),
            "network" => self.network_field(n, value),
            "after" => self.after_field(n, value),
            "done_when" | "verify" => {
                if let Some(g) = self.goals.last_mut() {
                    let located = Some(Located {
                        value: value.to_owned(),
                        line: n,
                    });
                    if name == "verify" {
                        g.verify = located;
                    } else {
                        g.done_when = located;
                    }
                }
            }
            "failure_modes" => {
                self.cur.failure_modes_line = Some(n);
                self.cur.list = Some(List::FailureModes);
                if !value.is_empty() {
                    self.list_item(List::FailureModes, n, value);
                }
            }
            _ => {
                self.cur.list = Some(List::AskBefore);
                for prefix in value
                    .split(',')
                    .map(str::trim_ascii)
                    .filter(|s| !s.is_empty())
                {
                    self.list_item(List::AskBefore, n, prefix);
                }
            }
        }
    }

    fn unknown_key(&mut self, n: usize, key: &str) {
        if key.len() < 4 {
            return;
        }
        let lower = key.to_ascii_lowercase();
        let best = FIELDS
            .iter()
            .map(|f| (syntax::edit_distance(&lower, f), *f))
            .min();
        // A five-letter field (`after`) is one edit from few words but two from many (`later`).
        if let Some((d, f)) = best
            && d <= if f.len() <= 5 { 1 } else { 2 }
        {
            self.problem(
                Severity::Error,
                ProblemKind::UnknownField,
                n,
                format!("unknown field `{key}:`; did you mean `{f}:`?"),
            );
        }
    }

    fn status_field(&mut self, n: usize, raw: &str) {
        let value = raw.parse::<Status>();
        if let Err(e) = &value {
            self.problem(
                Severity::Error,
                ProblemKind::InvalidStatus,
                n,
                e.to_string(),
            );
        }
        if let Some(g) = self.goals.last_mut() {
            g.status = Some(Field {
                invalid: value.is_err().then(|| raw.to_owned()),
                value: value.ok(),
                line: n,
            });
        }
    }

    fn threshold_field(&mut self, n: usize, raw: &str) {
        let value = raw.parse::<u8>().ok().filter(|t| *t <= 5);
        if value.is_none() {
            self.problem(
                Severity::Error,
                ProblemKind::InvalidThreshold,
                n,
                format!("`{raw}` is not a threshold; expected an integer from 0 to 5"),
            );
        }
        if let Some(g) = self.goals.last_mut() {
            g.threshold = Some(Field {
                invalid: value.is_none().then(|| raw.to_owned()),
                value,
                line: n,
            });
        }
    }

    fn network_field(&mut self, n: usize, raw: &str) {
        let value = match raw {
            "on" => Some(true),
            "off" => Some(false),
            _ => {
                self.problem(
                    Severity::Error,
                    ProblemKind::InvalidNetwork,
                    n,
                    format!("`network:` is `{raw}`; expected on or off"),
                );
                None
            }
        };
        if let Some(g) = self.goals.last_mut() {
            g.network = Some(Field {
                invalid: value.is_none().then(|| raw.to_owned()),
                value,
                line: n,
            });
        }
    }

    fn after_field(&mut self, n: usize, raw: &str) {
        let ids: Vec<String> = raw
            .split(',')
            .map(str::trim_ascii)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        if ids.is_empty() {
            return self.problem(
                Severity::Error,
                ProblemKind::EmptyField,
                n,
                format!("`after:` names no goal; expected {AFTER_EXPECTED}"),
            );
        }
        if let Some(g) = self.goals.last_mut() {
            g.after = Some(Located {
                value: ids,
                line: n,
            });
        }
    }

    fn budget_field(&mut self, n: usize, raw: &str) {
        if let Err(e) = tether_budget::parse_budget(raw) {
            self.problem(
                Severity::Error,
                ProblemKind::InvalidBudget,
                n,
                format!("`budget:` does not read: {e}"),
            );
        }
        if let Some(g) = self.goals.last_mut() {
            g.budget = Some(Located {
                value: raw.to_owned(),
                line: n,
            });
        }
    }

    /// The warnings owed by a goal once its section has ended.
    fn check_goal(&mut self) {
        let Some(g) = self.goals.last() else { return };
        let no_fields = self.cur.seen.iter().all(Option::is_none) && g.subtasks.is_empty();
        let missing_id = g.id.is_none();
        let missing_status = g.status.is_none() && !self.cur.seen("status");
        let missing_done_when = g.done_when.is_none() && !self.cur.seen("done_when");
        let empty_failure_modes = g.failure_modes.is_empty();
        let unhappy = missing_id
            || no_fields
            || missing_status
            || missing_done_when
            || (self.cur.failure_modes_line.is_some() && empty_failure_modes);
        if !unhappy {
            return;
        }
        let (line, title) = (g.heading_line, g.title.clone());
        if missing_id {
            let suggestion = syntax::slug(&title);
            self.problem(
                Severity::Warning,
                ProblemKind::MissingId,
                line,
                format!(
                    "goal `{title}` has no `<!-- id: … -->` line; tether adds \
                     `<!-- id: {suggestion} -->` (or a unique variant) before its first patch"
                ),
            );
        }
        if no_fields {
            return self.problem(
                Severity::Warning,
                ProblemKind::NoFields,
                line,
                format!(
                    "goal `{title}` has no fields; expected `status:` and `done_when:` lines \
                     under the heading"
                ),
            );
        }
        if missing_status {
            self.problem(
                Severity::Warning,
                ProblemKind::MissingStatus,
                line,
                format!("goal `{title}` has no `status:` line; it counts as open"),
            );
        }
        if missing_done_when {
            self.problem(
                Severity::Warning,
                ProblemKind::MissingDoneWhen,
                line,
                format!(
                    "goal `{title}` has no `done_when:` line; it cannot be signed off \
                     without one"
                ),
            );
        }
        if let Some(fl) = self.cur.failure_modes_line
            && empty_failure_modes
        {
            self.problem(
                Severity::Warning,
                ProblemKind::EmptyList,
                fl,
                "`failure_modes:` has no `- ` items under it".to_owned(),
            );
        }
    }

    fn finish(mut self, line_count: usize, ending: crate::LineEnding) -> Plan {
        if let Some((_, _, open)) = self.fence {
            self.problem(
                Severity::Error,
                ProblemKind::UnclosedFence,
                open,
                "this code fence is never closed, so everything after it is read as code; \
                 close it with a matching fence line"
                    .to_owned(),
            );
        }
        if let Some(open) = self.comment {
            self.problem(
                Severity::Error,
                ProblemKind::UnclosedComment,
                open,
                "this HTML comment is never closed, so everything after it is hidden; close it \
                 with `-->`"
                    .to_owned(),
            );
        }
        self.close_section(line_count);
        self.duplicate_ids();
        self.problems.extend(crate::after::problems(&self.goals));
        self.problems.sort_by_key(|p| p.line);
        Plan {
            title: self.title,
            goals: self.goals,
            log: self.log,
            line_ending: ending,
            problems: self.problems,
        }
    }

    fn duplicate_ids(&mut self) {
        let mut first: HashMap<&str, (usize, &str)> = HashMap::with_capacity(self.goals.len());
        let mut dups = Vec::new();
        for (i, g) in self.goals.iter().enumerate() {
            let Some(id) = &g.id else { continue };
            if let Some((line, title)) = first.get(id.value.as_str()) {
                dups.push(Problem {
                    severity: Severity::Error,
                    kind: ProblemKind::DuplicateId,
                    line: id.line,
                    goal: Some(i),
                    message: format!(
                        "id `{}` is already used by goal `{title}` at line {line}; ids must be \
                         unique",
                        id.value
                    ),
                });
            } else {
                first.insert(&id.value, (id.line, &g.title));
            }
        }
        self.problems.extend(dups);
    }
}
