//! JSON writer: the reports as documented in docs/reference.md ("JSON schema").

use super::analysis::Report;
use super::check::CheckReport;
use super::workload::WorkloadReport;
use super::writer::Writer;
use serde::Serialize;

pub(super) struct JsonWriter;

fn write_pretty(v: &impl Serialize, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, v)?;
    out.write_all(b"\n")
}

impl Writer for JsonWriter {
    fn analyze(&self, r: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        write_pretty(r, out)
    }

    fn check(&self, r: &CheckReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        write_pretty(r, out)
    }

    fn workload(&self, r: &WorkloadReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        write_pretty(r, out)
    }

    fn plan(&self, p: &crate::plan::outcome::Plan, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        write_pretty(p, out)
    }
}
