//! GitHub Actions: the Markdown report to the job summary (`GITHUB_STEP_SUMMARY`)
//! and one `::error` workflow command per violated rule (`GITHUB_ACTIONS`); in GitLab CI
//! (`GITLAB_CI`) the same lines, plain.

use crate::error::input_error;
use crate::report::{write_check, CheckReport, Format};
use anyhow::Result;
use std::fmt::Write as _;
use std::io::Write;

/// What `check` adds when it runs in a CI: in GitHub Actions the job summary and workflow
/// commands; in GitLab CI the same lines as plain `file:line: level: message` lines (GitLab has no
/// annotations; its merge request shows the code quality report).
pub(super) fn report_check(cr: &CheckReport, format: Format, out: &mut dyn Write) -> Result<()> {
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|s| !s.is_empty()) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&summary)
            .map_err(|e| input_error(format!("cannot write GITHUB_STEP_SUMMARY: {e}")))?;
        write_check(cr, Format::Markdown, &mut f)?;
    }
    let lines = if std::env::var_os("GITHUB_ACTIONS").is_some() {
        annotations(cr)
    } else if std::env::var_os("GITLAB_CI").is_some() {
        plain_lines(cr)
    } else {
        return Ok(());
    };
    // On stderr when stdout carries JSON (SARIF, GitLab included).
    if matches!(format, Format::Json | Format::Sarif | Format::Gitlab) {
        eprint!("{lines}");
    } else {
        out.write_all(lines.as_bytes())?;
    }
    Ok(())
}

/// One annotation: a flagged rule or a score drop, where it points and what it says.
struct Annotation {
    error: bool,
    file: String,
    line: u32,
    title: &'static str,
    /// The first line names the rule; the culprit's causes follow, one a line.
    message: String,
}

/// Every annotation of a report: one per violated rule or warning at its location (`error`, or
/// not for a violation the baseline already had), one per score drop beyond the tolerance.
fn collect(r: &CheckReport) -> Vec<Annotation> {
    let mut out = Vec::new();
    for f in r.flagged() {
        let x = f.rule;
        let text = f.text("\n- ");
        let (first, causes) = text.split_once('\n').unwrap_or((&text, ""));
        let message = format!("{first} ({}){}{causes}", x.rule, if causes.is_empty() { "" } else { "\n" });
        let title = if f.known {
            "shardkey policy (known in the baseline)"
        } else if f.is_error() {
            "shardkey policy"
        } else {
            "shardkey policy (warning)"
        };
        let (file, line) = f.location(&r.policy);
        out.push(Annotation { error: f.is_error(), file, line, title, message });
    }
    // A score that dropped beyond the tolerance: no rule result carries it.
    for c in r.baseline.iter().flat_map(|b| b.score_drops()) {
        let (file, line) = c.location.as_ref().map_or((r.policy.clone(), 1), |l| (l.file.clone(), l.line));
        out.push(Annotation { error: true, file, line, title: "shardkey baseline", message: c.message.clone() });
    }
    out
}

/// GitHub's workflow commands: `::error file=…,line=…,title=…::message`.
pub(super) fn annotations(r: &CheckReport) -> String {
    let mut out = String::new();
    // GitHub's workflow-command escaping: data escapes `%` and line breaks; a property value
    // `,` and `:` as well.
    let data = |s: &str| s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A");
    let property = |s: &str| data(s).replace(':', "%3A").replace(',', "%2C");
    for a in collect(r) {
        let msg = data(&crate::util::text::printable(&a.message, true));
        let level = if a.error { "error" } else { "warning" };
        let _ = writeln!(out, "::{level} file={},line={},title={}::{msg}", property(&a.file), a.line, a.title);
    }
    out
}

/// The same as plain lines, for GitLab's job log: `file:line: error: message`, causes indented.
fn plain_lines(r: &CheckReport) -> String {
    let mut out = String::new();
    for a in collect(r) {
        let msg = crate::util::text::printable(&a.message, true).replace('\n', "\n    ");
        let _ = writeln!(out, "{}:{}: {}: {msg}", a.file, a.line, if a.error { "error" } else { "warning" });
    }
    out
}
