//! `shardkey check`: a policy file → one analysis per namespace → rule results
//! → a report and an outcome a CI job can gate on.

use super::inputs::build_report;
use super::{github, CheckRequest};
use crate::error::{input_error, Outcome};
use crate::pipeline::Candidates;
use crate::policy::rules::RuleInput;
use crate::policy::{self, CollectionPolicy};
use crate::report::{write_check, CheckReport, CollectionCheck, ToolInfo, SCHEMA_VERSION};
use anyhow::Result;
use std::io::Write;

pub(super) fn run(a: &CheckRequest, out: &mut dyn Write) -> Result<Outcome> {
    let name = a.policy.display().to_string();
    let text = std::fs::read_to_string(&a.policy).map_err(|e| input_error(format!("cannot read policy {name}: {e}")))?;
    let p = policy::parse(&name, &text)?;
    let selected: Vec<&CollectionPolicy> = match &a.input.namespace {
        Some(ns) => {
            let v: Vec<_> = p.collections.iter().filter(|c| &c.namespace == ns).collect();
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
        if c.key.is_none() && a.input.uri.is_none() {
            return Err(input_error(format!("{name}: {} has no key; offline checks need the planned key", c.namespace)));
        }
        let candidates = Candidates::Named(c.key.iter().cloned().collect());
        let r = build_report(&a.input, Some(c.namespace.clone()), candidates, false)?;
        // The planned key, or the collection's current key (found by the audit).
        let key = c.key.as_ref().or(r.audit.as_ref().map(|x| &x.shard_key));
        let Some(cand) = key.and_then(|k| r.candidates.iter().find(|x| &x.key == k)) else {
            return Err(input_error(format!("{name}: {} has no key and is not sharded: name the planned key", c.namespace)));
        };
        let rules = policy::evaluate(&c.effective_rules(&p.defaults), &RuleInput { score: cand.score, metrics: &cand.metrics });
        results.push(CollectionCheck {
            namespace: c.namespace.to_string(),
            key: cand.key.clone(),
            score: cand.score,
            verdict: cand.verdict,
            passed: rules.iter().all(|x| x.passed),
            rules,
            reasons: cand.reasons.clone(),
        });
    }
    let passed = results.iter().all(|c| c.passed);
    let cr = CheckReport { schema_version: SCHEMA_VERSION, tool: ToolInfo::this(), policy: name, passed, collections: results };
    write_check(&cr, a.format, out)?;
    github::report_check(&cr, a.format, out)?;
    Ok(if passed { Outcome::Success } else { Outcome::GateFailed })
}
