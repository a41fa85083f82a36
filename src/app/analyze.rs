//! `shardkey analyze`: measure, score and rank candidates; the report to stdout.

use super::inputs::build_report;
use super::request::AnalyzeRequest;
use crate::error::Outcome;
use crate::pipeline::Candidates;
use crate::report::write_report;
use anyhow::Result;
use std::io::Write;

pub(super) fn run(a: &AnalyzeRequest, out: &mut dyn Write) -> Result<Outcome> {
    let candidates = if a.keys.is_empty() { Candidates::FromPrescan } else { Candidates::Named(a.keys.clone()) };
    let r = build_report(&a.input, a.input.namespace.clone(), candidates, a.compare_server)?;
    write_report(&r, a.format, out)?;
    // A gate does not pass on evidence too thin for a verdict (README "Evidence").
    if a.fail_under.is_some() && !r.evidence.sufficient {
        out.flush()?;
        eprintln!("shardkey: not enough evidence to pass --fail-under: {}", r.evidence.shortfalls.join("; "));
        return Ok(Outcome::GateFailed);
    }
    if let (Some(min), Some(best)) = (a.fail_under, r.candidates.first()) {
        if best.score < min {
            out.flush()?;
            eprintln!("shardkey: best candidate scores {} (below --fail-under {min})", best.score);
            return Ok(Outcome::GateFailed);
        }
    }
    Ok(Outcome::Success)
}
