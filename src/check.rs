//! `shardkey check`: a policy file → one analysis per namespace → rule results
//! → a report and an exit code a CI job can gate on.

use crate::cli::{build_report, effective_uri, scrubbed, Format, InputArgs};
use crate::error::{input_error, EXIT_GATE_FAILED, EXIT_OK};
use crate::model::ShardKey;
use crate::policy::{self, DEFAULT_POLICY};
use crate::report::{self, CheckReport, CollectionCheck, ToolInfo, SCHEMA_VERSION};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// The policy file (TOML). `shardkey check --init` prints one to start from.
    #[arg(long, value_name = "FILE", default_value = "shardkey.toml")]
    pub policy: PathBuf,

    /// Print a starting policy and exit.
    #[arg(long)]
    pub init: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run_check(a: &CheckArgs, out: &mut dyn std::io::Write) -> Result<i32> {
    if a.init {
        out.write_all(DEFAULT_POLICY.as_bytes())?;
        return Ok(EXIT_OK);
    }
    scrubbed(&a.input, || {
        let name = a.policy.display().to_string();
        let text = std::fs::read_to_string(&a.policy).map_err(|e| input_error(format!("cannot read policy {name}: {e}")))?;
        let p = policy::parse(&name, &text)?;
        let selected: Vec<&policy::CollectionPolicy> = match &a.input.collection {
            Some(ns) => {
                let v: Vec<_> = p.collections.iter().filter(|c| c.namespace.get_ref() == ns).collect();
                if v.is_empty() {
                    return Err(input_error(format!("{name} has no [[collection]] for {ns}")));
                }
                v
            }
            None if a.input.docs.is_some() && p.collections.len() > 1 => {
                return Err(input_error(format!(
                    "{name} names {} collections and --docs holds one: choose it with --collection",
                    p.collections.len()
                )))
            }
            None => p.collections.iter().collect(),
        };
        let mut results = Vec::new();
        for c in selected {
            let ns = c.namespace.get_ref().clone();
            let key = c.key.as_ref().map(|k| ShardKey::parse(k.get_ref())).transpose()?;
            if key.is_none() && effective_uri(&a.input).is_none() {
                return Err(input_error(format!("{name}: {ns} has no key; offline checks need the planned key")));
            }
            let r = build_report(&a.input, Some(ns.clone()), key.iter().cloned().collect(), false)?;
            let cand = match &key {
                Some(k) => r.candidates.iter().find(|x| x.key == k.to_json()),
                None => r.candidates.iter().find(|x| x.proposed_because.as_deref() == Some("current shard key")),
            };
            let Some(cand) = cand else {
                return Err(input_error(format!("{name}: {ns} has no key and is not sharded: name the planned key")));
            };
            let rules = policy::evaluate(&c.rules(&p.defaults), cand);
            let passed = rules.iter().all(|x| x.passed);
            results.push(CollectionCheck {
                namespace: ns,
                key: cand.key.clone(),
                score: cand.score,
                verdict: cand.verdict,
                passed,
                rules,
                reasons: cand.reasons.clone(),
            });
        }
        let passed = results.iter().all(|c| c.passed);
        let cr = CheckReport {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo { name: "shardkey", version: env!("CARGO_PKG_VERSION") },
            policy: name,
            passed,
            collections: results,
        };
        let text = match a.format {
            Format::Table => report::table::render_check(&cr),
            Format::Json => report::json::render_check(&cr),
            Format::Markdown => report::markdown::render_check(&cr),
        };
        out.write_all(text.as_bytes())?;
        // In GitHub Actions the Markdown also goes to the job summary page.
        if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|s| !s.is_empty()) {
            use std::io::Write as _;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&summary)
                .map_err(|e| input_error(format!("cannot write GITHUB_STEP_SUMMARY: {e}")))?;
            f.write_all(report::markdown::render_check(&cr).as_bytes())?;
        }
        if std::env::var_os("GITHUB_ACTIONS").is_some() {
            // Workflow commands; on stderr when stdout carries JSON.
            let lines = report::markdown::annotations(&cr);
            if matches!(a.format, Format::Json) {
                eprint!("{lines}");
            } else {
                out.write_all(lines.as_bytes())?;
            }
        }
        Ok(if passed { EXIT_OK } else { EXIT_GATE_FAILED })
    })
}
