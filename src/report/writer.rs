//! What each format writes: one method per report, the dispatch in `mod.rs` picks the writer.

use super::analysis::Report;
use super::check::CheckReport;
use super::workload::WorkloadReport;
use std::io::{self, Write};

/// What a format writes for each report.
pub(super) trait Writer {
    fn analyze(&self, r: &Report, out: &mut dyn Write) -> io::Result<()>;
    fn check(&self, r: &CheckReport, out: &mut dyn Write) -> io::Result<()>;
    fn workload(&self, r: &WorkloadReport, out: &mut dyn Write) -> io::Result<()>;
    fn plan(&self, p: &crate::plan::outcome::Plan, out: &mut dyn Write) -> io::Result<()>;
}
