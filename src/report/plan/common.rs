//! What the plan and the plan as given both say: a share (or its range), a collection's action,
//! the failing transactions' line, the blockers' lines.

use crate::plan::blockers::Blocker;
use crate::plan::bounds::ShareRange;
use crate::plan::outcome::{PlannedCollection, ShareSummary};

pub(super) fn share(x: Option<f64>) -> String {
    x.map(|v| format!("{:.0}%", v * 100.0)).unwrap_or_else(|| "none found".into())
}

/// A share, or the range it may take when transactions are seen in part.
pub(super) fn share_or_range(x: Option<f64>, range: Option<ShareRange>) -> String {
    match range {
        Some(r) if r.low == r.high => share(Some(r.low)),
        Some(r) => format!("between {} and {}", share(Some(r.low)), share(Some(r.high))),
        None => share(x),
    }
}

pub(super) fn what(c: &PlannedCollection) -> String {
    match (&c.key, &c.shard) {
        (Some(k), _) => format!("{} {k}", c.action),
        (None, Some(s)) => format!("{} on {s}", c.action),
        (None, None) => c.action.to_string(),
    }
}

/// The failing transactions' line (the plan's, or the DBA's in the what-if): apart from the
/// single-shard share, which counts them as not on one shard.
pub(super) fn failing(share_of: Option<f64>, version: Option<&str>) -> Option<String> {
    share_of.map(|f| {
        format!(
            "! {} of transactions would fail on {}: each holds a write the server refuses under these keys (the blockers \"refused by the server\" name each with its fix); counted as not on one shard",
            share(Some(f)),
            version.map_or("the target version".to_string(), |v| format!("MongoDB {v}"))
        )
    })
}

/// Blockers shown in the table, Markdown and HTML (all of them in the JSON).
const BLOCKERS_SHOWN: usize = 3;

/// What keeps a plan's transactions off one shard (shardkey's, or the plan as given: the
/// same summary of either): a title, then one line per blocker shown.
pub(super) fn blockers(whose: &str, t: ShareSummary) -> Option<(String, Vec<String>)> {
    blockers_of(
        whose,
        share_or_range(t.single_shard_share, t.single_shard_share_range),
        (t.if_all_fixed.is_some() || t.if_all_fixed_range.is_some()).then(|| share_or_range(t.if_all_fixed, t.if_all_fixed_range)),
        t.blockers,
        t.single_shard_share.is_none() && t.single_shard_share_range.is_some(),
    )
}

/// The same for any plan's blockers (`whose`: "transactions", "your plan's transactions").
/// `whole_only`: the share is a range (transactions seen in part), so each blocker's figures,
/// measured on the transactions seen whole, say so rather than pass for the whole workload's.
pub(super) fn blockers_of(
    whose: &str,
    single: String,
    if_all: Option<String>,
    list: &[Blocker],
    whole_only: bool,
) -> Option<(String, Vec<String>)> {
    if list.is_empty() {
        return None;
    }
    let mut title = format!("What keeps {whose} off one shard ({single} on one shard");
    if let Some(all) = if_all {
        title.push_str(&format!(", {all} with every fix"));
    }
    title.push(')');
    let lines = list
        .iter()
        .take(BLOCKERS_SHOWN)
        .map(|b| {
            // A fix that only helps with others: the joint one leads, its own follows.
            let joint = b.joint_fix.as_ref().map_or(String::new(), |j| {
                format!(
                    "fix together: {} ({}{} on one shard); alone, ",
                    j.fix,
                    share(Some(j.single_shard_share_if_fixed)),
                    if whole_only { " of those" } else { "" }
                )
            });
            format!(
                "{:.1}% of {}: {} ({} on {}), e.g. {}; {joint}fix: {} ({}{} on one shard)",
                b.transactions_percent,
                if whole_only { "the transactions seen whole" } else { "transactions" },
                b.shape,
                b.op,
                b.namespace,
                b.example,
                b.fix,
                share(Some(b.single_shard_share_if_fixed)),
                if whole_only { " of those" } else { "" },
            )
        })
        .collect();
    Some((title, lines))
}

/// What a planned collection warns of: its warning, then each refused write it does not
/// already say (each said once).
pub(super) fn warnings(c: &PlannedCollection) -> impl Iterator<Item = &String> {
    let refused = c.refused_writes.iter().map(|w| &w.message).filter(|m| c.warning.as_ref() != Some(*m));
    c.warning.iter().chain(refused)
}

/// Before the commands: the writes the plan's version refuses under a planned key, which the
/// application changes first (the mongosh script stops on them; a list of commands did not say).
pub(super) fn writes_first(collections: &[PlannedCollection]) -> Vec<String> {
    collections
        .iter()
        .filter(|c| !c.refused_writes.is_empty())
        .map(|c| {
            let share: f64 = c.refused_writes.iter().map(|r| r.percentage_of_writes).sum::<f64>().min(100.0);
            let mut fields: Vec<String> = Vec::new();
            for f in c.refused_writes.iter().flat_map(|r| &r.filter_fix) {
                if !fields.contains(f) {
                    fields.push(f.clone());
                }
            }
            format!(
                "first: {share:.1}% of {}'s sampled updates and deletes must name {} in their filters, or the server refuses them once it is sharded",
                c.namespace,
                crate::util::text::and_list(&fields)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::blockers::Shape;

    /// A blocker's figures are measured on the transactions evaluated: with the share a range
    /// (transactions seen in part) they say "of the transactions seen whole", else as before.
    #[test]
    fn blockers_under_a_range_say_what_they_are_measured_on() {
        let b = Blocker {
            namespace: "s.payments".into(),
            shape: Shape::WithoutZoneField,
            op: "update",
            transactions_percent: 14.1,
            example: "{orderId: 1}".into(),
            fix: "add shopId to the update's filter".into(),
            single_shard_share_if_fixed: 0.85,
            error_code: None,
            accepted_from: None,
            joint_fix: None,
        };
        let (_, whole) = blockers_of("transactions", "66%".into(), None, std::slice::from_ref(&b), false).unwrap();
        assert_eq!(
            whole[0],
            "14.1% of transactions: without the zone field (update on s.payments), e.g. {orderId: 1}; fix: add shopId to the update's filter (85% on one shard)"
        );
        let (_, part) = blockers_of("transactions", "between 36% and 85%".into(), None, &[b], true).unwrap();
        assert_eq!(
            part[0],
            "14.1% of the transactions seen whole: without the zone field (update on s.payments), e.g. {orderId: 1}; fix: add shopId to the update's filter (85% of those on one shard)"
        );
    }
}
