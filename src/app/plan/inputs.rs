//! The plan's inputs, read once and handed down as one value (`PlanInputs`): the database's
//! collections (a mongodump directory or a live database), the query logs with their
//! transactions placed (`workload`), and the version the plan follows. App layer: it reads
//! through `sources` (files, the deployment); nothing below it does I/O.

use super::database::{self, Database};
use super::workload::{self, Workload};
use crate::app::request::PlanRequest;
use crate::app::version::{self, Detected};
use crate::model::version::{ServerVersion, VersionReport};
use anyhow::Result;

/// Everything a plan is made from before any collection is analysed.
pub(super) struct PlanInputs {
    pub(super) db: Database,
    pub(super) workload: Workload,
    /// The version the plan follows (`--target-version`, else what the inputs say), and how
    /// the report says it.
    pub(super) version: Option<ServerVersion>,
    pub(super) version_report: VersionReport,
    /// The runtime the live session runs on (declared last: the session drops first).
    pub(super) rt: tokio::runtime::Runtime,
}

/// The targets, the workload, then the version (the logs name theirs once read).
pub(super) fn read(req: &PlanRequest) -> Result<PlanInputs> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let mut detected = Detected::default();
    let db = database::open(req, &rt, &mut detected)?;
    let workload = workload::read(&req.input, &db, &rt)?;
    if let Some(s) = &db.session {
        detected.live = rt.block_on(s.deployment_version()).ok();
    }
    detected.logs = workload.log.versions.clone();
    let (version, version_report) = version::resolve(req.target_version, &detected);
    Ok(PlanInputs { db, workload, version, version_report, rt })
}
