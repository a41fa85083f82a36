//! Reports: the `Report` (analyze) and `CheckReport` (check) every writer formats,
//! and the one dispatch from a `Format` to its writer. Writers only format: every
//! number they print was computed in `metrics` or `score`. The JSON form is the
//! documented, versioned schema (docs/reference.md "JSON schema").

mod analysis;
mod check;
pub(crate) mod gitlab;
pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod markdown;
mod mongosh;
mod plan;
pub(crate) mod sarif;
pub(crate) mod table;
pub(crate) mod text;
mod workload;
mod writer;

pub(crate) use analysis::{CandidateReport, DocumentInput, Inputs, QueryInput, Report, ReportSettings, ToolInfo, SCHEMA_VERSION};
pub(crate) use check::{BaselineComparison, Change, CheckReport, CheckWorkload, CollectionCheck, SCORE};
pub(crate) use workload::WorkloadReport;

use std::io::{self, Write};
use writer::Writer;

/// The output formats, for `analyze` and `check` alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Table,
    /// `--wide`: the table with every figure in the ranking, lines unwrapped.
    WideTable,
    Json,
    Markdown,
    /// One self-contained HTML file.
    Html,
    /// `check` only: SARIF 2.1.0 (GitHub code scanning).
    Sarif,
    /// `check` only: GitLab code quality.
    Gitlab,
    /// `plan` only: a mongosh script that checks the cluster, then applies the plan.
    Mongosh,
}

/// The one dispatch from a format to its writer.
fn writer(format: Format) -> &'static dyn Writer {
    match format {
        Format::Table => &table::TableWriter { wide: false },
        Format::WideTable => &table::TableWriter { wide: true },
        Format::Json => &json::JsonWriter,
        Format::Markdown => &markdown::MarkdownWriter,
        Format::Html => &html::HtmlWriter,
        // Check-only and plan-only formats: the other reports as JSON (the command line does not offer them).
        Format::Sarif | Format::Gitlab | Format::Mongosh => &json::JsonWriter,
    }
}

/// Write a database plan.
pub(crate) fn write_plan(p: &crate::plan::outcome::Plan, format: Format, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Mongosh => mongosh::write(p, out),
        f => writer(f).plan(p, out),
    }
}

/// Write an analysis report.
pub(crate) fn write_report(r: &Report, format: Format, out: &mut dyn Write) -> io::Result<()> {
    writer(format).analyze(r, out)
}

/// Write a policy check report.
pub(crate) fn write_check(r: &CheckReport, format: Format, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Sarif => sarif::write(r, out),
        Format::Gitlab => gitlab::write(r, out),
        f => writer(f).check(r, out),
    }
}

/// Write a workload summary.
pub(crate) fn write_workload(r: &WorkloadReport, format: Format, out: &mut dyn Write) -> io::Result<()> {
    writer(format).workload(r, out)
}
