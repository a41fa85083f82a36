//! `shardkey plan`: every collection of a database analysed on the same query logs (read
//! once), then the keys chosen together (`crate::plan`). The use case in stages that go one
//! way, down: the inputs read once (`inputs`: the collections, the workload with its
//! transactions placed, the version), each collection's own analysis (`analyses`), then the
//! plan (`crate::plan::make`: the search and the outcome) and what it was made from (`basis`).

mod analyses;
mod database;
mod inputs;
mod workload;

use super::basis::{self, Planned};
use super::request::PlanRequest;
use crate::plan::make;
use crate::plan::outcome::Plan;
use crate::plan::search::Workload;
use anyhow::Result;
use std::io::Write;

pub(super) fn run(req: &PlanRequest, out: &mut dyn Write) -> Result<()> {
    let plan = plan(req)?;
    crate::report::write_plan(&plan, req.format, out)?;
    Ok(())
}

/// The plan for the request's database (`check`'s `[plan]` calls it too).
pub(super) fn plan(req: &PlanRequest) -> Result<Plan> {
    let inputs = inputs::read(req)?;
    let analysed = analyses::run(req, &inputs)?;
    // What the plan is made from, for the script to check before it runs the steps.
    let planned: Vec<Planned> = analysed
        .analyses
        .collections
        .iter()
        .map(|c| Planned { name: c.namespace.split_once('.').map_or(&c.namespace[..], |x| x.1), current_key: c.current_key.as_ref() })
        .collect();
    let db = &inputs.db;
    let basis = basis::read(&db.name, &planned, db.dump_dir.as_deref(), db.session.as_ref(), &inputs.rt);
    let txns = inputs.workload.transactions();
    let ev = inputs.workload.evidence(&txns, &db.name);
    let w = Workload { links: inputs.workload.links.clone(), seen: txns.seen(), joins: &txns.joins };
    let mut p = make::plan(&db.name, analysed.analyses, w, &analysed.settings, ev, inputs.version_report.clone());
    make::with_basis(&mut p, basis);
    // The logs' query sample and transactions are freed on another thread (0.1 s of one
    // core on the benchmark's log): the plan is written meanwhile, and the process may end first.
    // A thread the system refuses drops its closure, and the workload with it, here (no panic).
    let workload = inputs.workload;
    let _ = std::thread::Builder::new().spawn(move || drop(workload));
    Ok(p)
}
