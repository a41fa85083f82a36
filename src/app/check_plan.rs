//! `check`'s `[plan]`: the whole database planned with the declared choices kept (`plan`'s
//! what if), and the plan rules judged on the declared plan beside shardkey's own.

use super::request::{CheckRequest, GivenChoice, InputRequest, PlanRequest};
use crate::error::usage_error;
use crate::plan::outcome::PlannedCollection;
use crate::policy::plan::{PlanInput, PlanPolicy};
use crate::policy::RuleResult;
use crate::report::Format;
use anyhow::Result;

/// The database planned and the plan rules' results.
pub(super) fn run(a: &CheckRequest, pp: &PlanPolicy) -> Result<(String, Vec<RuleResult>)> {
    if a.dump.is_none() && a.input.uri.is_none() {
        return Err(usage_error("the policy's [plan] plans the whole database: give --dump DIR (a mongodump of it) or --uri"));
    }
    let mut given: Vec<GivenChoice> =
        pp.keys.iter().map(|(c, k)| GivenChoice { origin: "[plan.keys]", collection: c.clone(), key: Some(k.clone()) }).collect();
    given.extend(pp.unsharded.iter().map(|c| GivenChoice { origin: "[plan] unsharded", collection: c.clone(), key: None }));
    let uri_db = a.input.uri.as_deref().and_then(crate::util::uri::ConnectionString::parse).and_then(|c| c.database());
    let req = PlanRequest {
        input: InputRequest { docs: None, namespace: None, ..a.input.clone() },
        dump: a.dump.clone(),
        database: pp.database.clone().or(uri_db.filter(|_| a.dump.is_none())),
        // The policy's [plan] target_version, else --target-version.
        target_version: pp.target_version.or(a.input.rules_version.as_ref().map(|v| v.major_minor())),
        shard_size_bytes: None,
        shard_ops_per_second: None,
        given,
        format: Format::Json,
    };
    let own = super::plan::plan(&req)?;
    let what = |c: &PlannedCollection| match (&c.key, &c.shard) {
        (Some(k), _) => format!("{} {k}", c.action),
        (None, Some(s)) => format!("{} on {s}", c.action),
        (None, None) => c.action.to_string(),
    };
    let input = match &own.given {
        Some(g) => PlanInput {
            refused: g.choices.iter().filter_map(|c| Some((c.namespace.clone(), c.refused.clone()?, c.refused_by.clone()))).collect(),
            declared_share: g.transactions.single_shard_share,
            own_share: own.transactions.single_shard_share,
            seen_in_part: own.transactions.single_shard_share_range.is_some(),
            not_placed_percent: own.transactions.not_placed.as_ref().map(|n| n.transactions_percent),
            differing: g
                .collections
                .iter()
                .filter_map(|c| {
                    let o = own.collections.iter().find(|o| o.namespace == c.namespace)?;
                    (what(c) != what(o)).then(|| (c.namespace.clone(), what(c), what(o)))
                })
                .collect(),
            blockers: g
                .transactions
                .blockers
                .iter()
                .map(|b| {
                    format!("{:.1}% of transactions: {} ({} on {}); fix: {}", b.transactions_percent, b.shape, b.op, b.namespace, b.fix)
                })
                .collect(),
        },
        // Nothing declared: the plan is shardkey's own.
        None => PlanInput {
            refused: Vec::new(),
            declared_share: own.transactions.single_shard_share,
            own_share: own.transactions.single_shard_share,
            seen_in_part: own.transactions.single_shard_share_range.is_some(),
            not_placed_percent: own.transactions.not_placed.as_ref().map(|n| n.transactions_percent),
            differing: Vec::new(),
            blockers: Vec::new(),
        },
    };
    Ok((own.database.clone(), crate::policy::evaluate_plan(&pp.effective_rules(), &input)))
}
