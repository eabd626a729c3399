//! `tether plan`: the task list.

use anyhow::Result;
use serde::Serialize;
use tether_core::plan_file::{self, PlanFileError};
use tether_plan::{Plan, render};

use super::Ctx;
use crate::exit::Exit;
use crate::failure::Failure;

#[derive(Serialize)]
struct PlanJson<'a> {
    file: String,
    plan: &'a Plan,
}

/// Prints the plan as a task list, or as JSON.
pub fn run(ctx: &mut Ctx<'_>, json: bool) -> Result<Exit> {
    let config = tether_config::load(ctx.ws.root(), ctx.env).map_err(Failure::usage)?;
    let path = config.config.plan_path(ctx.ws.root());
    let doc = match plan_file::read(&path) {
        Err(e @ (PlanFileError::Missing { .. } | PlanFileError::NotUtf8 { .. })) => {
            return Err(Failure::usage(e));
        }
        other => other?,
    };
    let file = ctx.ws.display(&path).into_owned();
    if json {
        let value = PlanJson {
            file,
            plan: doc.plan(),
        };
        serde_json::to_writer_pretty(&mut *ctx.out, &value)?;
        writeln!(ctx.out)?;
    } else {
        let options = render::Options {
            flags: Vec::new(),
            notes: Vec::new(),
            log_lines: 3,
        };
        write!(
            ctx.out,
            "{}",
            render::task_list(&file, doc.plan(), &options)
        )?;
    }
    Ok(Exit::Done)
}
