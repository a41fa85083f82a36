//! The single-shard share when the source shows some transactions only in part (the
//! profiler writes an update's or a delete's statement without its session: those that
//! placement could not put in one transaction may belong to any transaction open then).
//!
//! Not one figure on the transactions seen whole (a biased few: the ones without unplaced
//! writes near them), but the range the share may take over every placement of what is
//! unplaced, over every transaction found:
//! - highest: each transaction as its shown part says. A statement added to a transaction
//!   never brings it onto fewer shards, so the shown part's chance is an upper bound.
//! - lowest: a statement runs in one transaction or none, and only in one that was open
//!   then on its client (`placement`: the transactions that could hold it). So the
//!   unplaced statements take off one shard at most one transaction each, among those that
//!   could hold them: the most the share can lose is a matching of statements to such
//!   transactions, each weighing its chance; the heaviest is found exactly by taking the
//!   transactions most likely on one shard first, each matched when an augmenting path
//!   frees a statement for it (the transversal matroid's greedy). A statement whose unit
//!   under the plan is already one of a transaction's units changes nothing there, whatever
//!   else joins it (the chance depends on the set of units): no edge. A statement without
//!   client or time may be any transaction's. A transaction that may have begun before the
//!   source's first operation may miss statements the source never held: off one shard.

use super::evaluate::{Follow, Unit};
use super::layout::Layout;
use crate::model::Query;
use serde::Serialize;

/// The lowest and highest share the transactions found may have on one shard.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct ShareRange {
    pub(crate) low: f64,
    pub(crate) high: f64,
}

/// A statement left unplaced, and the transactions seen in part (indexes into
/// `Seen::in_part`) that could hold it.
#[derive(Debug, Clone)]
pub(crate) struct Unplaced<'a> {
    pub(crate) q: &'a Query,
    pub(crate) could: Vec<usize>,
}

/// What the source showed of the transactions found.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Seen<'a> {
    /// Seen whole.
    pub(crate) whole: &'a [&'a [Query]],
    /// Seen in part (their shown statements).
    pub(crate) in_part: &'a [&'a [Query]],
    /// Per transaction in part: it may miss statements the source never held (it may have
    /// begun before the source's first operation).
    pub(crate) unbounded: &'a [bool],
    /// Statements placement left open, with the transactions that could hold them.
    pub(crate) unplaced: &'a [Unplaced<'a>],
    /// Statements without client or time: any transaction's (scaled to the transactions
    /// kept when they are a sample).
    pub(crate) anywhere: u64,
}

impl Seen<'_> {
    /// The range of the share, each transaction's chance given by `chance`; `changes(w, t)`:
    /// whether statement `w` added to in-part transaction `t` can change its chance. None
    /// when no transaction is seen in part (the share is then one figure).
    fn range(&self, chance: impl Fn(&[Query]) -> f64, changes: impl Fn(&Query, usize) -> bool) -> Option<ShareRange> {
        if self.in_part.is_empty() {
            return None;
        }
        let whole: f64 = self.whole.iter().map(|ops| chance(ops)).sum();
        let part: Vec<f64> = self.in_part.iter().map(|ops| chance(ops)).collect();
        let unbounded = |t: usize| self.unbounded.get(t).copied().unwrap_or(false);
        let edges: Vec<Vec<usize>> =
            self.unplaced.iter().map(|w| w.could.iter().copied().filter(|t| !unbounded(*t) && changes(w.q, *t)).collect()).collect();
        let bounded: Vec<(f64, bool)> = part.iter().enumerate().map(|(t, p)| (*p, unbounded(t))).collect();
        Some(share_range(whole, self.whole.len(), &bounded, &edges, self.anywhere))
    }
}

/// `whole`: the summed chances of `n_whole` transactions seen whole; `part`: each in-part
/// transaction's chance from its shown part, and whether it is unbounded; `edges`: per
/// unplaced statement, the in-part transactions it could take off one shard; `anywhere`
/// statements could take any.
pub(crate) fn share_range(whole: f64, n_whole: usize, part: &[(f64, bool)], edges: &[Vec<usize>], anywhere: u64) -> ShareRange {
    let n = (n_whole + part.len()).max(1) as f64;
    let shown: f64 = part.iter().map(|x| x.0).sum();
    let unbounded: f64 = part.iter().filter(|x| x.1).map(|x| x.0).sum();
    // Transactions by chance, highest first; each matched to a statement if a path frees one.
    let mut by_chance: Vec<usize> = (0..part.len()).filter(|t| !part[*t].1 && part[*t].0 > 0.0).collect();
    by_chance.sort_by(|a, b| part[*b].0.total_cmp(&part[*a].0).then(a.cmp(b)));
    let mut holds: Vec<Vec<usize>> = vec![Vec::new(); part.len()];
    for (w, ts) in edges.iter().enumerate() {
        for t in ts {
            holds[*t].push(w);
        }
    }
    let mut owner: Vec<Option<usize>> = vec![None; edges.len()];
    let mut taken = 0.0;
    let mut unmatched = Vec::new();
    for &t in &by_chance {
        let mut seen = vec![false; edges.len()];
        if augment(t, &holds, &mut owner, &mut seen) {
            taken += part[t].0;
        } else {
            unmatched.push(part[t].0);
        }
    }
    // Statements without client or time take the likeliest of the rest.
    taken += unmatched.iter().take(anywhere as usize).sum::<f64>();
    let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
    ShareRange { low: round3(((whole + shown - unbounded - taken) / n).max(0.0)), high: round3((whole + shown) / n) }
}

/// Kuhn's augmenting path from transaction `t`: a statement it could take, free or freed by
/// moving its owner to another statement.
fn augment(t: usize, holds: &[Vec<usize>], owner: &mut [Option<usize>], seen: &mut [bool]) -> bool {
    for &w in &holds[t] {
        if seen[w] {
            continue;
        }
        seen[w] = true;
        let free = match owner[w] {
            None => true,
            Some(o) => augment(o, holds, owner, seen),
        };
        if free {
            owner[w] = Some(t);
            return true;
        }
    }
    false
}

/// The plan's ranges: as is, and with every blocker fixed.
pub(crate) fn ranges(layout: &Layout, blockers: &super::blockers::Blockers, seen: &Seen) -> (Option<ShareRange>, Option<ShareRange>) {
    // As is, a statement whose unit is already one of the transaction's changes nothing.
    let as_is = |_: usize, _: &Query| Follow::AsIs;
    let units: Vec<Vec<Unit>> = seen.in_part.iter().map(|ops| layout.units(ops, &as_is).into_iter().map(|x| x.2).collect()).collect();
    let changes = |w: &Query, t: usize| match layout.index_of(&w.ns) {
        Some(c) => !units[t].contains(&layout.unit(c, &w.filter)),
        None => false,
    };
    let r = seen.range(|ops| layout.transaction(ops), changes);
    // Fixed, the same rule on the units the fixes give (`Layout::units` places the operations
    // placed as they are first, then the others in order). A statement that follows its fix
    // joins a unit already there when one placed as it is gives it one: the transaction's zone
    // (`TransactionZone`), or a zone of its collection's group (`ZoneField`); else it may change
    // what the transaction joins.
    let follow = blockers.follow(layout);
    // Per transaction in part: each operation's unit, with its collection when it is placed as it is.
    let fixed_units: Vec<Vec<(Option<usize>, Unit)>> = seen
        .in_part
        .iter()
        .map(|ops| {
            let as_is = |c: usize, q: &Query| follow(c, q) == Follow::AsIs && q.op != crate::model::Op::Insert;
            layout.units(ops, &follow).into_iter().map(|(i, c, u)| (as_is(c, &ops[i]).then_some(c), u)).collect()
        })
        .collect();
    let changes_fixed = |w: &Query, t: usize| {
        let Some(c) = layout.index_of(&w.ns) else { return false };
        if w.op == crate::model::Op::Insert {
            return true;
        }
        let here = &fixed_units[t];
        // A zone an operation placed as it is gives the transaction (of `c`'s group, when asked).
        let as_is_fixed = |same_group: bool| {
            here.iter().any(|(o, u)| match (o, u) {
                (Some(o), Unit::Fixed(_)) => !same_group || (layout.group[*o].is_some() && layout.group[*o] == layout.group[c]),
                _ => false,
            })
        };
        match follow(c, w) {
            Follow::AsIs => !here.iter().any(|(_, u)| *u == layout.unit(c, &w.filter)),
            Follow::TransactionZone => !as_is_fixed(false),
            Follow::ZoneField => !as_is_fixed(true),
        }
    };
    let fixed = blockers.share_if_all_fixed.and_then(|_| seen.range(|ops| blockers.if_all_fixed(layout, ops), changes_fixed));
    (r, fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: 6 whole transactions, 4 of them on one shard; 4 in part, shown on one shard
    /// with chances 1, 1, 0.25 and 0 (the last already split). Highest: (4 + 2.25) / 10.
    /// Two statements, each able to hold any of them, take off the two most likely (1 and
    /// 1): lowest (4 + 0.25) / 10; ten: every one off, 4 / 10. Two statements that can only
    /// be transaction 2's (0.25) and 3's (0): they take off 0.25 in all. Statement a could
    /// be 0's or 1's, statement b only 0's: both 0 and 1 off (a to 1, b to 0). An unbounded
    /// transaction (0.25) is off whatever; a statement without client or time takes the
    /// likeliest left.
    #[test]
    fn the_range_by_hand() {
        let part = [(1.0, false), (1.0, false), (0.25, false), (0.0, false)];
        let any = |k: usize| vec![vec![0, 1, 2, 3]; k];
        assert_eq!(share_range(4.0, 6, &part, &any(2), 0), ShareRange { low: 0.425, high: 0.625 });
        assert_eq!(share_range(4.0, 6, &part, &any(10), 0), ShareRange { low: 0.4, high: 0.625 });
        assert_eq!(share_range(4.0, 6, &part, &[], 0), ShareRange { low: 0.625, high: 0.625 });
        assert_eq!(share_range(4.0, 6, &part, &[vec![2], vec![3]], 0), ShareRange { low: 0.6, high: 0.625 });
        assert_eq!(share_range(4.0, 6, &part, &[vec![0, 1], vec![0]], 0), ShareRange { low: 0.425, high: 0.625 });
        assert_eq!(share_range(4.0, 6, &part, &[vec![0], vec![0]], 1), ShareRange { low: 0.425, high: 0.625 });
        let part = [(1.0, false), (1.0, false), (0.25, true), (0.0, false)];
        assert_eq!(share_range(4.0, 6, &part, &any(1), 0), ShareRange { low: 0.5, high: 0.625 });
    }

    /// With every fix, by hand (orders and customers zoned on the customer id, items unsharded
    /// on shard0; four shards). Seen whole: t = a read of customer 150's orders and an update of
    /// an order by `_id` alone (0 as is; 1 fixed: the update carries the customer id). Seen in
    /// part: p1 = a read of customer 150's orders (zone 1), p2 = a read of an item (shard0), each
    /// 1 as shown. Two unplaced updates of an order by `_id`, each could be either's.
    /// As is the update reaches several shards: each takes one off, low 0 / 3, high 2 / 3.
    /// Fixed, an update joining p1 follows its zone (orders' own): p1 stays whole; joining p2
    /// (no zone of the orders' group there) it is placed on its own: p2 may be off. Low 2 / 3,
    /// high 3 / 3 (taking every statement as able to change p1 gave 1 / 3).
    #[test]
    fn the_range_with_every_fix_by_hand() {
        use super::super::evaluate::tests::{op, orders_customers_items, settings};
        use crate::model::Op;
        use bson::doc;
        let (inputs, linked, choices) = orders_customers_items();
        let layout = Layout::new(&inputs, &choices, &linked, &settings());
        let t = vec![op(Op::Find, "s.orders", doc! {"customerId": 150}), op(Op::Update, "s.orders", doc! {"_id": 9})];
        let p1 = vec![op(Op::Find, "s.orders", doc! {"customerId": 150})];
        let p2 = vec![op(Op::Find, "s.items", doc! {"_id": "sku-1"})];
        let (w1, w2) = (op(Op::Update, "s.orders", doc! {"_id": 7}), op(Op::Update, "s.orders", doc! {"_id": 8}));
        let whole: Vec<&[Query]> = vec![&t];
        let blockers = super::super::blockers::find(&layout, &whole);
        assert_eq!(blockers.share_if_all_fixed, Some(1.0), "{:#?}", blockers.list);
        let in_part: Vec<&[Query]> = vec![&p1, &p2];
        let unplaced = [Unplaced { q: &w1, could: vec![0, 1] }, Unplaced { q: &w2, could: vec![0, 1] }];
        let seen = Seen { whole: &whole, in_part: &in_part, unbounded: &[false, false], unplaced: &unplaced, anywhere: 0 };
        let (as_is, fixed) = ranges(&layout, &blockers, &seen);
        // (Shares are given to three decimals.)
        assert_eq!(as_is, Some(ShareRange { low: 0.0, high: 0.667 }));
        assert_eq!(fixed, Some(ShareRange { low: 0.667, high: 1.0 }));
    }
}
