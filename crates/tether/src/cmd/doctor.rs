//! `tether doctor`: the setup's checks (see `tether_runtime::doctor`), each on one line with ✓
//! or ✗ and, for every failure, the fix; `--json` for scripts.

use anyhow::{Context as _, Result};
use serde::Serialize;
use tether_runtime::doctor::{Check, Status};

use super::Ctx;
use crate::cli::DoctorArgs;
use crate::exit::Exit;

#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    checks: &'a [Check],
}

/// Runs every check and prints them; exit 1 when any failed.
pub fn run(ctx: &mut Ctx<'_>, args: &DoctorArgs) -> Result<Exit> {
    let tether = match &args.tether {
        Some(path) => path.clone(),
        None => std::env::current_exe().context("finding this tether binary")?,
    };
    let runtime = super::current_thread()?;
    let host = crate::bridged::host();
    let checks = runtime.block_on(tether_runtime::doctor::checks(
        &ctx.ws, ctx.env, &tether, &host,
    ));
    let ok = checks.iter().all(|c| c.status != Status::Fail);
    if args.json {
        super::json(
            ctx.out,
            &Report {
                ok,
                checks: &checks,
            },
        )?;
    } else {
        write_text(ctx, &checks)?;
    }
    Ok(if ok { Exit::Done } else { Exit::Error })
}

fn write_text(ctx: &mut Ctx<'_>, checks: &[Check]) -> Result<()> {
    for check in checks {
        let mark = match check.status {
            Status::Pass => "✓",
            Status::Fail => "✗",
            Status::Skip => "-",
        };
        let mut lines = check.detail.lines();
        let first = lines.next().unwrap_or_default();
        let line = format!("{mark} {}: {first}", check.name);
        writeln!(ctx.out, "{}", tether_human::visible::visible(&line))?;
        for more in lines {
            writeln!(ctx.out, "    {}", tether_human::visible::visible(more))?;
        }
        if let Some(fix) = &check.fix {
            writeln!(ctx.out, "  fix: {}", tether_human::visible::visible(fix))?;
        }
    }
    let failed = checks.iter().filter(|c| c.status == Status::Fail).count();
    match failed {
        0 => writeln!(ctx.out, "\nall checks passed")?,
        1 => writeln!(ctx.out, "\n1 check failed")?,
        n => writeln!(ctx.out, "\n{n} checks failed")?,
    }
    Ok(())
}
