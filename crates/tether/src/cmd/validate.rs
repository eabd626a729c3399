//! `tether validate`.

use anyhow::Result;
use tether_core::validate::{self, Report};
use tether_plan::Severity;

use super::Ctx;
use crate::exit::Exit;

/// Lists every problem in the config and the plan; exit 2 if there is any.
pub fn run(ctx: &mut Ctx<'_>, json: bool) -> Result<Exit> {
    let report = validate::validate(&ctx.ws, tether_runtime::schema(), ctx.env);
    if json {
        super::json(ctx.out, &report)?;
    } else {
        write_text(ctx, &report)?;
    }
    Ok(if report.is_clean() {
        Exit::Done
    } else {
        Exit::Usage
    })
}

fn write_text(ctx: &mut Ctx<'_>, report: &Report) -> Result<()> {
    let config = report.config_file.as_ref().map_or_else(
        || "no tether.toml (defaults)".to_owned(),
        |p| p.display().to_string(),
    );
    let plan = report.plan_file.display();
    for f in &report.findings {
        let sev = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let at = f.line.map_or_else(String::new, |l| format!(":{l}"));
        let key = f
            .key
            .as_ref()
            .map_or_else(String::new, |k| format!("{k}: "));
        let line = format!("{}{at}: {sev}: {key}{}", f.file.display(), f.message);
        writeln!(ctx.out, "{}", tether_human::visible::visible(&line))?;
    }
    if report.is_clean() {
        let goals = report.goals;
        writeln!(
            ctx.out,
            "ok: {config} and {plan} ({goals} goal{}) have no problems",
            if goals == 1 { "" } else { "s" }
        )?;
    } else {
        let n = report.findings.len();
        let errors = report.errors();
        writeln!(
            ctx.out,
            "\n{n} problem{} ({errors} error{}, {} warning{}) in {config} and {plan}",
            if n == 1 { "" } else { "s" },
            if errors == 1 { "" } else { "s" },
            n - errors,
            if n - errors == 1 { "" } else { "s" },
        )?;
    }
    Ok(())
}
