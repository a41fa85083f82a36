//! The single-shard share when the source shows some transactions only in part (the
//! profiler writes an update's or a delete's statement without its session: those that
//! placement could not put in one transaction may belong to any transaction open then).
//!
//! Not one figure on the transactions seen whole (a biased few: the ones without unplaced
//! writes near them), but the range the share may take over every placement of what is
//! unplaced, over every transaction found:
//! - highest: each transaction as its shown part says. A statement added to a transaction
//!   never brings it onto fewer shards, so the shown part's chance is an upper bound.
//! - lowest: each unplaced statement belongs to one transaction at most (a statement runs
//!   in one transaction or none), so it can take at most one transaction off one shard: the
//!   `unplaced` statements take off the transactions seen in part most likely on one shard,
//!   one each. A transaction that may have begun before the source's first operation may
//!   miss statements the source never held: it counts off one shard.

use super::Layout;
use crate::model::Query;
use serde::Serialize;

/// The lowest and highest share the transactions found may have on one shard.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct ShareRange {
    pub(crate) low: f64,
    pub(crate) high: f64,
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
    /// Statements whose transaction could not be told, each at most one transaction's
    /// (scaled to the transactions kept when they are a sample).
    pub(crate) unplaced: u64,
}

impl Seen<'_> {
    /// The range of the share, each transaction's chance given by `chance`; none when no
    /// transaction is seen in part (the share is then one figure).
    pub(crate) fn range(&self, chance: impl Fn(&[Query]) -> f64) -> Option<ShareRange> {
        if self.in_part.is_empty() {
            return None;
        }
        let whole: f64 = self.whole.iter().map(|ops| chance(ops)).sum();
        let part: Vec<(f64, bool)> =
            self.in_part.iter().zip(self.unbounded.iter().chain(std::iter::repeat(&false))).map(|(ops, u)| (chance(ops), *u)).collect();
        Some(share_range(whole, self.whole.len(), &part, self.unplaced))
    }
}

/// `whole`: the summed chances of `n_whole` transactions seen whole; `part`: each in-part
/// transaction's chance from its shown part, and whether it is unbounded.
pub(crate) fn share_range(whole: f64, n_whole: usize, part: &[(f64, bool)], unplaced: u64) -> ShareRange {
    let n = (n_whole + part.len()).max(1) as f64;
    let shown: f64 = part.iter().map(|x| x.0).sum();
    let mut bounded: Vec<f64> = part.iter().filter(|x| !x.1).map(|x| x.0).collect();
    let unbounded: f64 = part.iter().filter(|x| x.1).map(|x| x.0).sum();
    bounded.sort_by(|a, b| b.total_cmp(a));
    let taken: f64 = bounded.iter().take(unplaced as usize).sum();
    let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
    ShareRange { low: round3(((whole + shown - unbounded - taken) / n).max(0.0)), high: round3((whole + shown) / n) }
}

/// The plan's ranges: as is, and with every blocker fixed.
pub(crate) fn ranges(layout: &Layout, blockers: &super::blockers::Blockers, seen: &Seen) -> (Option<ShareRange>, Option<ShareRange>) {
    let as_is = seen.range(|ops| layout.transaction(ops));
    let fixed = blockers.share_if_all_fixed.and_then(|_| seen.range(|ops| blockers.if_all_fixed(layout, ops)));
    (as_is, fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: 6 whole transactions, 4 of them on one shard; 4 in part, shown on one shard
    /// with chances 1, 1, 0.25 and 0 (the last already split). Highest: (4 + 2.25) / 10.
    /// Two unplaced statements take off the two most likely (1 and 1): lowest (4 + 0.25) / 10.
    /// Ten unplaced: every one off, 4 / 10. An unbounded one (0.25) is off whatever:
    /// with one unplaced statement, (4 + 2.25 − 0.25 − 1) / 10.
    #[test]
    fn the_range_by_hand() {
        let part = [(1.0, false), (1.0, false), (0.25, false), (0.0, false)];
        assert_eq!(share_range(4.0, 6, &part, 2), ShareRange { low: 0.425, high: 0.625 });
        assert_eq!(share_range(4.0, 6, &part, 10), ShareRange { low: 0.4, high: 0.625 });
        assert_eq!(share_range(4.0, 6, &part, 0), ShareRange { low: 0.625, high: 0.625 });
        let part = [(1.0, false), (1.0, false), (0.25, true), (0.0, false)];
        assert_eq!(share_range(4.0, 6, &part, 1), ShareRange { low: 0.5, high: 0.625 });
    }
}
