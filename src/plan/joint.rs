//! Fixes that only help together (issue 49): blockers that keep the very same transactions
//! off one shard, each of them in every one (a user read and a statistics update inside the
//! order transaction), are one fix: fixed one at a time, each leaves the share where it was.
//! The fix that is always open to the application is to take those statements out of the
//! transaction; its share is measured with them taken out, each then one statement on its
//! own shard.

use super::layout::Layout;
use crate::model::Query;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One blocker as the grouping needs it: its statements (namespace and operation), the
/// transactions it keeps off one shard (indexes), and the share with its own fix alone.
pub(crate) struct Member<'a> {
    pub(crate) namespace: &'a str,
    pub(crate) op: &'static str,
    pub(crate) transactions: &'a BTreeSet<usize>,
    pub(crate) share_if_fixed: f64,
}

/// The one fix a blocker shares with the others blocking the same transactions.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JointFix {
    /// Every statement of the fix ("the insert on shop.payments"), in the blockers' order.
    pub(crate) statements: Vec<String>,
    pub(crate) fix: String,
    /// The share of transactions on one shard with the statements taken out.
    pub(crate) single_shard_share_if_fixed: f64,
}

/// For each member, the joint fix it belongs to: members whose transactions are the same
/// set, naming two statements or more, whose joint share is above what each fix alone gives.
pub(crate) fn group(layout: &Layout, transactions: &[&[Query]], members: &[Member]) -> Vec<Option<JointFix>> {
    let mut out = vec![None; members.len()];
    let mut by_set: BTreeMap<&BTreeSet<usize>, Vec<usize>> = BTreeMap::new();
    for (i, m) in members.iter().enumerate().filter(|(_, m)| !m.transactions.is_empty()) {
        by_set.entry(m.transactions).or_default().push(i);
    }
    for (set, idx) in by_set {
        let mut statements: Vec<(&str, &'static str)> = Vec::new();
        for &i in &idx {
            let s = (members[i].namespace, members[i].op);
            if !statements.contains(&s) {
                statements.push(s);
            }
        }
        if statements.len() < 2 {
            continue;
        }
        let out_of = |q: &Query| statements.iter().any(|(ns, op)| q.ns == *ns && q.op.name() == *op);
        let share = transactions
            .iter()
            .map(|ops| {
                let rest: Vec<Query> = ops.iter().filter(|q| !out_of(q)).cloned().collect();
                if rest.is_empty() {
                    // Taking every statement out leaves no transaction: not a fix of it (its
                    // atomicity is what the application asked for), so it counts as it is.
                    layout.transaction(ops)
                } else {
                    layout.transaction(&rest)
                }
            })
            .sum::<f64>()
            / transactions.len().max(1) as f64;
        let share = (share * 1000.0).round() / 1000.0;
        let alone = idx.iter().map(|i| members[*i].share_if_fixed).fold(0.0, f64::max);
        if share <= alone + 1e-9 {
            continue;
        }
        let named: Vec<String> = statements.iter().map(|(ns, op)| format!("the {op} on {ns}")).collect();
        let fix = format!(
            "take {} out of the transaction: every one of these {} transactions holds them all, so fixed one at a time each leaves the share at {}",
            and_list(&named),
            crate::util::text::fmt_count(set.len() as u64),
            pct(alone)
        );
        let joint = JointFix { statements: named, fix, single_shard_share_if_fixed: share };
        for i in idx {
            out[i] = Some(joint.clone());
        }
    }
    out
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

#[cfg(test)]
mod tests {
    use super::super::evaluate::tests::{op, orders_customers_items, settings};
    use super::*;
    use crate::model::Op;
    use bson::doc;

    /// Hand-worked, four shards, zones at 100/200/300 (zone i on shard i): orders and
    /// customers zoned on the customer id, items unsharded on shard0 (read only).
    /// t1, t2: customer 150's orders (zone 1), an item (shard0) and an order updated by _id
    /// alone (every shard); t3: customer 50's orders (zone 0): one shard. Share 1/3. A copy of
    /// items per zone alone: t1, t2 still spread by the update: 1/3; the customer id added to
    /// the update alone: items still on shard0: 1/3. Both blockers keep t1 and t2 off one
    /// shard: one fix, the read of items and the update taken out: 3/3.
    #[test]
    fn blockers_of_the_same_transactions_are_one_fix() {
        let (inputs, linked, choices) = orders_customers_items();
        let layout = Layout::new(&inputs, &choices, &linked, &settings());
        let t = || {
            vec![
                op(Op::Find, "s.orders", doc! {"customerId": 150}),
                op(Op::Find, "s.items", doc! {"_id": "sku-1"}),
                op(Op::Update, "s.orders", doc! {"_id": 9}),
            ]
        };
        let (t1, t2, t3) = (t(), t(), vec![op(Op::Find, "s.orders", doc! {"customerId": 50})]);
        let txns: Vec<&[Query]> = vec![&t1, &t2, &t3];
        let b = super::super::blockers::find(&layout, &txns);
        assert_eq!(b.list.len(), 2, "{:#?}", b.list);
        for x in &b.list {
            assert_eq!(((x.single_shard_share_if_fixed * 3.0).round(), x.transactions_percent), (1.0, 66.7), "{x:#?}");
            let j = x.joint_fix.as_ref().unwrap_or_else(|| panic!("{x:#?}"));
            assert_eq!(j.statements, ["the find on s.items", "the update on s.orders"]);
            assert_eq!(j.single_shard_share_if_fixed, 1.0);
            assert_eq!(j.fix, "take the find on s.items and the update on s.orders out of the transaction: every one of these 2 transactions holds them all, so fixed one at a time each leaves the share at 33%");
        }
        // Transactions holding only the two blocking statements: taking both out leaves no
        // transaction, which fixes nothing of it (a new-user trial's insert + update pair).
        let only = || vec![op(Op::Find, "s.items", doc! {"_id": "sku-1"}), op(Op::Update, "s.orders", doc! {"_id": 9})];
        let (o1, o2) = (only(), only());
        let b = super::super::blockers::find(&layout, &[&o1, &o2, &t3]);
        assert!(b.list.iter().all(|x| x.joint_fix.is_none()), "{:#?}", b.list);
        // A blocker alone in its transactions, or one whose fix alone suffices: no joint fix.
        let t4 = vec![op(Op::Find, "s.orders", doc! {"customerId": 150}), op(Op::Find, "s.items", doc! {"_id": "sku-1"})];
        let b = super::super::blockers::find(&layout, &[&t1, &t4]);
        assert!(b.list.iter().all(|x| x.joint_fix.is_none()), "{:#?}", b.list);
    }
}
