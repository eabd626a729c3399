//! Charts drawn by the server as inline SVG (no script, no library): a run's tokens and cost per
//! iteration, its sign-off verdicts over time, and the runs list's sparkline of tokens per
//! iteration. Every number is computed here; every text goes through `maud`, which escapes it.
//! Each chart is an image with words: `role="img"`, a `<title>` saying what it shows and its
//! largest value, a `<desc>`, and a `<title>` on every bar and mark (the browser's tooltip).
//! The colours are the stylesheet's (`.chart …` in `app.css`), so dark mode applies.

use maud::{Markup, html};
use tether_budget::{format_cost, format_tokens};
use tether_read::IterationUsage;
use tether_store::{VerdictKind, VerdictRecord};

use super::runs::short;
use super::text;
use super::time::absolute;

/// The most bars a chart draws: longer series are drawn in groups of consecutive iterations.
pub const MAX_BARS: usize = 120;
/// The most bars a sparkline draws.
pub const SPARK_BARS: usize = 40;
/// The most verdicts the verdict chart marks (the newest).
pub const MAX_MARKS: usize = 400;
/// The most goals given a lane of their own; the others share the last one.
const MAX_LANES: usize = 8;

/// The width of a chart's `viewBox`.
pub const WIDTH: f64 = 640.0;
/// Left of the plot: room for the value labels.
const LEFT: f64 = 64.0;
/// Right of the plot.
const RIGHT: f64 = 12.0;
/// Above the plot.
pub const TOP: f64 = 14.0;
/// The plot's height in a bar chart.
pub const PLOT: f64 = 150.0;
/// Below the plot: room for the iteration labels.
const BOTTOM: f64 = 34.0;
/// A verdict lane's height.
const LANE: f64 = 26.0;

/// A sparkline's `viewBox`.
pub const SPARK_W: f64 = 120.0;
/// A sparkline's height.
pub const SPARK_H: f64 = 24.0;

/// A coordinate, as SVG reads it (one decimal).
fn px(v: f64) -> String {
    let v = if v.is_finite() { v } else { 0.0 };
    let text = format!("{v:.1}");
    text.strip_suffix(".0").map_or(text.clone(), str::to_owned)
}

/// A count of u64 as f64 (exact enough for a picture).
#[allow(clippy::cast_precision_loss)]
fn f(n: u64) -> f64 {
    n as f64
}

/// `v` of `max` as a height of at most `full` (0 when nothing is drawn).
fn scaled(v: f64, max: f64, full: f64) -> f64 {
    if max.is_nan() || max <= 0.0 || !v.is_finite() || v <= 0.0 {
        return 0.0;
    }
    (v / max * full).clamp(0.0, full)
}

/// A cost as drawn: unknown, negative or not a number count as nothing.
fn cost(c: Option<f64>) -> Option<f64> {
    c.filter(|c| c.is_finite() && *c >= 0.0)
}

/// One bar: one iteration, or a group of consecutive ones.
#[derive(Debug, Clone, PartialEq)]
struct Bar {
    first: u32,
    last: u32,
    agent: u64,
    judge: u64,
    cost: Option<f64>,
    failed: bool,
}

impl Bar {
    fn tokens(&self) -> u64 {
        self.agent.saturating_add(self.judge)
    }

    /// `iteration 7`, `iterations 101–125`.
    fn which(&self) -> String {
        if self.first == self.last {
            format!("iteration {}", self.first)
        } else {
            format!("iterations {}–{}", self.first, self.last)
        }
    }
}

/// The series in at most `most` bars: consecutive iterations added up when there are more.
fn bars(series: &[IterationUsage], most: usize) -> Vec<Bar> {
    let per = series.len().div_ceil(most.max(1)).max(1);
    series
        .chunks(per)
        .filter_map(|group| {
            let first = group.first()?;
            let last = group.last()?;
            let mut bar = Bar {
                first: first.n,
                last: last.n,
                agent: 0,
                judge: 0,
                cost: None,
                failed: false,
            };
            for it in group {
                bar.agent = bar.agent.saturating_add(it.agent_tokens);
                bar.judge = bar.judge.saturating_add(it.judge_tokens);
                for c in [cost(it.agent_cost_usd), cost(it.judge_cost_usd)]
                    .into_iter()
                    .flatten()
                {
                    // Past what f64 holds, the most it holds.
                    let sum = bar.cost.unwrap_or(0.0) + c;
                    bar.cost = Some(if sum.is_finite() { sum } else { f64::MAX });
                }
                bar.failed |= it.failed;
            }
            Some(bar)
        })
        .collect()
}

/// The bar with the most of `value` (the first of equals).
fn most<T: PartialOrd + Copy>(bars: &[Bar], value: impl Fn(&Bar) -> T) -> Option<(&Bar, T)> {
    let mut best: Option<(&Bar, T)> = None;
    for b in bars {
        let v = value(b);
        if best.is_none_or(|(_, m)| v > m) {
            best = Some((b, v));
        }
    }
    best
}

/// `12 iterations` or `3000 iterations in 120 bars of 25`.
fn counted(series: &[IterationUsage], bars: &[Bar]) -> String {
    let n = series.len();
    let its = if n == 1 { "iteration" } else { "iterations" };
    if bars.len() < n {
        let per = n.div_ceil(bars.len().max(1));
        format!("{n} {its} in {} bars of {per}", bars.len())
    } else {
        format!("{n} {its}")
    }
}

/// The x of bar `i` of `n` and its width, in the plot.
fn slot(i: usize, n: usize) -> (f64, f64) {
    let step = (WIDTH - LEFT - RIGHT) / f(n.max(1) as u64);
    let gap = (step * 0.2).min(4.0);
    (LEFT + step * f(i as u64) + gap / 2.0, (step - gap).max(0.5))
}

/// The frame of a bar chart: the value axis with its top and half labels, the iteration axis
/// with its first and last labels, and the axes' names.
fn frame(bars: &[Bar], top_label: &str, half_label: &str, unit: &str) -> Markup {
    let base = TOP + PLOT;
    let first = bars.first().map_or(0, |b| b.first);
    let last = bars.last().map_or(0, |b| b.last);
    html! {
        g.axis aria-hidden="true" {
            line.grid x1=(px(LEFT)) x2=(px(WIDTH - RIGHT)) y1=(px(TOP)) y2=(px(TOP)) {}
            line.grid x1=(px(LEFT)) x2=(px(WIDTH - RIGHT)) y1=(px(TOP + PLOT / 2.0)) y2=(px(TOP + PLOT / 2.0)) {}
            line.baseline x1=(px(LEFT)) x2=(px(WIDTH - RIGHT)) y1=(px(base)) y2=(px(base)) {}
            text.label x=(px(LEFT - 6.0)) y=(px(TOP + 4.0)) text-anchor="end" { (top_label) }
            text.label x=(px(LEFT - 6.0)) y=(px(TOP + PLOT / 2.0 + 4.0)) text-anchor="end" { (half_label) }
            text.label x=(px(LEFT - 6.0)) y=(px(base + 4.0)) text-anchor="end" { "0" }
            text.label x=(px(LEFT)) y=(px(base + 16.0)) text-anchor="start" { (first) }
            @if last != first {
                text.label x=(px(WIDTH - RIGHT)) y=(px(base + 16.0)) text-anchor="end" { (last) }
            }
            text.name x=(px(LEFT + (WIDTH - LEFT - RIGHT) / 2.0)) y=(px(base + 30.0)) text-anchor="middle" { "iteration" }
            text.name x="12" y=(px(TOP + PLOT / 2.0)) text-anchor="middle" transform=(format!("rotate(-90 12 {})", px(TOP + PLOT / 2.0))) { (unit) }
        }
    }
}

/// The `<svg>` of a chart: an image whose title and description say what it shows.
fn svg(id: &str, height: f64, title: &str, desc: &str, body: Markup) -> Markup {
    html! {
        svg.chart-svg id=(id) xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {} {}", px(WIDTH), px(height)))
            role="img" aria-labelledby=(format!("{id}-title")) aria-describedby=(format!("{id}-desc")) preserveAspectRatio="xMinYMin meet" {
            title id=(format!("{id}-title")) { (title) }
            desc id=(format!("{id}-desc")) { (desc) }
            (body)
        }
    }
}

/// Tokens per iteration: one bar each (or per group of iterations, past [`MAX_BARS`]), the
/// agent's tokens below and the judges' stacked on them. `None` for an empty series.
pub fn tokens_chart(series: &[IterationUsage]) -> Option<Markup> {
    let bars = bars(series, MAX_BARS);
    let (top, max) = most(&bars, Bar::tokens)?;
    let title = if max == 0 {
        format!(
            "Tokens per iteration: {}, none used yet",
            counted(series, &bars)
        )
    } else {
        format!(
            "Tokens per iteration: {}, most {} at {}",
            counted(series, &bars),
            format_tokens(max),
            top.which()
        )
    };
    let agent: u64 = bars.iter().fold(0, |a, b| a.saturating_add(b.agent));
    let judge: u64 = bars.iter().fold(0, |a, b| a.saturating_add(b.judge));
    let desc = format!(
        "A bar per {}; the agent's tokens ({} in all) below, the judges' ({} in all) stacked above.",
        if bars.len() < series.len() {
            "group of iterations"
        } else {
            "iteration"
        },
        format_tokens(agent),
        format_tokens(judge)
    );
    let base = TOP + PLOT;
    let body = html! {
        (frame(&bars, &format_tokens(max), &format_tokens(max / 2), "tokens"))
        g.bars {
            @for (i, b) in bars.iter().enumerate() {
                @let (x, w) = slot(i, bars.len());
                @let whole = scaled(f(b.tokens()), f(max), PLOT);
                @let low = scaled(f(b.agent), f(max), PLOT).min(whole);
                g.bar.failed[b.failed] {
                    title {
                        (b.which()) ": " (format_tokens(b.tokens())) " tokens (agent "
                        (format_tokens(b.agent)) ", judges " (format_tokens(b.judge)) ")"
                        @if b.failed { ", failed" }
                    }
                    rect.agent x=(px(x)) y=(px(base - low)) width=(px(w)) height=(px(low)) {}
                    rect.judge x=(px(x)) y=(px(base - whole)) width=(px(w)) height=(px(whole - low)) {}
                }
            }
        }
    };
    Some(svg(
        "chart-tokens",
        TOP + PLOT + BOTTOM,
        &title,
        &desc,
        body,
    ))
}

/// Cost per iteration, agent and judges together; `None` when no cost is known.
pub fn cost_chart(series: &[IterationUsage]) -> Option<Markup> {
    let bars = bars(series, MAX_BARS);
    if bars.iter().all(|b| b.cost.is_none()) {
        return None;
    }
    let (top, max) = most(&bars, |b| b.cost.unwrap_or(0.0))?;
    // Saturating, as each bar's sum is: costs near f64's largest must not add up to infinity.
    let total = bars
        .iter()
        .filter_map(|b| b.cost)
        .fold(0.0, |sum, c| (sum + c).min(f64::MAX));
    let title = format!(
        "Cost per iteration: {}, most {} at {}",
        counted(series, &bars),
        format_cost(max),
        top.which()
    );
    let desc = format!(
        "A bar per {}; {} in all, agent and judges together.",
        if bars.len() < series.len() {
            "group of iterations"
        } else {
            "iteration"
        },
        format_cost(total)
    );
    let base = TOP + PLOT;
    let body = html! {
        (frame(&bars, &format_cost(max), &format_cost(max / 2.0), "US dollars"))
        g.bars {
            @for (i, b) in bars.iter().enumerate() {
                @let (x, w) = slot(i, bars.len());
                @let h = scaled(b.cost.unwrap_or(0.0), max, PLOT);
                g.bar {
                    title {
                        (b.which()) ": "
                        @match b.cost { Some(c) => { (format_cost(c)) }, None => { "cost not known" } }
                    }
                    rect.cost x=(px(x)) y=(px(base - h)) width=(px(w)) height=(px(h)) {}
                }
            }
        }
    };
    Some(svg("chart-cost", TOP + PLOT + BOTTOM, &title, &desc, body))
}

/// A sign-off verdict, as the verdict chart marks it.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictMark {
    /// When it was recorded (ms since the epoch).
    pub at_ms: i64,
    /// The goal.
    pub goal: String,
    /// Which attempt (from 1).
    pub attempt: u32,
    /// What it decided.
    pub kind: VerdictKind,
}

impl From<&VerdictRecord> for VerdictMark {
    fn from(v: &VerdictRecord) -> VerdictMark {
        VerdictMark {
            at_ms: v.created_at_ms,
            goal: v.decision.goal_id.clone(),
            attempt: v.decision.attempt,
            kind: v.decision.kind,
        }
    }
}

/// How a verdict is drawn: accepted, rejected (verify or the judge), ruled out (the judge found
/// it impossible or blocked on a person), or not judged (the judge was unavailable).
fn look(kind: VerdictKind) -> (&'static str, &'static str) {
    match kind {
        VerdictKind::Accepted => ("accept", "accepted"),
        VerdictKind::VerifyFailed => ("reject", "rejected: verify failed"),
        VerdictKind::JudgeRejected => ("reject", "rejected by the judge"),
        VerdictKind::JudgeUnavailable => ("unavailable", "rejected: the judge was unavailable"),
        VerdictKind::JudgeImpossible => ("ruled-out", "ruled out: the judge found it impossible"),
        VerdictKind::JudgeBlocked => ("ruled-out", "ruled out: blocked on a person"),
    }
}

/// The mark of one verdict at `(x, y)`: a circle for an accept, a square for a reject, a
/// diamond for a ruling out, a ring when the judge was unavailable (shapes, not only colours).
fn mark(class: &str, x: f64, y: f64) -> Markup {
    let r = 6.0;
    html! {
        @match class {
            "accept" => { circle.mark.accept cx=(px(x)) cy=(px(y)) r=(px(r)) {} }
            "reject" => { rect.mark.reject x=(px(x - r)) y=(px(y - r)) width=(px(2.0 * r)) height=(px(2.0 * r)) {} }
            "ruled-out" => {
                polygon.mark.ruled-out points=(format!("{},{} {},{} {},{} {},{}",
                    px(x), px(y - r - 1.0), px(x + r + 1.0), px(y), px(x), px(y + r + 1.0), px(x - r - 1.0), px(y))) {}
            }
            _ => { circle.mark.unavailable cx=(px(x)) cy=(px(y)) r=(px(r - 1.0)) {} }
        }
    }
}

/// The sign-off verdicts over time, from `from_ms` (the run's start) to `to_ms`: a lane per
/// goal, a mark per verdict (the newest [`MAX_MARKS`]). `None` when there is none.
pub fn verdicts_chart(marks: &[VerdictMark], from_ms: i64, to_ms: i64) -> Option<Markup> {
    if marks.is_empty() {
        return None;
    }
    let shown = &marks[marks.len().saturating_sub(MAX_MARKS)..];
    let mut goals: Vec<&str> = Vec::new();
    for m in shown {
        if !goals.contains(&m.goal.as_str()) {
            goals.push(&m.goal);
        }
    }
    let shared = goals.len() > MAX_LANES;
    let lanes = goals.len().min(MAX_LANES);
    let lane_of = |goal: &str| {
        goals
            .iter()
            .position(|g| *g == goal)
            .map_or(lanes - 1, |i| i.min(lanes - 1))
    };
    let from = shown
        .iter()
        .map(|m| m.at_ms)
        .min()
        .map_or(from_ms, |m| m.min(from_ms));
    let to = shown
        .iter()
        .map(|m| m.at_ms)
        .max()
        .map_or(to_ms, |m| m.max(to_ms));
    let span = to.saturating_sub(from);
    let plot_w = WIDTH - LEFT - RIGHT - 16.0;
    let x_of = |at: i64| {
        if span <= 0 {
            LEFT + 8.0 + plot_w / 2.0
        } else {
            #[allow(clippy::cast_precision_loss)]
            let at = (at.saturating_sub(from)) as f64 / span as f64;
            LEFT + 8.0 + (at * plot_w).clamp(0.0, plot_w)
        }
    };
    let plot_h = LANE * f(lanes as u64);
    // The title says what the run's verdicts were, all of them; the plot shows the newest.
    let count = |class: &str| marks.iter().filter(|m| look(m.kind).0 == class).count();
    let mut all_goals: Vec<&str> = Vec::new();
    for m in marks {
        if !all_goals.contains(&m.goal.as_str()) {
            all_goals.push(&m.goal);
        }
    }
    let (accepted, rejected, ruled, unjudged) = (
        count("accept"),
        count("reject"),
        count("ruled-out"),
        count("unavailable"),
    );
    let n = marks.len();
    let mut title = format!(
        "Sign-off verdicts over time: {n} {} on {} {}, {accepted} accepted, {rejected} rejected",
        if n == 1 { "verdict" } else { "verdicts" },
        all_goals.len(),
        if all_goals.len() == 1 {
            "goal"
        } else {
            "goals"
        },
    );
    if ruled > 0 {
        title.push_str(&format!(", {ruled} ruled out"));
    }
    if unjudged > 0 {
        title.push_str(&format!(", {unjudged} with the judge unavailable"));
    }
    if n > shown.len() {
        title.push_str(&format!(" (the newest {} shown)", shown.len()));
    }
    let desc = format!(
        "A lane per goal, time from {} to {}; a circle for an accept, a square for a reject, a \
         diamond for a goal ruled out, a ring when the judge was unavailable{}.",
        absolute(from),
        absolute(to),
        if n > shown.len() {
            format!("; the newest {} shown", shown.len())
        } else {
            String::new()
        }
    );
    let base = TOP + plot_h;
    let body = html! {
        g.axis aria-hidden="true" {
            @for (i, g) in goals.iter().take(lanes).enumerate() {
                @let y = TOP + LANE * (f(i as u64) + 0.5);
                line.grid x1=(px(LEFT)) x2=(px(WIDTH - RIGHT)) y1=(px(y)) y2=(px(y)) {}
                text.label x=(px(LEFT - 6.0)) y=(px(y + 4.0)) text-anchor="end" {
                    @if shared && i == lanes - 1 { "others" } @else { (text(&short(g, 8))) }
                }
            }
            line.baseline x1=(px(LEFT)) x2=(px(WIDTH - RIGHT)) y1=(px(base)) y2=(px(base)) {}
            text.label x=(px(LEFT)) y=(px(base + 16.0)) text-anchor="start" { (absolute(from)) }
            @if span > 0 {
                text.label x=(px(WIDTH - RIGHT)) y=(px(base + 16.0)) text-anchor="end" { (absolute(to)) }
            }
            text.name x=(px(LEFT + (WIDTH - LEFT - RIGHT) / 2.0)) y=(px(base + 30.0)) text-anchor="middle" { "time (UTC)" }
        }
        g.marks {
            @for m in shown {
                @let (class, words) = look(m.kind);
                @let y = TOP + LANE * (f(lane_of(&m.goal) as u64) + 0.5);
                g.verdict {
                    title { (text(&m.goal)) ", attempt " (m.attempt) ": " (words) " (" (absolute(m.at_ms)) ")" }
                    (mark(class, x_of(m.at_ms), y))
                }
            }
        }
    };
    Some(svg("chart-verdicts", base + BOTTOM, &title, &desc, body))
}

/// The legend of the charts: what each colour and shape is.
fn legend(usage: bool, verdicts: bool) -> Markup {
    html! {
        ul.legend {
            @if usage {
                li { span.swatch.agent {} "agent" }
                li { span.swatch.judge {} "judges" }
            }
            @if verdicts {
                li { span.swatch.accept {} "accepted" }
                li { span.swatch.reject {} "rejected" }
                li { span.swatch.ruled-out {} "ruled out" }
                li { span.swatch.unavailable {} "judge unavailable" }
            }
        }
    }
}

/// The run page's charts (`#run-charts`, replaced live): tokens and cost per iteration and, for
/// a goal run, its sign-off verdicts over time, from `from_ms` to `to_ms`.
pub fn run_charts(
    series: &[IterationUsage],
    verdicts: Option<&[VerdictMark]>,
    from_ms: i64,
    to_ms: i64,
) -> Markup {
    let tokens = tokens_chart(series);
    let cost = cost_chart(series);
    let decided = verdicts.and_then(|v| verdicts_chart(v, from_ms, to_ms));
    html! {
        section #run-charts .charts aria-labelledby="charts-title" {
            h2 #charts-title { "Usage and sign-offs" }
            @if let Some(chart) = tokens {
                figure.chart {
                    (chart)
                    figcaption { "Tokens per iteration" }
                }
            } @else {
                p.empty { "No iterations yet: the charts come with the first." }
            }
            @if let Some(chart) = cost {
                figure.chart {
                    (chart)
                    figcaption { "Cost per iteration" }
                }
            }
            @if let Some(chart) = &decided {
                figure.chart {
                    (chart)
                    figcaption { "Sign-off verdicts over time" }
                }
            } @else if verdicts.is_some() {
                p.empty { "No sign-off attempts yet." }
            }
            @if tokens_known(series) || decided.is_some() {
                (legend(tokens_known(series), decided.is_some()))
            }
        }
    }
}

fn tokens_known(series: &[IterationUsage]) -> bool {
    !series.is_empty()
}

/// The runs list's sparkline: tokens per iteration in a tiny image (at most [`SPARK_BARS`]
/// bars), saying in words what it shows; nothing for an empty series.
pub fn sparkline(series: &[IterationUsage]) -> Markup {
    let bars = bars(series, SPARK_BARS);
    let Some((top, max)) = most(&bars, Bar::tokens) else {
        return html! {};
    };
    let total = bars.iter().fold(0u64, |a, b| a.saturating_add(b.tokens()));
    let first = bars.first().map_or(0, |b| b.first);
    let last = bars.last().map_or(0, |b| b.last);
    let span = if first == last {
        format!("iteration {first}")
    } else {
        format!("iterations {first}–{last}")
    };
    let label = if max == 0 {
        format!("Tokens per iteration, {span}: none used yet")
    } else {
        format!(
            "Tokens per iteration, {span}: {} in all, most {} at {}",
            format_tokens(total),
            format_tokens(max),
            top.which()
        )
    };
    // Room for at least 10 bars, so a few stay slim; the newest at the right.
    let step = SPARK_W / f(bars.len().clamp(10, SPARK_BARS) as u64);
    html! {
        svg.spark xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {} {}", px(SPARK_W), px(SPARK_H)))
            role="img" aria-label=(label) preserveAspectRatio="xMaxYMax meet" {
            title { (label) }
            line.baseline x1="0" x2=(px(SPARK_W)) y1=(px(SPARK_H - 0.5)) y2=(px(SPARK_H - 0.5)) {}
            @for (i, b) in bars.iter().enumerate() {
                @let h = scaled(f(b.tokens()), f(max), SPARK_H - 1.0).max(if b.tokens() > 0 { 1.0 } else { 0.0 });
                @let x = SPARK_W - step * f((bars.len() - i) as u64);
                rect.spark-bar.failed[b.failed] x=(px(x + 0.5)) y=(px(SPARK_H - 1.0 - h)) width=(px((step - 1.0).max(0.5))) height=(px(h)) {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_runs_list_reads_the_usage_events_of_as_many_iterations_as_a_sparkline_has_bars() {
        // Four usage events an iteration: its start, its agent's usage, a judge's, its end.
        assert_eq!(crate::model::SPARK_EVENTS, 4 * SPARK_BARS);
    }

    fn it(n: u32, agent: u64, judge: u64, cost: Option<f64>) -> IterationUsage {
        IterationUsage {
            n,
            agent_tokens: agent,
            agent_cost_usd: cost,
            judge_tokens: judge,
            judge_cost_usd: None,
            duration_ms: 1_000,
            ended: true,
            failed: false,
        }
    }

    /// A tag as parsed: its name and its attributes.
    type Tag = (String, Vec<(String, String)>);

    /// Checks that `xml` is well formed as far as its tags go: every tag closed, in order, its
    /// attributes quoted, no stray `<` or `&`; returns the tags opened, in order.
    fn well_formed(xml: &str) -> Result<Vec<Tag>, String> {
        let mut stack: Vec<String> = Vec::new();
        let mut tags = Vec::new();
        let mut rest = xml;
        while let Some(start) = rest.find(['<', '&']) {
            let text = &rest[..start];
            if text.contains('>') {
                return Err(format!("a stray `>` in {text:?}"));
            }
            rest = &rest[start..];
            if rest.starts_with('&') {
                let end = rest.find(';').ok_or("an unterminated entity")?;
                let name = &rest[1..end];
                if !["amp", "lt", "gt", "quot", "#39", "apos"].contains(&name) {
                    return Err(format!("an unknown entity &{name};"));
                }
                rest = &rest[end + 1..];
                continue;
            }
            let end = rest.find('>').ok_or("an unterminated tag")?;
            let tag = &rest[1..end];
            rest = &rest[end + 1..];
            if tag.contains('<') {
                return Err(format!("a `<` inside the tag {tag:?}"));
            }
            if let Some(name) = tag.strip_prefix('/') {
                let open = stack.pop().ok_or(format!("`</{name}>` closes nothing"))?;
                if open != name {
                    return Err(format!("`</{name}>` closes `<{open}>`"));
                }
                continue;
            }
            let closed = tag.ends_with('/');
            let tag = tag.trim_end_matches('/');
            let (name, mut attrs) = tag.split_once(' ').unwrap_or((tag, ""));
            let mut parsed = Vec::new();
            loop {
                attrs = attrs.trim_start();
                if attrs.is_empty() {
                    break;
                }
                let (key, after) = attrs
                    .split_once("=\"")
                    .ok_or(format!("an unquoted attribute in {tag:?}"))?;
                let (value, after) = after.split_once('"').ok_or("an unterminated attribute")?;
                if key.contains([' ', '"', '\'']) {
                    return Err(format!("a bad attribute name {key:?}"));
                }
                parsed.push((key.to_owned(), value.to_owned()));
                attrs = after;
            }
            tags.push((name.to_owned(), parsed));
            if !closed {
                stack.push(name.to_owned());
            }
        }
        if rest.contains('>') {
            return Err("a stray `>` at the end".into());
        }
        match stack.pop() {
            Some(open) => Err(format!("`<{open}>` never closed")),
            None => Ok(tags),
        }
    }

    fn attr(attrs: &[(String, String)], key: &str) -> f64 {
        attrs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.parse().unwrap())
            .unwrap_or_else(|| panic!("no {key} in {attrs:?}"))
    }

    /// Every bar `rect` of `tags` within the plot (`top`..`bottom`), none of negative height.
    fn bars_within(tags: &[Tag], top: f64, bottom: f64) -> Result<usize, String> {
        let mut n = 0;
        for (name, attrs) in tags {
            let class = attrs
                .iter()
                .find(|(k, _)| k == "class")
                .map(|(_, v)| v.as_str());
            if name != "rect" || !matches!(class, Some("agent" | "judge" | "cost")) {
                continue;
            }
            let (y, h) = (attr(attrs, "y"), attr(attrs, "height"));
            if h < 0.0 || y < top - 0.05 || y + h > bottom + 0.05 {
                return Err(format!("a bar out of the plot: y {y}, height {h}"));
            }
            let (x, w) = (attr(attrs, "x"), attr(attrs, "width"));
            if w <= 0.0 || x < LEFT - 0.05 || x + w > WIDTH - RIGHT + 0.05 {
                return Err(format!("a bar out of the plot: x {x}, width {w}"));
            }
            n += 1;
        }
        Ok(n)
    }

    fn usage() -> impl Strategy<Value = IterationUsage> {
        (
            any::<u64>(),
            any::<u64>(),
            proptest::option::of(any::<f64>()),
            proptest::option::of(0.0..1e6f64),
            any::<bool>(),
        )
            .prop_map(|(agent, judge, a, j, failed)| IterationUsage {
                n: 0,
                agent_tokens: agent,
                agent_cost_usd: a,
                judge_tokens: judge,
                judge_cost_usd: j,
                duration_ms: 0,
                ended: true,
                failed,
            })
    }

    fn series() -> impl Strategy<Value = Vec<IterationUsage>> {
        prop_oneof![
            proptest::collection::vec(usage(), 0..8),
            proptest::collection::vec(usage(), 0..400),
        ]
        .prop_map(|mut s| {
            for (i, it) in s.iter_mut().enumerate() {
                it.n = u32::try_from(i).unwrap() + 1;
            }
            s
        })
    }

    fn kind() -> impl Strategy<Value = VerdictKind> {
        prop_oneof![
            Just(VerdictKind::Accepted),
            Just(VerdictKind::VerifyFailed),
            Just(VerdictKind::JudgeRejected),
            Just(VerdictKind::JudgeUnavailable),
            Just(VerdictKind::JudgeImpossible),
            Just(VerdictKind::JudgeBlocked),
        ]
    }

    proptest! {
        #[test]
        fn every_chart_is_well_formed_and_no_bar_leaves_its_plot(series in series()) {
            let whole = run_charts(&series, Some(&[][..]), 0, 1).into_string();
            well_formed(&whole).map_err(TestCaseError::fail)?;
            for chart in [tokens_chart(&series), cost_chart(&series)].into_iter().flatten() {
                let chart = chart.into_string();
                let tags = well_formed(&chart).map_err(TestCaseError::fail)?;
                let n = bars_within(&tags, TOP, TOP + PLOT).map_err(TestCaseError::fail)?;
                prop_assert!(n <= 2 * MAX_BARS, "{n} bars");
                prop_assert!(!chart.contains("NaN") && !chart.contains("inf"));
            }
            prop_assert_eq!(tokens_chart(&series).is_none(), series.is_empty());
            let spark = sparkline(&series).into_string();
            let tags = well_formed(&spark).map_err(TestCaseError::fail)?;
            let spark_bars = tags.iter().filter(|(name, _)| name == "rect").count();
            prop_assert!(spark_bars <= SPARK_BARS);
            for (_, attrs) in tags.iter().filter(|(name, _)| name == "rect") {
                let (y, h) = (attr(attrs, "y"), attr(attrs, "height"));
                prop_assert!(h >= 0.0 && y >= -0.05 && y + h <= SPARK_H + 0.05, "y {} h {}", y, h);
                let (x, w) = (attr(attrs, "x"), attr(attrs, "width"));
                prop_assert!(w > 0.0 && x >= -0.05 && x + w <= SPARK_W + 0.05, "x {} w {}", x, w);
            }
        }

        #[test]
        fn every_verdict_chart_is_well_formed(
            marks in proptest::collection::vec((any::<i64>(), "[a-z<>&\"' ]{0,12}", any::<u32>(), kind()), 0..30),
            from in any::<i64>(),
            to in any::<i64>(),
        ) {
            let marks: Vec<VerdictMark> = marks
                .into_iter()
                .map(|(at_ms, goal, attempt, kind)| VerdictMark { at_ms, goal, attempt, kind })
                .collect();
            let chart = verdicts_chart(&marks, from, to);
            prop_assert_eq!(chart.is_none(), marks.is_empty());
            if let Some(chart) = chart {
                let tags = well_formed(&chart.into_string()).map_err(TestCaseError::fail)?;
                let shown = tags.iter().filter(|(_, a)| a.iter().any(|(k, v)| k == "class" && v.starts_with("mark "))).count();
                prop_assert_eq!(shown, marks.len().min(MAX_MARKS));
            }
        }
    }

    #[test]
    fn the_verdicts_title_counts_every_verdict_and_says_how_many_are_drawn() {
        let marks: Vec<VerdictMark> = (0..500)
            .map(|i| VerdictMark {
                at_ms: i,
                goal: if i < 50 {
                    "early".into()
                } else {
                    "late".into()
                },
                attempt: 1,
                kind: if i < 100 {
                    VerdictKind::JudgeRejected
                } else {
                    VerdictKind::Accepted
                },
            })
            .collect();
        let chart = verdicts_chart(&marks, 0, 500).unwrap().into_string();
        assert!(
            chart.contains(
                "500 verdicts on 2 goals, 400 accepted, 100 rejected (the newest 400 shown)"
            ),
            "{chart}"
        );
    }

    #[test]
    fn a_long_series_is_drawn_in_groups() {
        let series: Vec<IterationUsage> = (1..=3_000).map(|n| it(n, 1_000, 0, None)).collect();
        let chart = tokens_chart(&series).unwrap().into_string();
        let tags = well_formed(&chart).unwrap();
        assert_eq!(bars_within(&tags, TOP, TOP + PLOT).unwrap(), 2 * 120);
        assert!(
            chart.contains("3000 iterations in 120 bars of 25"),
            "{chart}"
        );
        assert!(chart.contains("iterations 2976–3000"), "{chart}");
    }

    #[test]
    fn one_iteration_and_huge_values_read_plainly() {
        let chart = tokens_chart(&[it(1, u64::MAX, u64::MAX, Some(f64::MAX))])
            .unwrap()
            .into_string();
        well_formed(&chart).unwrap();
        assert!(
            chart.contains("Tokens per iteration: 1 iteration, most"),
            "{chart}"
        );
        assert!(chart.contains("M at iteration 1"), "{chart}");
        assert!(tokens_chart(&[]).is_none());
        assert_eq!(sparkline(&[]).into_string(), "");
        assert!(
            cost_chart(&[it(1, 5, 0, None)]).is_none(),
            "no cost known: no cost chart"
        );
    }

    #[test]
    fn a_small_run_s_charts_as_a_person_reads_them() {
        let series = [
            it(1, 12_000, 0, Some(0.12)),
            it(2, 48_200, 3_100, Some(0.51)),
            IterationUsage {
                failed: true,
                ..it(3, 7_500, 0, Some(0.07))
            },
        ];
        let start = 1_795_460_615_000;
        let marks = [
            VerdictMark {
                at_ms: start + 60_000,
                goal: "greet".into(),
                attempt: 1,
                kind: VerdictKind::VerifyFailed,
            },
            VerdictMark {
                at_ms: start + 120_000,
                goal: "greet".into(),
                attempt: 2,
                kind: VerdictKind::Accepted,
            },
            VerdictMark {
                at_ms: start + 150_000,
                goal: "<docs>".into(),
                attempt: 1,
                kind: VerdictKind::JudgeBlocked,
            },
        ];
        let html = run_charts(&series, Some(&marks), start, start + 180_000).into_string();
        let pretty = html.replace("><", ">\n<");
        insta::assert_snapshot!(pretty);
        assert!(html.contains("Tokens per iteration: 3 iterations, most 51.3k at iteration 2"));
        assert!(html.contains("&lt;docs&gt;, attempt 1: ruled out: blocked on a person"));
        let spark = sparkline(&series).into_string();
        assert!(
            spark.contains(
                "Tokens per iteration, iterations 1–3: 70.8k in all, most 51.3k at iteration 2"
            ),
            "{spark}"
        );
    }
}
