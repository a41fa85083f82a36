//! The application: the use cases (`analyze`, `check`) run on typed requests
//! that `cli` built. It opens the inputs (`inputs`: files or a live deployment),
//! runs the pipeline and hands the report to a writer; it never parses flags.

mod analyze;
mod baseline;
mod basis;
mod check;
mod check_plan;
mod github;
mod inputs;
mod overlap;
mod plan;
mod request;
mod sample;
mod version;
mod workload;

pub(crate) use crate::metrics::workload::ShapeOrder;
pub(crate) use crate::sample::DEFAULT_MEMORY_LIMIT;

pub(crate) use request::{
    AnalyzeRequest, CheckRequest, GivenChoice, InputRequest, PlanRequest, QuerySource, Request, SampleRequest, WorkloadRequest,
};

use crate::error::{exit_code, input_error, one_line, Exit, Outcome};
use crate::util::uri::{scrub, secrets_of};
use anyhow::Result;
use std::io::Write;

/// Run a request, writing its report to `out`.
pub(crate) fn run(req: &Request, out: &mut dyn Write) -> Result<Outcome> {
    match req {
        Request::Analyze(a) => scrubbed(&a.input, || analyze::run(a, out)),
        Request::Check(c) if c.init => {
            out.write_all(crate::policy::default_policy().as_bytes())?;
            Ok(Outcome::Success)
        }
        Request::Check(c) => scrubbed(&c.input, || check::run(c, out)),
        Request::Workload(w) => workload::run(w, out).map(|_| Outcome::Success),
        Request::Plan(p) => scrubbed(&p.input, || plan::run(p, out).map(|_| Outcome::Success)),
        Request::Text(t) => {
            out.write_all(t.as_bytes())?;
            Ok(Outcome::Success)
        }
        Request::Files(files) => {
            for (path, text) in files {
                std::fs::write(path, text).map_err(|e| crate::error::input_error(format!("{}: cannot write: {e}", path.display())))?;
                writeln!(out, "{}", path.display())?;
            }
            Ok(Outcome::Success)
        }
        Request::Sample(sr) => scrub_errors(secrets_of(&sr.uri), || sample::run(sr, out)),
    }
}

/// Run `f` so that no error it returns carries a credential from the URIs.
fn scrubbed<T>(input: &InputRequest, f: impl FnOnce() -> Result<T>) -> Result<T> {
    scrub_errors(input.uri.iter().chain(&input.config_uri).flat_map(|u| secrets_of(u)).collect(), f)
}

/// Run `f` so that no error it returns carries one of `secrets`, its kind (exit code) kept.
fn scrub_errors<T>(secrets: Vec<String>, f: impl FnOnce() -> Result<T>) -> Result<T> {
    f().map_err(|e| {
        if secrets.is_empty() {
            return e;
        }
        let msg = scrub(&one_line(&e), &secrets);
        match exit_code(&e) {
            Exit::Success => e, // a closed stdout carries no message worth keeping
            Exit::Internal => anyhow::anyhow!(msg),
            _ => input_error(msg),
        }
    })
}
