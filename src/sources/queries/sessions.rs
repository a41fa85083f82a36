//! Transactions and joins, read beside the sample: every operation that ran in a
//! multi-document transaction, grouped by `lsid` + `txnNumber`, and every aggregation
//! that joins another collection. `shardkey plan` reads them (one pass over the logs).
//!
//! A JSON log writes an update's or a delete's statements on their own `WRITE` lines
//! without the session, then the command's line with `lsid` and `txnNumber` but without
//! the statements; both name the connection (`ctx`). The statements a connection logged
//! are therefore given to the next write command that connection logs (`claim`). The
//! profiler writes such statements without any session or connection: its client and
//! time place them (`placement`, once every source is read: `Sessions::place`); those it
//! cannot place leave the transactions that could hold them seen in part
//! (`Sessions::seen_in_part`). The profiler's inserts carry their session in `command`,
//! and join their transaction.

use super::log::OpSink;
use super::placement::{self, Loose, Span};
use crate::model::query::TxnId;
use crate::model::{Op, Query, QueryOrigin};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Transactions kept: a uniform sample over the whole log, the ones whose session hashes
/// lowest (bottom-k), so memory stays bounded however long the log. The same hash decides
/// in every parallel part, so a transaction is kept whole or not at all.
pub(crate) const MAX_TRANSACTIONS: usize = 20_000;
/// Joining aggregations kept: a uniform sample over the whole log (a reservoir; parts merged
/// by drawing without replacement from both, in proportion to what each saw).
pub(crate) const MAX_JOINS: usize = 20_000;
/// Statements one connection may hold while waiting for its command line.
const MAX_PENDING: usize = 1_000;

#[derive(Debug, Default)]
pub(crate) struct Sessions {
    /// Each transaction's operations, in log order, once read (`resolve_lines`).
    pub(crate) transactions: BTreeMap<TxnId, Vec<Query>>,
    /// While the logs are read: the kept transactions' operations since, parsed or still
    /// their lines (most of the transactions a long log's sample keeps for a while leave it
    /// again: their lines are never parsed, and cost a pointer each to move and drop).
    /// Hashed: a tree's session-id comparisons were most of the merge's time; no order is read.
    reading: std::collections::HashMap<TxnId, Vec<Waiting>, ahash::RandomState>,
    /// The kept transactions by hash: the largest is the next evicted.
    kept: std::collections::BTreeSet<(u64, TxnId)>,
    /// Whether a transaction was ever left out (the sample is then a sample).
    sampled: bool,
    /// A part's bar (`fresh`): the log's largest kept hash when the part began, once the log's
    /// sample was full. The log's bar only falls, so a transaction hashing above it is never
    /// kept: the part drops it at once rather than copy its statements for the merge to drop.
    admit_below: Option<u64>,
    /// Aggregations with a `$lookup`, `$graphLookup` or `$unionWith`.
    pub(crate) joins: Vec<Query>,
    /// Joining aggregations seen (kept or not).
    pub(crate) joins_seen: u64,
    /// The same, per database (a log shared by several databases).
    joins_seen_by_db: BTreeMap<String, u64>,
    /// After `only_database`: the share of the kept transactions that were its own.
    database_share: Option<f64>,
    joins_rng: crate::util::splitmix::SplitMix64,
    /// Profiled write statements with neither client nor time, per namespace: nothing places
    /// them, and every profiled transaction may hold them.
    untimed_by_namespace: BTreeMap<String, u64>,
    /// Profiled writes without a session, waiting for `place`.
    loose: Vec<Loose>,
    /// Where and when each kept transaction's profiled statements ran.
    spans: HashMap<TxnId, Span>,
    /// Whether a profiled statement said `startTransaction` (the source writes it).
    marks_start: bool,
    /// Operations seen, in source order: a statement's place among those ending in the same ms.
    seq: u64,
    /// After `place`: profiled writes placed in their transaction, per namespace.
    pub(crate) placed_by_namespace: BTreeMap<String, u64>,
    /// After `place`: what is left unplaced, and the transactions that may hold it.
    placement: placement::Placed,
    /// After `place`: the profiled transactions that may hold a write not shown.
    in_part: HashSet<TxnId>,
    /// After `place_by`: writes placed by the values their transaction fixes, per namespace.
    pub(crate) by_values_by_namespace: BTreeMap<String, u64>,
    /// Transactions the log's summary lines say were aborted.
    aborted: HashSet<TxnId>,
    /// After `place`: how many of the kept transactions were aborted, left out.
    pub(crate) aborted_left_out: u64,
    /// Per connection: statements logged since its last write command.
    pending: ahash::AHashMap<String, Vec<Waiting>>,
    /// Per connection: the first claim this part saw, which also takes the statements an
    /// earlier part left pending on the connection.
    head_claims: Vec<(String, Option<TxnId>)>,
    claimed: ahash::AHashSet<String>,
    /// Per session id, its last transaction hashed (number, hash): every line of a
    /// transaction asks for it (`wants_txn`, then `admit`), and the hash, a SplitMix64 step
    /// per byte of the id, took most of the light read's sink work.
    hashes: ahash::AHashMap<String, (i64, u64)>,
    /// Every line parsed in full (no light read): what the light one is held to.
    #[cfg(test)]
    full_read: bool,
}

/// Two uniform samples (each of what its part saw) into one of at most `cap` over both:
/// each pick comes from a side with the chance of its unpicked share of what both saw
/// (drawing without replacement from the union), taken at random within the side.
fn merge_samples<T>(a: (Vec<T>, u64), b: (Vec<T>, u64), cap: usize, rng: &mut crate::util::splitmix::SplitMix64) -> Vec<T> {
    let ((mut va, mut na), (mut vb, mut nb)) = (a, b);
    if va.len() + vb.len() <= cap {
        va.extend(vb);
        return va;
    }
    let mut out = Vec::with_capacity(cap);
    while out.len() < cap && (!va.is_empty() || !vb.is_empty()) {
        let from_a = !va.is_empty() && (vb.is_empty() || rng.below(na + nb) < na);
        let (v, n) = if from_a { (&mut va, &mut na) } else { (&mut vb, &mut nb) };
        let i = rng.below(v.len() as u64) as usize;
        out.push(v.swap_remove(i));
        *n = n.saturating_sub(1);
    }
    out
}

/// A transaction's place in the sample: a hash of its session id and number.
fn txn_hash(t: &TxnId) -> u64 {
    hash_of(&t.lsid, t.txn_number)
}

fn hash_of(lsid: &str, number: i64) -> u64 {
    let mut h = crate::util::splitmix::SplitMix64(number as u64);
    let mut x = h.next_u64();
    for b in lsid.bytes() {
        h.0 ^= x ^ b as u64;
        x = h.next_u64();
    }
    x
}

impl Sessions {
    /// The hash above which no transaction will be kept: this sample's largest once it is
    /// full (`add_to_txn` then takes a new one only below it), or the bar it was given
    /// (`fresh`), whichever is lower.
    fn bar(&self) -> Option<u64> {
        let own = self.kept.last().filter(|_| self.kept.len() >= MAX_TRANSACTIONS).map(|(top, _)| *top);
        match (own, self.admit_below) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// `hash_of`, remembered for each session's last transaction.
    fn hash(&mut self, lsid: &str, number: i64) -> u64 {
        match self.hashes.get_mut(lsid) {
            Some((n, h)) if *n == number => *h,
            Some(last) => {
                *last = (number, hash_of(lsid, number));
                last.1
            }
            None => {
                let h = hash_of(lsid, number);
                self.hashes.insert(lsid.to_string(), (number, h));
                h
            }
        }
    }

    /// Whether a transaction's statements may still be kept (else they need no copy): it
    /// is kept, or hashes at or below the bar. On the 500 MB benchmark log 20,000 of about
    /// 275,000 transactions are kept: most statements need no copy.
    fn may_keep(&mut self, txn: &TxnId) -> bool {
        self.is_kept(txn) || self.wants_txn(&txn.lsid, txn.txn_number)
    }

    /// Whether `txn` is in the sample (read, or being read).
    fn is_kept(&self, txn: &TxnId) -> bool {
        self.reading.contains_key(txn) || self.transactions.contains_key(txn)
    }

    /// A write statement outside any transaction waits on connection `conn` for the command
    /// line naming its transaction; `w` makes it, only if there is room.
    fn wait_on(&mut self, conn: &str, w: impl FnOnce() -> Waiting) {
        match self.pending.get_mut(conn) {
            Some(v) if v.len() >= MAX_PENDING => {}
            Some(v) => v.push(w()),
            None => {
                self.pending.insert(conn.to_string(), vec![w()]);
            }
        }
    }

    fn add_to_txn(&mut self, txn: TxnId, op: Query) {
        self.add_waiting(txn, vec![Waiting::Parsed(Box::new(op))]);
    }

    /// Operations (parsed, or their lines) into `txn` if it is kept.
    fn add_waiting(&mut self, txn: TxnId, ops: Vec<Waiting>) {
        self.add_hashed(txn, None, ops)
    }

    /// `add_waiting`, with the transaction's hash when known (a part's, on merge).
    fn add_hashed(&mut self, txn: TxnId, hash: Option<u64>, ops: Vec<Waiting>) {
        if ops.is_empty() || !self.admit(&txn, hash) {
            return;
        }
        match self.reading.get_mut(&txn) {
            Some(v) => v.extend(ops),
            None => {
                self.reading.insert(txn, ops);
            }
        }
    }

    /// Whether `txn` takes operations: kept already, or kept now (the sample's highest
    /// hash leaving it when full).
    fn admit(&mut self, txn: &TxnId, hash: Option<u64>) -> bool {
        if self.is_kept(txn) {
            return true;
        }
        let h = hash.unwrap_or_else(|| self.hash(&txn.lsid, txn.txn_number));
        if self.admit_below.is_some_and(|bar| h > bar) {
            self.sampled = true;
            return false;
        }
        if self.kept.len() >= MAX_TRANSACTIONS {
            self.sampled = true;
            match self.kept.last() {
                Some((top, _)) if h < *top => {
                    if let Some((_, out)) = self.kept.pop_last() {
                        self.transactions.remove(&out);
                        self.reading.remove(&out);
                        self.spans.remove(&out);
                    }
                }
                _ => return false,
            }
        }
        self.kept.insert((h, txn.clone()));
        true
    }

    /// How many transactions the log holds: exact while all are kept, else estimated from
    /// the sample's largest hash (the k-minimum-values estimate, (k − 1) / that hash as a
    /// share of the hash range; its relative error is about 1/√k, 0.7% at 20,000).
    /// After `only_database`, the estimate is scaled by the share of the kept ones that
    /// were that database's.
    pub(crate) fn transactions_found(&self) -> u64 {
        match (self.sampled, self.kept.last()) {
            (true, Some((top, _))) => {
                let share = (*top as f64 + 1.0) / 2f64.powi(64);
                ((self.kept.len() as f64 - 1.0) / share * self.database_share.unwrap_or(1.0)).round() as u64
            }
            _ => self.transactions.len() as u64,
        }
    }

    /// Keep one database's transactions and joins (a log holds every database's): a
    /// transaction is the database's when one of its operations is; its operations on
    /// other databases leave (no collection of the plan holds them). Called after
    /// placement, which reads every transaction of a client whatever its database.
    pub(crate) fn only_database(&mut self, db: &str) {
        let prefix = format!("{db}.");
        let kept = self.transactions.len();
        self.transactions.retain(|_, ops| {
            ops.retain(|q| q.ns.starts_with(&prefix));
            !ops.is_empty()
        });
        self.database_share = Some(self.transactions.len() as f64 / kept.max(1) as f64);
        self.joins.retain(|q| q.ns.starts_with(&prefix));
        self.joins_seen = self.joins_seen_by_db.get(db).copied().unwrap_or(0);
    }

    /// Whether the kept transactions are a sample (the log held more).
    pub(crate) fn is_sampled(&self) -> bool {
        self.sampled
    }

    /// Whether a transaction may hold statements its source did not show: a profiled
    /// write that `place` could not put elsewhere, or its first statement not shown (see
    /// `placement`); every profiled transaction when some profiled write had no client
    /// or time. Its shown part alone cannot say the transaction ran on one shard.
    pub(crate) fn seen_in_part(&self, txn: &TxnId, ops: &[Query]) -> bool {
        let profiled = ops.iter().any(|q| q.origin == QueryOrigin::Profiler);
        profiled && (!self.untimed_by_namespace.is_empty() || self.in_part.contains(txn))
    }

    /// Whether a transaction seen in part may miss statements the source never held (see
    /// `placement::Placed::unbounded`): no count of unplaced statements bounds what it misses.
    pub(crate) fn unbounded(&self, txn: &TxnId) -> bool {
        self.placement.unbounded.contains(txn)
    }

    /// Place the profiled writes without a session in their transactions (once every
    /// source is read: a transaction's window is known only then).
    pub(crate) fn place(&mut self) {
        // Every line file resolves its kept operations when read (`lines_read`); what other
        // sources (the profiler, document exports) kept is resolved here.
        self.resolve_lines();
        // An aborted transaction never ran: its operations leave with it (the driver's retry,
        // a new txnNumber, is what ran).
        for t in std::mem::take(&mut self.aborted) {
            if self.transactions.remove(&t).is_some() {
                self.aborted_left_out += 1;
                self.kept.remove(&(txn_hash(&t), t.clone()));
                self.spans.remove(&t);
            }
        }
        let mut p = placement::place(&self.spans, std::mem::take(&mut self.loose), self.marks_start);
        for (t, q) in std::mem::take(&mut p.placed) {
            *self.placed_by_namespace.entry(q.ns.clone()).or_default() += 1;
            if let Some(ops) = self.transactions.get_mut(&t) {
                ops.push(q);
            }
        }
        self.in_part = p.in_part();
        self.placement = p;
    }

    /// Place the writes `place` left open by what the transactions that could hold them
    /// show: `pick` names the one of them (an index into its list) whose statements fix
    /// the write's values, if only one does. Returns how many were placed.
    pub(crate) fn place_by(&mut self, pick: impl Fn(&Query, &[&[Query]]) -> Option<usize>) -> u64 {
        let open = std::mem::take(&mut self.placement.open);
        let mut placed = 0;
        for o in open {
            let could: Vec<&[Query]> = o.could.iter().map(|t| self.transactions.get(t).map(Vec::as_slice).unwrap_or_default()).collect();
            match pick(&o.w.q, &could).and_then(|i| o.could.get(i)).cloned() {
                Some(t) => {
                    placed += 1;
                    *self.by_values_by_namespace.entry(o.w.q.ns.clone()).or_default() += 1;
                    if let Some(ops) = self.transactions.get_mut(&t) {
                        ops.push(o.w.q);
                    }
                }
                None => self.placement.open.push(o),
            }
        }
        self.in_part = self.placement.in_part();
        placed
    }

    /// Write statements whose transaction cannot be told, per namespace: without client or
    /// time, or left open by `place` and `place_by`.
    pub(crate) fn unplaced_by_namespace(&self) -> BTreeMap<String, u64> {
        let mut out = self.untimed_by_namespace.clone();
        for (ns, n) in self.placement.unplaced_by_namespace() {
            *out.entry(ns).or_default() += n;
        }
        out
    }

    /// The statements placement left open, each with the transactions that could hold it.
    pub(crate) fn open_writes(&self) -> impl Iterator<Item = (&Query, &[TxnId])> {
        self.placement.open.iter().map(|o| (&o.w.q, o.could.as_slice()))
    }

    /// Statements without client or time: nothing places them, any profiled transaction may hold them.
    pub(crate) fn untimed(&self) -> u64 {
        self.untimed_by_namespace.values().sum()
    }

    /// How many write statements `unplaced_by_namespace` counts.
    pub(crate) fn unplaced(&self) -> u64 {
        self.unplaced_by_namespace().values().sum()
    }

    /// The writes left open that one transaction alone could hold (likely its own: they
    /// count for its links, never for the share).
    pub(crate) fn likely(&self) -> HashMap<&TxnId, Vec<&Query>> {
        let mut out: HashMap<&TxnId, Vec<&Query>> = HashMap::new();
        for (t, q) in self.placement.likely() {
            out.entry(t).or_default().push(q);
        }
        out
    }

    /// Profiled writes placed in their transaction.
    pub(crate) fn placed(&self) -> u64 {
        self.placed_by_namespace.values().sum()
    }

    /// Statements left waiting for a command line that never came (end of the log).
    #[cfg(test)]
    fn waiting(&self) -> u64 {
        self.pending.values().map(|v| v.len() as u64).sum()
    }
}

/// A copy without the cost figures (not needed here). Field by field, so the figures are
/// never copied only to be dropped: `lean` runs for every write statement of the log (a
/// connection's statements wait for their command line, which alone names the transaction).
fn lean(q: &Query) -> Query {
    Query {
        op: q.op,
        ns: q.ns.clone(),
        filter: q.filter.clone(),
        collation: q.collation.clone(),
        let_vars: q.let_vars.clone(),
        multi: q.multi,
        upsert: q.upsert,
        update: q.update.clone(),
        origin: q.origin,
        count: q.count,
        stats: None,
        session: q.session.clone(),
        joins: q.joins.clone(),
        inserted: q.inserted.clone(),
    }
}

impl OpSink for Sessions {
    fn op(&mut self, q: &Query) {
        let session = q.session.as_deref();
        self.seq += 1;
        let seq = self.seq;
        if !q.joins.is_empty() {
            self.joins_seen += 1;
            let db = q.ns.split_once('.').map_or(q.ns.as_str(), |x| x.0);
            match self.joins_seen_by_db.get_mut(db) {
                Some(n) => *n += 1,
                None => {
                    self.joins_seen_by_db.insert(db.to_string(), 1);
                }
            }
            let held = self.joins.len();
            match self.joins_rng.reservoir_slot(self.joins_seen, held, MAX_JOINS) {
                Some(j) if j == held => self.joins.push(lean(q)),
                Some(j) => self.joins[j] = lean(q),
                None => {}
            }
        }
        // Borrowed: a copy of the session id and connection per statement was 2 of plan's
        // allocations per log line.
        match (session.and_then(|s| s.txn.as_ref()), session.and_then(|s| s.conn.as_deref())) {
            (Some(txn), _) => {
                let timed = session.and_then(|s| Some((s.client.as_ref()?, (s.ts_millis?, seq))));
                let starts = session.is_some_and(|s| s.starts);
                self.marks_start |= timed.is_some() && starts;
                // Most transactions of a long log are left out of the sample: no copy for them.
                if !self.may_keep(txn) {
                    return;
                }
                if let Some((client, ts)) = timed {
                    match self.spans.get_mut(txn) {
                        Some(sp) => sp.add(ts, starts),
                        None => {
                            self.spans.insert(txn.clone(), Span { client: client.clone(), first: ts, last: ts, starts });
                        }
                    }
                }
                self.add_to_txn(txn.clone(), lean(q));
                if !self.is_kept(txn) {
                    self.spans.remove(txn);
                }
            }
            // A write statement on its own line: its command line says the transaction.
            (None, Some(conn)) if matches!(q.op, Op::Update | Op::Delete) => self.wait_on(conn, || Waiting::Parsed(Box::new(lean(q)))),
            (None, None) if matches!(q.op, Op::Update | Op::Delete) && q.origin == QueryOrigin::Profiler => {
                match session.and_then(|s| Some((s.client.clone()?, (s.ts_millis?, seq)))) {
                    Some((client, ts)) if self.loose.len() < placement::MAX_LOOSE => self.loose.push(Loose { q: lean(q), client, ts }),
                    _ => *self.untimed_by_namespace.entry(q.ns.clone()).or_default() += 1,
                }
            }
            _ => {}
        }
    }

    fn claim(&mut self, conn: &str, txn: Option<TxnId>) {
        // Looked up before it is copied: a connection claims on every write command.
        if !self.claimed.contains(conn) {
            self.claimed.insert(conn.to_string());
            self.head_claims.push((conn.to_string(), txn.clone()));
        }
        let stmts = self.pending.remove(conn).unwrap_or_default();
        if let Some(t) = txn {
            self.add_waiting(t, stmts);
        }
    }

    fn aborted(&mut self, txn: TxnId) {
        self.aborted.insert(txn);
    }

    fn reads_light(&self) -> bool {
        #[cfg(test)]
        if self.full_read {
            return false;
        }
        true
    }

    /// `may_keep` without the id: a kept transaction hashes at or below the bar (`add_to_txn`
    /// takes none above it, and the bar only falls), so one above it is not kept.
    fn wants_txn(&mut self, lsid: &str, number: i64) -> bool {
        match self.bar() {
            Some(bar) if self.hash(lsid, number) > bar => {
                self.sampled = true;
                false
            }
            _ => true,
        }
    }

    fn unread(&mut self, n: u64) {
        self.seq += n;
    }

    fn waits(&mut self, conn: &str, line: &str) {
        self.seq += 1;
        self.wait_on(conn, || Waiting::Line(line.into(), 0));
    }

    fn txn_line(&mut self, lsid: &str, number: i64, line: &str, ops: usize) {
        self.seq += ops as u64;
        let text: std::sync::Arc<str> = line.into();
        let ops = (0..ops as u32).map(|i| Waiting::Line(text.clone(), i)).collect();
        self.add_waiting(TxnId { lsid: lsid.to_string(), txn_number: number }, ops);
    }

    fn lines_read(&mut self) {
        self.resolve_lines();
    }

    fn fresh(&self) -> Box<dyn OpSink> {
        Box::new(Sessions {
            admit_below: self.bar(),
            #[cfg(test)]
            full_read: self.full_read,
            ..Sessions::default()
        })
    }

    fn merge(&mut self, other: Box<dyn OpSink>) {
        let Ok(other) = other.as_any().downcast::<Sessions>() else { return };
        let other = *other;
        // The later part's first claim on a connection takes what this one left pending there.
        for (conn, txn) in other.head_claims {
            let stmts = self.pending.remove(&conn).unwrap_or_default();
            if let Some(t) = txn {
                self.add_waiting(t, stmts);
            }
            if self.claimed.insert(conn.clone()) {
                self.head_claims.push((conn, None));
            }
        }
        for (conn, stmts) in other.pending {
            let v = self.pending.entry(conn).or_default();
            v.extend(stmts);
            v.truncate(MAX_PENDING);
        }
        self.sampled |= other.sampled;
        // A part's lines are resolved by the log it merges into (`lines_read`), never its own.
        debug_assert!(other.transactions.is_empty(), "a part's transactions are still being read");
        let mut reading = other.reading;
        // Lowest hash first, with the part's hashes: fewer are admitted only to leave again
        // within this merge, and none is hashed twice. The same are kept in any order.
        for (h, txn) in other.kept {
            let Some(ops) = reading.remove(&txn) else { continue };
            self.add_hashed(txn, Some(h), ops);
        }
        debug_assert!(reading.is_empty(), "a part keeps a hash for each of its transactions");
        self.joins = merge_samples(
            (std::mem::take(&mut self.joins), self.joins_seen),
            (other.joins, other.joins_seen),
            MAX_JOINS,
            &mut self.joins_rng,
        );
        self.joins_seen += other.joins_seen;
        for (db, n) in other.joins_seen_by_db {
            *self.joins_seen_by_db.entry(db).or_default() += n;
        }
        // The later part's positions come after all of this one's.
        let by = self.seq;
        self.seq += other.seq;
        for (t, sp) in other.spans {
            if self.is_kept(&t) {
                let sp = sp.shifted(by);
                self.spans.entry(t).and_modify(|s| s.merge(&sp)).or_insert(sp);
            }
        }
        let (reading, transactions) = (&self.reading, &self.transactions);
        self.spans.retain(|t, _| reading.contains_key(t) || transactions.contains_key(t));
        self.marks_start |= other.marks_start;
        self.aborted.extend(other.aborted);
        // Past the cap, a write is counted but not placed: as one without a time.
        let room = placement::MAX_LOOSE.saturating_sub(self.loose.len());
        for w in other.loose.iter().skip(room) {
            *self.untimed_by_namespace.entry(w.q.ns.clone()).or_default() += 1;
        }
        for (ns, n) in other.untimed_by_namespace {
            *self.untimed_by_namespace.entry(ns).or_default() += n;
        }
        self.loose.extend(other.loose.into_iter().take(room).map(|mut w| {
            w.ts.1 += by;
            w
        }));
    }

    fn as_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

#[cfg(test)]
mod light_tests;
mod lines;
use lines::Waiting;

#[cfg(test)]
mod tests;
