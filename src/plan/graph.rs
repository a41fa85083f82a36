//! The workload as a graph (docs/reference.md "plan", `edges`): collections joined by the
//! transactions and joins that touch both, weighted by their share, and whether the plan
//! keeps each pair on one shard or cuts it. The HTML draws it.

use super::evaluate::{Follow, Unit};
use super::input::Choice;
use super::layout::Layout;
use crate::model::Query;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Two collections the workload touches together.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Edge {
    pub(crate) a: String,
    pub(crate) b: String,
    /// Transactions touching both, in percent of the transactions.
    pub(crate) transactions_percent: f64,
    /// Joins (`$lookup`, `$graphLookup`) between the two.
    pub(crate) joins: u64,
    /// Of the transactions touching both, the share in which the plan puts both
    /// collections' operations on one shard (a unit they share).
    pub(crate) kept_together: f64,
    /// The plan cuts the edge: its two collections meet on one shard in less than half of
    /// the transactions touching both (or, for a join only, are not co-located).
    pub(crate) cut: bool,
}

/// Every pair of the plan's collections that transactions or joins touch together.
pub(crate) fn edges(layout: &Layout, transactions: &[&[Query]], joins: &[&Query]) -> Vec<Edge> {
    // (a, b) -> (transactions touching both, of which together)
    let mut pairs: BTreeMap<(usize, usize), (u64, u64)> = BTreeMap::new();
    for ops in transactions {
        let units = layout.units(ops, &|_, _| Follow::AsIs);
        let mut by_coll: BTreeMap<usize, BTreeSet<&Unit>> = BTreeMap::new();
        for (_, c, u) in &units {
            by_coll.entry(*c).or_default().insert(u);
        }
        let colls: Vec<usize> = by_coll.keys().copied().collect();
        for (i, a) in colls.iter().enumerate() {
            for b in &colls[i + 1..] {
                let (ua, ub) = (&by_coll[a], &by_coll[b]);
                let one = |s: &BTreeSet<&Unit>| s.len() == 1 && !s.contains(&Unit::Spread);
                let together = one(ua) && one(ub) && ua == ub;
                let e = pairs.entry((*a, *b)).or_default();
                e.0 += 1;
                e.1 += together as u64;
            }
        }
    }
    let mut joined: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    for q in joins {
        let Some(a) = layout.index_of(&q.ns) else { continue };
        for j in &q.joins {
            if let Some(b) = layout.index_of(&j.from).filter(|b| *b != a) {
                *joined.entry((a.min(b), a.max(b))).or_default() += 1;
            }
        }
    }
    let n = transactions.len().max(1) as f64;
    let keys: BTreeSet<(usize, usize)> = pairs.keys().chain(joined.keys()).copied().collect();
    keys.into_iter()
        .map(|(a, b)| {
            let (both, together) = pairs.get(&(a, b)).copied().unwrap_or((0, 0));
            let kept = if both > 0 {
                together as f64 / both as f64
            } else {
                // A join alone: together when co-located by zones or both unsharded on one shard.
                let zoned = layout.group[a].is_some() && layout.group[a] == layout.group[b];
                let unsharded = |c: usize| layout.choices[c] == Choice::Unsharded;
                let one_home = unsharded(a) && unsharded(b) && layout.home[a] == layout.home[b];
                if zoned || one_home {
                    1.0
                } else {
                    0.0
                }
            };
            Edge {
                a: layout.inputs[a].namespace.clone(),
                b: layout.inputs[b].namespace.clone(),
                transactions_percent: (both as f64 * 1000.0 / n).round() / 10.0,
                joins: joined.get(&(a, b)).copied().unwrap_or(0),
                kept_together: (kept * 1000.0).round() / 1000.0,
                cut: kept < 0.5,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::evaluate::tests::{op, orders_customers_items, settings};
    use super::*;
    use crate::model::Op;
    use bson::doc;

    /// Hand-worked: orders and customers zoned on the customer id, items unsharded on shard0.
    /// Four transactions: orders+customers for customer 150 (zone 1: together), orders
    /// (customer 150) + items (shard0: apart), orders (customer 50, zone 0) + items (shard0:
    /// together), customers 150 + items (apart). orders-customers: 1 of 4 transactions (25%),
    /// kept 1/1; orders-items: 2 of 4 (50%), kept 1/2 (not cut); customers-items: 25%, kept 0: cut.
    #[test]
    fn edges_by_hand() {
        let (inputs, linked, choices) = orders_customers_items();
        let layout = Layout::new(&inputs, &choices, &linked, &settings());
        let o = |c: i32| op(Op::Find, "s.orders", doc! {"customerId": c});
        let item = || op(Op::Find, "s.items", doc! {"_id": "a"});
        let t1 = vec![o(150), op(Op::Update, "s.customers", doc! {"_id": 150})];
        let t2 = vec![o(150), item()];
        let t3 = vec![o(50), item()];
        let t4 = vec![op(Op::Update, "s.customers", doc! {"_id": 150}), item()];
        let txns: Vec<&[Query]> = vec![&t1, &t2, &t3, &t4];
        let e = edges(&layout, &txns, &[]);
        let get = |a: &str, b: &str| e.iter().find(|x| x.a == a && x.b == b).unwrap_or_else(|| panic!("{a}-{b}: {e:#?}")).clone();
        let oc = get("s.orders", "s.customers");
        assert_eq!((oc.transactions_percent, oc.kept_together, oc.cut), (25.0, 1.0, false));
        let oi = get("s.orders", "s.items");
        assert_eq!((oi.transactions_percent, oi.kept_together, oi.cut), (50.0, 0.5, false));
        let ci = get("s.customers", "s.items");
        assert_eq!((ci.transactions_percent, ci.kept_together, ci.cut), (25.0, 0.0, true));
    }
}
