//! The target version's verdict on each write of the transactions the search evaluates, under
//! each candidate key of its collection, worked out once for the whole search.
//!
//! The search lays out every combination of keys it tries and asks, for each, whether the
//! target version refuses a write of each transaction (`Layout::refusal`): the same write under
//! the same key on the same version again and again (perf on the 500 MB `gen-plan` log:
//! `Layout::refusal` 4-5% of `plan`'s CPU, nearly all of it `write_targeting::verdict`
//! walking the write's filter anew). `verdict` is a pure function of the write, the key and the
//! version, so its answer is kept per (write, candidate) and looked up after the first time.
//!
//! A write is known by its address: only writes registered here are kept, all borrowed for
//! the memo's lifetime `'q`, so no other query can sit at one of those addresses while it
//! lives. Anything else (a write a fix rewrote, a test's query) is worked out as before.

use super::input::CollectionInput;
use crate::model::Query;
use crate::rules::write_targeting::Refusal;
use std::marker::PhantomData;
use std::sync::OnceLock;

/// Per registered write, per candidate of its collection: the refusal, once asked.
pub(crate) struct Verdicts<'q> {
    version: Option<(u32, u32)>,
    /// A write's address -> (its collection, where its candidates' cells start, how many).
    at: ahash::AHashMap<usize, (usize, usize, usize)>,
    cells: Vec<OnceLock<Option<Box<Refusal>>>>,
    queries: PhantomData<&'q Query>,
}

impl<'q> Verdicts<'q> {
    /// Room for every write of `transactions` on a collection of `inputs`, on `version`.
    pub(crate) fn new(inputs: &[CollectionInput], version: Option<(u32, u32)>, transactions: &[&[&'q [Query]]]) -> Self {
        let mut at = ahash::AHashMap::new();
        let mut n = 0;
        for q in transactions.iter().flat_map(|t| t.iter()).flat_map(|ops| ops.iter()) {
            let Some(c) = inputs.iter().position(|i| i.namespace == q.ns) else { continue };
            at.entry(q as *const Query as usize).or_insert_with(|| {
                let (start, len) = (n, inputs[c].candidates.len());
                n += len;
                (c, start, len)
            });
        }
        let cells = std::iter::repeat_with(OnceLock::new).take(n).collect();
        Verdicts { version, at, cells, queries: PhantomData }
    }

    /// The refusal of `q` under candidate `k` of collection `c` on `version`: kept, or worked
    /// out by `work` (and kept) the first time.
    pub(crate) fn refusal(
        &self,
        q: &Query,
        c: usize,
        k: usize,
        version: Option<(u32, u32)>,
        work: impl FnOnce() -> Option<Refusal>,
    ) -> Option<Refusal> {
        let cell = self
            .at
            .get(&(q as *const Query as usize))
            .filter(|(qc, _, len)| *qc == c && k < *len && version == self.version)
            .map(|(_, start, _)| &self.cells[start + k]);
        match cell {
            Some(cell) => cell.get_or_init(|| work().map(Box::new)).as_deref().cloned(),
            None => work(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::evaluate::figures;
    use super::super::evaluate::tests::{op, orders_customers_items, settings};
    use super::super::input::Settings;
    use super::super::layout::{with_verdicts, Layout};
    use super::*;
    use crate::model::Op;
    use bson::doc;

    /// The kept verdicts answer as `verdict` itself (issue 48's ship transaction, refused on
    /// 6.0 with code 61 and fix customerId by hand), the second time from the cell; a write not
    /// registered, or asked on another version, is worked out anew.
    #[test]
    fn kept_verdicts_answer_as_the_verdict() {
        let (inputs, linked, choices) = orders_customers_items();
        let ship = vec![op(Op::Find, "s.customers", doc! {"_id": 150}), op(Op::Update, "s.orders", doc! {"number": 7})];
        let pay = vec![op(Op::Find, "s.customers", doc! {"_id": 150}), op(Op::Update, "s.orders", doc! {"customerId": 150})];
        let txns: Vec<&[Query]> = vec![&ship, &pay];
        let kept = Verdicts::new(&inputs, Some((6, 0)), &[&txns]);
        // Every write on a plan collection has one cell per candidate of its collection.
        assert_eq!(kept.cells.len(), 4);
        let plain = Layout::new(&inputs, &choices, &linked, &settings());
        for _ in 0..2 {
            let memo = with_verdicts(Layout::new(&inputs, &choices, &linked, &settings()), &kept);
            let (c, r) = memo.refused(&ship).expect("refused on 6.0");
            assert_eq!((c, r.code, r.fix.clone()), (0, crate::rules::write_targeting::SHARD_KEY_NOT_FOUND, vec!["customerId".to_string()]));
            assert_eq!(memo.refused(&ship), plain.refused(&ship));
            assert!(memo.refused(&pay).is_none());
            assert_eq!(figures(&memo, &txns, &[]), figures(&plain, &txns, &[]));
        }
        assert!(kept.cells[..2].iter().any(|c| c.get().is_some_and(Option::is_some)), "the refusal is kept");
        // Not registered: worked out (the same write, another address).
        let copy = ship.clone();
        let memo = with_verdicts(Layout::new(&inputs, &choices, &linked, &settings()), &kept);
        assert_eq!(memo.refused(&copy), plain.refused(&copy));
        // Another version: 7.1 runs it (two-phase), whatever 6.0's cell holds.
        let seven = Settings { target_version: Some((7, 1)), ..settings() };
        assert!(with_verdicts(Layout::new(&inputs, &choices, &linked, &seven), &kept).refused(&ship).is_none());
    }
}
