//! GitHub Actions: the Markdown report to the job summary (`GITHUB_STEP_SUMMARY`)
//! and one `::error` workflow command per violated rule (`GITHUB_ACTIONS`).

use crate::error::input_error;
use crate::report::{write_check, CheckReport, Format};
use anyhow::Result;
use std::fmt::Write as _;
use std::io::Write;

/// What `check` adds when it runs in GitHub Actions.
pub(super) fn report_check(cr: &CheckReport, format: Format, out: &mut dyn Write) -> Result<()> {
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|s| !s.is_empty()) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&summary)
            .map_err(|e| input_error(format!("cannot write GITHUB_STEP_SUMMARY: {e}")))?;
        write_check(cr, Format::Markdown, &mut f)?;
    }
    if std::env::var_os("GITHUB_ACTIONS").is_some() {
        // Workflow commands; on stderr when stdout carries JSON (SARIF, GitLab included).
        let lines = annotations(cr);
        if matches!(format, Format::Json | Format::Sarif | Format::Gitlab) {
            eprint!("{lines}");
        } else {
            out.write_all(lines.as_bytes())?;
        }
    }
    Ok(())
}

/// One workflow command per violated rule, at the rule's line of the policy file: `::error`,
/// or `::warning` for a violation the baseline already had.
pub(super) fn annotations(r: &CheckReport) -> String {
    let mut out = String::new();
    // GitHub's workflow-command escaping: data escapes `%` and line breaks; a property value
    // `,` and `:` as well.
    let data = |s: &str| s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A");
    let property = |s: &str| data(s).replace(':', "%3A").replace(',', "%2C");
    for f in r.flagged() {
        let x = f.rule;
        // The rule's name ends the first line; the culprit's causes follow, one a line.
        let text = f.text("\n- ");
        let (first, causes) = text.split_once('\n').unwrap_or((&text, ""));
        let msg = crate::util::text::printable(&format!("{first} ({}){}{causes}", x.rule, if causes.is_empty() { "" } else { "\n" }), true);
        let msg = data(&msg);
        let title = if f.known {
            "shardkey policy (known in the baseline)"
        } else if f.is_error() {
            "shardkey policy"
        } else {
            "shardkey policy (warning)"
        };
        let (file, line) = f.location(&r.policy);
        let _ =
            writeln!(out, "::{} file={},line={line},title={title}::{msg}", if f.is_error() { "error" } else { "warning" }, property(&file));
    }
    // A score that dropped beyond the tolerance: no rule result carries it.
    for c in r.baseline.iter().flat_map(|b| b.score_drops()) {
        let (file, line) = c.location.as_ref().map_or((r.policy.as_str(), 1), |l| (l.file.as_str(), l.line));
        let msg = data(&crate::util::text::printable(&c.message, true));
        let _ = writeln!(out, "::error file={},line={line},title=shardkey baseline::{msg}", property(file));
    }
    out
}
