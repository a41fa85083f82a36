//! Profiled write statements placed in their transaction by client and time.
//!
//! The profiler writes an update's or a delete's statement without its session (checked on
//! 6.0.5: `command` holds only `q`, `u`, `multi`, `upsert`), while a transaction's reads and
//! inserts carry `lsid`/`txnNumber` there. Every statement of a transaction runs on the
//! primary, from one client, between its first and last statement: a sessionless write from
//! the transaction's client inside that window, where no other transaction of that client is
//! open, is one of its statements (placed), when that client never runs two transactions at
//! once (one thread: nothing else of it runs inside its transaction's span). A write just before or after a transaction's
//! window may be its first or last statement, or a write outside any transaction from the
//! same client: it counts for the links when one transaction of that client could hold it
//! (likely), never for the single-shard share, and the transactions that could hold it are
//! seen in part.
//!
//! Times are the profiler's `ts` (milliseconds, when the operation ended); statements ending
//! in the same millisecond are told apart by their order in `system.profile` (its natural
//! order is the order in which they ended), so a position is `(ts, order read)`.

use crate::model::query::TxnId;
use crate::model::Query;
use std::collections::{BTreeMap, HashMap, HashSet};

/// A transaction ends at most this long after it starts (`transactionLifetimeLimitSeconds`,
/// 60 by default): how far past its last statement shown a statement of it can run.
pub(crate) const TRANSACTION_LIFETIME_MILLIS: i64 = 60_000;
/// Sessionless writes held for placement; past this many, the rest are counted only.
pub(crate) const MAX_LOOSE: usize = 200_000;

/// When a statement ended: the profiler's `ts` (ms), then its order in the source.
pub(crate) type Pos = (i64, u64);

/// Where and when a transaction's profiled statements ran.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Span {
    pub(crate) client: String,
    pub(crate) first: Pos,
    pub(crate) last: Pos,
    /// Its first statement shown said `startTransaction: true`: none ran before it.
    pub(crate) starts: bool,
}

impl Span {
    /// Widen by one statement at `ts`.
    pub(crate) fn add(&mut self, ts: Pos, starts: bool) {
        if ts < self.first {
            (self.first, self.starts) = (ts, starts);
        } else if ts == self.first {
            self.starts |= starts;
        }
        self.last = self.last.max(ts);
    }

    /// Merge another part's view of the same transaction.
    pub(crate) fn merge(&mut self, other: &Span) {
        self.add(other.first, other.starts);
        self.last = self.last.max(other.last);
    }

    /// The same span read `by` positions later in the source (a later part's).
    pub(crate) fn shifted(mut self, by: u64) -> Span {
        (self.first.1, self.last.1) = (self.first.1 + by, self.last.1 + by);
        self
    }
}

/// A profiled write statement without a session, with the client and time that place it.
#[derive(Debug, Clone)]
pub(crate) struct Loose {
    pub(crate) q: Query,
    pub(crate) client: String,
    pub(crate) ts: Pos,
}

/// A write left unplaced by time, with the transactions that could hold it.
#[derive(Debug, Clone)]
pub(crate) struct Open {
    pub(crate) w: Loose,
    pub(crate) could: Vec<TxnId>,
    /// Just outside the span of `could`'s only transaction, which alone could hold it
    /// (likely its own: counted for the links, never for the share).
    pub(crate) beside: bool,
}

/// What placement found.
#[derive(Debug, Default)]
pub(crate) struct Placed {
    /// Writes placed in one transaction (inside its window): they join it.
    pub(crate) placed: Vec<(TxnId, Query)>,
    /// Writes left unplaced.
    pub(crate) open: Vec<Open>,
    /// Transactions whose first statement shown did not start them.
    pub(crate) not_started: HashSet<TxnId>,
    /// Of those, the ones whose missing start may precede the source's first operation (no
    /// earlier transaction of their session shown, begun within a lifetime of that first
    /// operation): statements the source never held may be theirs.
    pub(crate) unbounded: HashSet<TxnId>,
}

impl Placed {
    /// The writes left open that one transaction alone could hold, with it.
    pub(crate) fn likely(&self) -> impl Iterator<Item = (&TxnId, &Query)> {
        self.open.iter().filter(|o| o.beside).filter_map(|o| Some((o.could.first()?, &o.w.q)))
    }

    /// Transactions that may hold a write not shown with them.
    pub(crate) fn in_part(&self) -> HashSet<TxnId> {
        let mut out = self.not_started.clone();
        out.extend(self.open.iter().flat_map(|o| o.could.iter().cloned()));
        out
    }

    /// Writes left unplaced, per namespace.
    pub(crate) fn unplaced_by_namespace(&self) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for o in &self.open {
            *out.entry(o.w.q.ns.clone()).or_default() += 1;
        }
        out
    }
}

/// Each transaction's possible extent: from its first statement shown (or, when that one
/// did not start it, from its session's previous transaction's last statement) to its
/// session's next transaction's first statement (at most `TRANSACTION_LIFETIME_MILLIS`
/// after its last). A session runs one transaction at a time.
fn extents(spans: &HashMap<TxnId, Span>, marks_start: bool) -> HashMap<&TxnId, (Pos, Pos)> {
    let mut by_session: HashMap<&str, Vec<(&TxnId, &Span)>> = HashMap::new();
    for (t, s) in spans {
        by_session.entry(t.lsid.as_str()).or_default().push((t, s));
    }
    let mut out = HashMap::new();
    for v in by_session.values_mut() {
        v.sort_by_key(|(t, _)| t.txn_number);
        for (i, (t, s)) in v.iter().enumerate() {
            let start = if s.starts || !marks_start {
                s.first
            } else {
                i.checked_sub(1).map(|p| v[p].1.last).unwrap_or((s.first.0 - TRANSACTION_LIFETIME_MILLIS, 0))
            };
            let cap = (s.last.0 + TRANSACTION_LIFETIME_MILLIS, u64::MAX);
            let end = v.get(i + 1).map(|(_, n)| n.first.min(cap)).unwrap_or(cap);
            out.insert(*t, (start, end));
        }
    }
    out
}

/// Place each loose write. `marks_start`: the source writes `startTransaction` (a
/// transaction whose first statement shown lacks it began with one not shown).
pub(crate) fn place(spans: &HashMap<TxnId, Span>, loose: Vec<Loose>, marks_start: bool) -> Placed {
    let extent = extents(spans, marks_start);
    let mut by_client: HashMap<&str, Vec<(&TxnId, &Span)>> = HashMap::new();
    for (t, s) in spans {
        by_client.entry(s.client.as_str()).or_default().push((t, s));
    }
    // A client that runs transactions at once (spans that overlap) runs several threads:
    // another thread's write outside any transaction can fall inside one transaction's span,
    // so time alone places nothing there (the values may, `Sessions::place_by`).
    let concurrent: HashSet<&str> = by_client
        .iter()
        .filter(|(_, v)| {
            let mut spans: Vec<(Pos, Pos)> = v.iter().map(|(_, s)| (s.first, s.last)).collect();
            spans.sort();
            spans.windows(2).any(|w| w[1].0 <= w[0].1)
        })
        .map(|(c, _)| *c)
        .collect();
    let mut out = Placed::default();
    let first_loose = loose.iter().map(|w| w.ts.0).min();
    for w in loose {
        let candidates = by_client.get(w.client.as_str()).map(Vec::as_slice).unwrap_or_default();
        let alone = !concurrent.contains(w.client.as_str());
        let inside: Vec<&TxnId> = candidates.iter().filter(|(_, s)| s.first <= w.ts && w.ts <= s.last).map(|(t, _)| *t).collect();
        if let ([t], true) = (&inside[..], alone) {
            out.placed.push(((*t).clone(), w.q));
            continue;
        }
        let could: Vec<&TxnId> =
            candidates.iter().filter(|(t, _)| extent.get(t).is_some_and(|(a, b)| *a <= w.ts && w.ts <= *b)).map(|(t, _)| *t).collect();
        let beside = could.len() == 1 && inside.is_empty() && alone;
        out.open.push(Open { could: could.into_iter().cloned().collect(), w, beside });
    }
    if marks_start {
        out.not_started.extend(spans.iter().filter(|(_, s)| !s.starts).map(|(t, _)| t.clone()));
        let source_first = spans.values().map(|s| s.first.0).chain(first_loose).min().unwrap_or(i64::MIN);
        let earlier_shown = |t: &TxnId| spans.keys().any(|o| o.lsid == t.lsid && o.txn_number < t.txn_number);
        out.unbounded.extend(
            out.not_started.iter().filter(|t| !earlier_shown(t) && spans[*t].first.0 - TRANSACTION_LIFETIME_MILLIS < source_first).cloned(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Op, QueryOrigin};
    use bson::doc;

    fn span(client: &str, first: i64, last: i64, starts: bool) -> Span {
        Span { client: client.into(), first: (first, 0), last: (last, 0), starts }
    }

    fn t(lsid: &str, n: i64) -> TxnId {
        TxnId { lsid: lsid.into(), txn_number: n }
    }

    fn w(client: &str, ts: i64) -> Loose {
        Loose { q: Query::new(Op::Update, "s.customers", doc! {"_id": ts}, QueryOrigin::Profiler), client: client.into(), ts: (ts, 0) }
    }

    /// One session, two transactions: A (100–110) and B (200–210), both started by a
    /// statement shown. A write at 105 is A's; at 150 (after A, before B) A alone could hold
    /// it: likely A's, and A in part; at 205 from another client: nobody's, and nothing in
    /// part on its account.
    #[test]
    fn a_write_inside_one_window_is_placed_one_beside_it_is_likely() {
        let spans: HashMap<TxnId, Span> =
            [(t("s", 1), span("10.0.0.1", 100, 110, true)), (t("s", 2), span("10.0.0.1", 200, 210, true))].into();
        let p = place(&spans, vec![w("10.0.0.1", 105), w("10.0.0.1", 150), w("10.0.0.2", 205)], true);
        assert_eq!(p.placed.iter().map(|(t, q)| (t.txn_number, q.filter.get_i64("_id").unwrap())).collect::<Vec<_>>(), vec![(1, 105)]);
        assert_eq!(p.likely().map(|(t, _)| t.txn_number).collect::<Vec<_>>(), vec![1]);
        assert_eq!(p.in_part(), [t("s", 1)].into());
        assert_eq!(p.unplaced_by_namespace()["s.customers"], 2);
    }

    /// Two sessions of one client run at once (windows 100–120 and 110–130): a write at 115
    /// could be either's: placed in neither, both in part. B's first statement shown did
    /// not start it: B is in part whatever the writes.
    #[test]
    fn overlapping_windows_place_nothing_and_a_missing_start_is_in_part() {
        let spans: HashMap<TxnId, Span> =
            [(t("a", 1), span("c", 100, 120, true)), (t("b", 1), span("c", 110, 130, false)), (t("d", 1), span("c", 300, 310, true))]
                .into();
        let p = place(&spans, vec![w("c", 115), w("c", 305)], true);
        assert!(p.placed.is_empty() && p.likely().next().is_none());
        // A client with overlapping spans runs threads: even inside d's span alone, 305 may be
        // another thread's write outside any transaction.
        assert_eq!(p.in_part(), [t("a", 1), t("b", 1), t("d", 1)].into());
        // A source that never writes startTransaction: B is judged by the writes alone.
        let spans: HashMap<TxnId, Span> = [(t("b", 1), span("c", 110, 130, false))].into();
        assert!(place(&spans, vec![], false).in_part().is_empty());
        assert_eq!(place(&spans, vec![], true).in_part(), [t("b", 1)].into());
    }
}
