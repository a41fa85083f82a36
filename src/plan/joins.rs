//! Why the plan's joins leave one shard: the join most of the spread ones share, and what
//! spreads it, in words (`Layout::join` decides each; this names its cause). A trial's plan
//! read "joins: 376 found, 0% on one shard" and said no more.

use super::input::Choice;
use super::layout::Layout;
use crate::model::query::JoinStage;
use crate::model::Query;
use std::collections::BTreeMap;

/// What sends a join to every shard holding the joined collection.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Cause {
    /// The joined collection's key starts with another field than the one matched.
    KeyLeadsWith(String),
    /// The matched field leads the key, but the joining documents' values are not fixed.
    ValuesNotFixed,
    /// `$unionWith`, or a `$lookup` matching no field by equality (a pipeline of its own).
    NoFieldMatched,
}

/// The most common cause among the joins not certain to stay on one shard, with its count;
/// None when every join stays on one shard or none spreads to a sharded collection.
pub(crate) fn why(layout: &Layout, joins: &[&Query]) -> Option<String> {
    let mut by: BTreeMap<(&str, &str, Option<&str>, Cause), u64> = BTreeMap::new();
    let mut spread = 0u64;
    for q in joins {
        if layout.join(q) >= 1.0 {
            continue;
        }
        spread += 1;
        // The first join into a sharded collection: an unsharded one lives on one shard.
        let first = q.joins.iter().find_map(|j| {
            let b = layout.index_of(&j.from)?;
            let Choice::Key(k) = layout.choices[b] else { return None };
            Some((j, &layout.inputs[b].candidates[k].key.fields[0].path))
        });
        let Some((j, lead)) = first else { continue };
        let cause = match (&j.foreign_field, j.stage) {
            (None, _) | (_, JoinStage::UnionWith) => Cause::NoFieldMatched,
            (Some(f), _) if f != lead => Cause::KeyLeadsWith(lead.clone()),
            _ => Cause::ValuesNotFixed,
        };
        *by.entry((q.ns.as_str(), j.from.as_str(), j.foreign_field.as_deref(), cause)).or_default() += 1;
    }
    let ((a, b, f, cause), n) = by.into_iter().max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0)))?;
    let f = f.unwrap_or_default();
    let what = match cause {
        Cause::KeyLeadsWith(lead) => {
            format!("{b}'s key starts with {lead} and the join matches {f}, so each reads every shard holding {b}")
        }
        Cause::ValuesNotFixed => format!(
            "the join matches {b}'s key on {f}, but {a}'s filters do not fix the values it joins on, so each reads every shard holding {b}"
        ),
        Cause::NoFieldMatched => format!("the join names no field of {b}'s key by equality, so each reads every shard holding {b}"),
    };
    let count = crate::util::text::fmt_count;
    let of = match (n == spread, n) {
        (true, 1) => "the one join not on one shard".to_string(),
        (true, _) => format!("all {} joins not on one shard", count(n)),
        _ => format!("{} of the {} joins not on one shard", count(n), count(spread)),
    };
    Some(format!("{of}: {a} joins {b}: {what}"))
}

#[cfg(test)]
mod tests {
    use super::super::evaluate::tests::{op, orders_customers_items, settings};
    use super::*;
    use crate::model::query::Join;
    use crate::model::Op;
    use bson::doc;

    fn join(stage: JoinStage, from: &str, local: Option<&str>, foreign: Option<&str>) -> Query {
        let mut j = op(Op::Aggregate, "s.orders", doc! {"customerId": 250});
        j.joins.push(Join { stage, from: from.into(), local_field: local.map(Into::into), foreign_field: foreign.map(Into::into) });
        j
    }

    /// orders and customers zoned together on the customer id. A lookup of a customer by _id
    /// stays on one shard; two by name (customers' key starts with _id) and a $unionWith read
    /// every shard holding customers: the most common cause is named, with its count (2 of 3).
    #[test]
    fn the_most_common_cause_of_spread_joins_is_named() {
        let (inputs, linked, choices) = orders_customers_items();
        let layout = Layout::new(&inputs, &choices, &linked, &settings());
        let by_id = join(JoinStage::Lookup, "s.customers", Some("customerId"), Some("_id"));
        let by_name = join(JoinStage::Lookup, "s.customers", Some("customerName"), Some("name"));
        let union = join(JoinStage::UnionWith, "s.customers", None, None);
        assert_eq!(layout.join(&by_id), 1.0);
        assert_eq!(why(&layout, &[&by_id]), None);
        assert_eq!(
            why(&layout, &[&by_id, &by_name, &union, &by_name]).as_deref(),
            Some("2 of the 3 joins not on one shard: s.orders joins s.customers: s.customers's key starts with _id and the join matches name, so each reads every shard holding s.customers")
        );
        assert_eq!(
            why(&layout, &[&union]).as_deref(),
            Some("the one join not on one shard: s.orders joins s.customers: the join names no field of s.customers's key by equality, so each reads every shard holding s.customers")
        );
    }
}
