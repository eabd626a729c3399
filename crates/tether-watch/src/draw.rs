//! Drawing the screen: the runs in their groups on the left, the selected run's header (with
//! its usage as a sparkline) and timeline on the right, and a bottom line that says what the
//! keys do or takes what is typed. It fits 80x24 and needs no mouse; without colour
//! (`NO_COLOR`), reverse video and bold mark what colour would.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line as TextLine, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Sparkline};
use tether_budget::{Unit, format_cost, format_duration, format_tokens};
use tether_human::visible::{Layout as Escaping, escape};
use tether_read::{Group, RunHeader};

use crate::app::{App, Mode};
use crate::model::Selected;
use crate::timeline::Kind;

/// Colours, or none.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    /// Whether to use colour (`NO_COLOR` unset).
    pub color: bool,
}

impl Theme {
    fn fg(self, color: Color) -> Style {
        if self.color {
            Style::default().fg(color)
        } else {
            Style::default()
        }
    }

    fn kind(self, kind: Kind) -> Style {
        match kind {
            Kind::Iteration => self.fg(Color::Cyan).add_modifier(Modifier::BOLD),
            Kind::Tool => self.fg(Color::Gray),
            Kind::Message => self.fg(Color::Blue),
            Kind::Question => self.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Kind::Accepted => self.fg(Color::Green).add_modifier(Modifier::BOLD),
            Kind::Rejected => self.fg(Color::Red).add_modifier(Modifier::BOLD),
            Kind::Run => self.fg(Color::Magenta),
            Kind::Detail => self.fg(Color::DarkGray),
        }
    }
}

/// Draws `app` on `frame` at `now_ms`.
pub fn draw(frame: &mut Frame, app: &App, theme: Theme, now_ms: i64) {
    let [body, bottom] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(1)]).areas(frame.area());
    let list_width = (body.width * 2 / 5).clamp(24, 48);
    let [left, right] =
        Layout::horizontal([Constraint::Length(list_width), Constraint::Min(20)]).areas(body);
    runs(frame, app, theme, left);
    match &app.view.selected {
        Some(sel) => run(frame, app, sel, theme, right, now_ms),
        None => frame.render_widget(
            Paragraph::new(
                "No runs yet in this workspace: start one with tether ralph or tether run.",
            )
            .wrap(ratatui::widgets::Wrap { trim: true })
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(" tether watch "),
            ),
            right,
        ),
    }
    frame.render_widget(Paragraph::new(bottom_line(app, theme)), bottom);
}

/// The runs, group by group.
fn runs(frame: &mut Frame, app: &App, theme: Theme, area: Rect) {
    let mut lines = Vec::new();
    let mut selected_at = 0;
    for (group, rows) in &app.view.groups {
        let style = match group {
            Group::NeedsInput => theme.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            _ => Style::default().add_modifier(Modifier::BOLD),
        };
        lines.push(TextLine::from(Span::styled(
            format!("{} ({})", group.title(), rows.len()),
            style,
        )));
        for row in rows {
            let chosen = app.selected.as_ref() == Some(&row.header.id);
            if chosen {
                selected_at = lines.len();
            }
            let mark = if chosen { "▸ " } else { "  " };
            let text = format!(
                "{mark}{} {}",
                short_id(row.header.id.as_str()),
                clean(&row.header.objective)
            );
            let style = if chosen {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            lines.push(TextLine::from(Span::styled(text, style)));
            if let Some(q) = &row.question {
                lines.push(TextLine::from(Span::styled(
                    format!("    ? {}", clean(&q.question)),
                    theme.fg(Color::Yellow),
                )));
            }
        }
    }
    if lines.is_empty() {
        lines.push(TextLine::from("no runs yet"));
    }
    // Keep the selected run in sight.
    let height = usize::from(area.height.saturating_sub(2));
    let top = selected_at.saturating_sub(height.saturating_sub(2));
    let block = Block::default().borders(Borders::ALL).title(" Runs ");
    frame.render_widget(
        Paragraph::new(lines).block(block).scroll((to_u16(top), 0)),
        area,
    );
}

/// The selected run: header, sparkline, timeline.
fn run(frame: &mut Frame, app: &App, sel: &Selected, theme: Theme, area: Rect, now_ms: i64) {
    let [head, spark, timeline] = Layout::vertical([
        Constraint::Length(5),
        Constraint::Length(2),
        Constraint::Min(3),
    ])
    .areas(area);
    let h = &sel.header;
    let state_style = match Group::of(h) {
        Group::NeedsInput => theme.fg(Color::Yellow).add_modifier(Modifier::BOLD),
        Group::Running => theme.fg(Color::Green),
        Group::Paused => theme.fg(Color::Magenta),
        Group::Done => Style::default(),
    };
    let (spent, left) = usage(h, now_ms);
    let head_lines = vec![
        TextLine::from(Span::styled(state(h), state_style)),
        TextLine::from(format!("{} · {spent}", iteration(h))),
        TextLine::from(left),
    ];
    let title = format!(" {} {} ", h.id, h.kind.as_str());
    frame.render_widget(
        Paragraph::new(head_lines).block(Block::default().borders(Borders::ALL).title(title)),
        head,
    );
    let tokens: Vec<u64> = sel
        .series
        .iter()
        .map(tether_read::IterationUsage::tokens)
        .collect();
    let shown = tokens
        .len()
        .saturating_sub(usize::from(spark.width.saturating_sub(14)));
    let [label, bars] =
        Layout::horizontal([Constraint::Length(14), Constraint::Min(4)]).areas(spark);
    frame.render_widget(
        Paragraph::new(format!(
            " tokens/iter {}",
            if tokens.is_empty() { "-" } else { "" }
        )),
        label,
    );
    frame.render_widget(
        Sparkline::default()
            .data(&tokens[shown..])
            .style(theme.fg(Color::Cyan)),
        bars,
    );
    timeline_pane(frame, app, sel, theme, timeline);
}

/// The timeline, scrolled as the person asked (by whole lines, from its end), each line wrapped
/// to the pane's width, the line a search found marked.
fn timeline_pane(frame: &mut Frame, app: &App, sel: &Selected, theme: Theme, area: Rect) {
    let height = usize::from(area.height.saturating_sub(2));
    let width = usize::from(area.width.saturating_sub(2)).max(12);
    let total = sel.lines.len();
    let scroll = app.scroll.min(total.saturating_sub(1));
    let end = total - scroll;
    // From the last line shown upwards, until the pane is full.
    let mut rows: Vec<TextLine> = Vec::new();
    for at in (0..end).rev() {
        if rows.len() >= height {
            break;
        }
        let Some(line) = sel.lines.get(at) else {
            continue;
        };
        let mut style = theme.kind(line.kind);
        if app.found == Some(at) {
            style = style.add_modifier(Modifier::REVERSED);
        }
        let chunks = wrap(&line.text, width - 9);
        for (i, chunk) in chunks.into_iter().enumerate().rev() {
            let stamp = if i == 0 {
                format!("{:>8} ", line.at)
            } else {
                " ".repeat(9)
            };
            rows.push(TextLine::from(vec![
                Span::styled(stamp, theme.fg(Color::DarkGray)),
                Span::styled(chunk, style),
            ]));
        }
    }
    rows.truncate(height);
    rows.reverse();
    let title = if scroll > 0 {
        format!(" Timeline (↑{scroll}) ")
    } else {
        " Timeline ".to_owned()
    };
    frame.render_widget(
        Paragraph::new(rows).block(Block::default().borders(Borders::ALL).title(title)),
        area,
    );
}

/// `text` cut into pieces of at most `width` characters, at a space where there is one.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut rest: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    while rest.len() > width {
        let cut = rest[..=width]
            .iter()
            .rposition(|c| *c == ' ')
            .filter(|at| *at > 0)
            .unwrap_or(width);
        out.push(rest[..cut].iter().collect::<String>().trim_end().to_owned());
        rest.drain(..cut);
        while rest.first() == Some(&' ') {
            rest.remove(0);
        }
    }
    out.push(rest.into_iter().collect());
    out
}

/// The bottom line: what is being typed, the last status, or the keys.
fn bottom_line(app: &App, theme: Theme) -> TextLine<'static> {
    let prompt = |label: &str, text: &str| {
        TextLine::from(vec![
            Span::styled(
                label.to_owned(),
                theme.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            ),
            Span::raw(format!("{text}▏")),
        ])
    };
    match &app.mode {
        Mode::Answer(text) => {
            let options = app.question().map_or(0, |q| q.options.len());
            let label = if options > 0 {
                format!("answer (1-{options} picks an option, or type; Esc: back): ")
            } else {
                "answer (Enter sends, Esc: back): ".to_owned()
            };
            prompt(&label, text)
        }
        Mode::Search(text) => prompt("search: ", text),
        Mode::Say(text) => prompt("say to the agent: ", text),
        Mode::AddIterations(text) => prompt("add iterations to its budget (a number): ", text),
        Mode::ConfirmCancel => TextLine::from(Span::styled(
            "cancel this run? y: yes, any other key: no",
            theme.fg(Color::Red).add_modifier(Modifier::BOLD),
        )),
        Mode::Normal if !app.status.is_empty() => TextLine::from(clean(&app.status)),
        Mode::Normal => TextLine::from(
            "↑↓ run  Enter answer  / find  e export  p pause  c cancel  s say  + iter  q quit",
        ),
    }
}

/// What the run is doing, as a person needs to know it: a run waiting for a person never reads
/// as working.
fn state(h: &RunHeader) -> String {
    match Group::of(h) {
        Group::NeedsInput if h.pending_questions > 0 => format!(
            "waits for you ({} question{})",
            h.pending_questions,
            if h.pending_questions == 1 { "" } else { "s" }
        ),
        Group::NeedsInput => format!("stopped for you ({})", h.status.as_str().replace('_', " ")),
        Group::Running => "working".to_owned(),
        Group::Paused if h.orphaned => "stopped: no process drives it".to_owned(),
        Group::Paused | Group::Done => h.status.as_str().replace('_', " "),
    }
}

/// `iteration 3 of 20` (or `3, no limit`).
fn iteration(h: &RunHeader) -> String {
    let n = h.in_progress.unwrap_or(h.iteration);
    match h.max_iterations.filter(|m| *m > 0) {
        Some(max) => format!("iteration {n} of {max}"),
        None => format!("iteration {n}, no limit"),
    }
}

/// What the run spent (`12.3k tokens · $0.42`), and what is left with the time since it began
/// (`left: 17 iterations, $4.58 · began 5m 12s ago`).
fn usage(h: &RunHeader, now_ms: i64) -> (String, String) {
    let tokens = h.usage.tokens() + h.judge_usage.tokens() + h.loop_judge_usage.tokens();
    let mut spent = format!("{} tokens", format_tokens(tokens));
    if let Some(cost) = Some(h.spent.get(Unit::CostUsd)).filter(|c| *c > 0.0) {
        spent.push_str(&format!(" · {}", format_cost(cost)));
    }
    let mut left = Vec::new();
    if let Some(max) = h.max_iterations.filter(|m| *m > 0) {
        left.push(format!("{} iterations", max.saturating_sub(h.budget_used)));
    }
    for unit in [Unit::Tokens, Unit::CostUsd, Unit::Duration] {
        if let Some(limit) = h.limits.get(unit) {
            left.push(unit.format((limit - h.spent.get(unit)).max(0.0)));
        }
    }
    let secs = u64::try_from(now_ms.saturating_sub(h.created_at_ms) / 1000).unwrap_or(0);
    let began = format!("began {} ago", format_duration(secs));
    let left = if left.is_empty() {
        format!("no budget set · {began}")
    } else {
        format!("left: {} · {began}", left.join(", "))
    };
    (spent, left)
}

/// One line of text from an agent, a model or a person, escaped.
fn clean(text: &str) -> String {
    escape(text.trim(), Escaping::OneLine).into_owned()
}

/// The end of a run's id (`…3f9a2c`), enough to tell runs apart in the list; the header shows
/// the whole id.
fn short_id(id: &str) -> String {
    let chars: Vec<char> = id.chars().collect();
    let tail: String = chars[chars.len().saturating_sub(6)..].iter().collect();
    format!("…{tail}")
}

fn to_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}
