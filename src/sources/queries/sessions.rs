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

use super::placement::{self, Loose, Span};
use super::OpSink;
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
    /// Each transaction's operations, in log order.
    pub(crate) transactions: BTreeMap<TxnId, Vec<Query>>,
    /// The kept transactions by hash: the largest is the next evicted.
    kept: std::collections::BTreeSet<(u64, TxnId)>,
    /// Whether a transaction was ever left out (the sample is then a sample).
    sampled: bool,
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
    pending: HashMap<String, Vec<Query>>,
    /// Per connection: the first claim this part saw, which also takes the statements an
    /// earlier part left pending on the connection.
    head_claims: Vec<(String, Option<TxnId>)>,
    claimed: std::collections::HashSet<String>,
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
    let mut h = crate::util::splitmix::SplitMix64(t.txn_number as u64);
    let mut x = h.next_u64();
    for b in t.lsid.bytes() {
        h.0 ^= x ^ b as u64;
        x = h.next_u64();
    }
    x
}

impl Sessions {
    fn add_to_txn(&mut self, txn: TxnId, ops: Vec<Query>) {
        if ops.is_empty() {
            return;
        }
        if let Some(v) = self.transactions.get_mut(&txn) {
            v.extend(ops);
            return;
        }
        let h = txn_hash(&txn);
        if self.transactions.len() >= MAX_TRANSACTIONS {
            self.sampled = true;
            match self.kept.last() {
                Some((top, _)) if h < *top => {
                    if let Some((_, out)) = self.kept.pop_last() {
                        self.transactions.remove(&out);
                        self.spans.remove(&out);
                    }
                }
                _ => return,
            }
        }
        self.kept.insert((h, txn.clone()));
        self.transactions.insert(txn, ops);
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

/// A copy without the cost figures (not needed here).
fn lean(q: &Query) -> Query {
    let mut c = q.clone();
    c.stats = None;
    c
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
        match (session.and_then(|s| s.txn.clone()), session.and_then(|s| s.conn.clone())) {
            (Some(txn), _) => {
                if let Some((client, ts)) = session.and_then(|s| Some((s.client.as_ref()?, (s.ts_millis?, seq)))) {
                    let starts = session.is_some_and(|s| s.starts);
                    self.marks_start |= starts;
                    self.spans.entry(txn.clone()).and_modify(|sp| sp.add(ts, starts)).or_insert_with(|| Span {
                        client: client.clone(),
                        first: ts,
                        last: ts,
                        starts,
                    });
                }
                self.add_to_txn(txn.clone(), vec![lean(q)]);
                if !self.transactions.contains_key(&txn) {
                    self.spans.remove(&txn);
                }
            }
            // A write statement on its own line: its command line says the transaction.
            (None, Some(conn)) if matches!(q.op, Op::Update | Op::Delete) => {
                let v = self.pending.entry(conn).or_default();
                if v.len() < MAX_PENDING {
                    v.push(lean(q));
                }
            }
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
        if self.claimed.insert(conn.to_string()) {
            self.head_claims.push((conn.to_string(), txn.clone()));
        }
        let stmts = self.pending.remove(conn).unwrap_or_default();
        if let Some(t) = txn {
            self.add_to_txn(t, stmts);
        }
    }

    fn aborted(&mut self, txn: TxnId) {
        self.aborted.insert(txn);
    }

    fn fresh(&self) -> Box<dyn OpSink> {
        Box::new(Sessions::default())
    }

    fn merge(&mut self, other: Box<dyn OpSink>) {
        let Ok(other) = other.as_any().downcast::<Sessions>() else { return };
        let other = *other;
        // The later part's first claim on a connection takes what this one left pending there.
        for (conn, txn) in other.head_claims {
            let stmts = self.pending.remove(&conn).unwrap_or_default();
            if let Some(t) = txn {
                self.add_to_txn(t, stmts);
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
        for (txn, ops) in other.transactions {
            self.add_to_txn(txn, ops);
        }
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
            if self.transactions.contains_key(&t) {
                let sp = sp.shifted(by);
                self.spans.entry(t).and_modify(|s| s.merge(&sp)).or_insert(sp);
            }
        }
        self.spans.retain(|t, _| self.transactions.contains_key(t));
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
mod tests {
    use super::*;
    use crate::model::query::SessionRef;
    use crate::model::QueryOrigin;
    use bson::doc;

    fn stmt(conn: &str, ns: &str) -> Query {
        let mut q = Query::new(Op::Update, ns, doc! {"a": 1}, QueryOrigin::SlowQueryLog);
        q.session = Some(Box::new(SessionRef { conn: Some(conn.into()), ..Default::default() }));
        q
    }

    fn txn(n: i64) -> TxnId {
        TxnId { lsid: "s".into(), txn_number: n }
    }

    /// Past `MAX_TRANSACTIONS` the sample keeps the transactions hashing lowest, whole,
    /// whichever part saw their operations, and estimates how many there were: 3 parts of
    /// 15,000 transactions each (two operations each, the second in the next part for a
    /// third of them) keep 20,000 transactions with both their operations, the same ones
    /// in any merge order, and estimate 45,000 within 3%.
    #[test]
    fn past_the_cap_a_uniform_sample_of_whole_transactions() {
        let ins = |n: i64| {
            let mut q = Query::new(Op::Insert, "db.a", bson::Document::new(), QueryOrigin::SlowQueryLog);
            q.session = Some(Box::new(SessionRef { txn: Some(txn(n)), ..Default::default() }));
            q
        };
        let parts: Vec<Sessions> = (0..3i64)
            .map(|p| {
                let mut s = Sessions::default();
                for n in p * 15_000..(p + 1) * 15_000 {
                    s.op(&ins(n));
                    // A third of them finish in the next part (the last part's, in the first).
                    if n % 3 != 0 {
                        s.op(&ins(n));
                    }
                }
                for n in ((p + 2) % 3 * 15_000..((p + 2) % 3 + 1) * 15_000).filter(|n| n % 3 == 0) {
                    s.op(&ins(n));
                }
                s
            })
            .collect();
        let merged = |order: [usize; 3]| {
            let mut parts: Vec<Option<Sessions>> = parts.iter().map(|p| Some(clone(p))).collect();
            let mut m = Sessions::default();
            for i in order {
                m.merge(Box::new(parts[i].take().unwrap()));
            }
            m
        };
        let a = merged([0, 1, 2]);
        let b = merged([2, 0, 1]);
        assert_eq!(a.transactions.len(), MAX_TRANSACTIONS);
        assert!(a.transactions.values().all(|ops| ops.len() == 2), "every kept transaction whole");
        assert_eq!(a.transactions.keys().collect::<Vec<_>>(), b.transactions.keys().collect::<Vec<_>>());
        let est = a.transactions_found() as f64;
        assert!((est - 45_000.0).abs() < 0.03 * 45_000.0, "estimate {est}");
        assert!(a.is_sampled());
    }

    /// Two parts that saw 30,000 and 10,000 joins (kept 20,000 and 10,000): the merged
    /// sample holds 20,000, three quarters from the first part (30,000 of 40,000), within 2%.
    #[test]
    fn joins_merge_in_proportion_to_what_each_part_saw() {
        let mut rng = crate::util::splitmix::SplitMix64(1);
        let a: Vec<u8> = vec![0; 20_000];
        let b: Vec<u8> = vec![1; 10_000];
        let m = merge_samples((a, 30_000), (b, 10_000), 20_000, &mut rng);
        assert_eq!(m.len(), 20_000);
        let from_a = m.iter().filter(|x| **x == 0).count() as f64 / 20_000.0;
        assert!((from_a - 0.75).abs() < 0.02, "{from_a}");
    }

    /// A log shared by two databases: `only_database("a")` keeps a's transactions (one
    /// touching both keeps its a operations) and a's joins, and counts a's joins seen.
    #[test]
    fn one_databases_transactions_and_joins() {
        let on = |ns: &str, n: i64, join: bool| {
            let mut q = Query::new(Op::Find, ns, bson::Document::new(), QueryOrigin::SlowQueryLog);
            q.session = (!join).then(|| Box::new(SessionRef { txn: Some(txn(n)), ..Default::default() }));
            if join {
                q.joins.push(crate::model::query::Join {
                    stage: crate::model::query::JoinStage::Lookup,
                    from: ns.into(),
                    local_field: None,
                    foreign_field: None,
                });
            }
            q
        };
        let mut s = Sessions::default();
        for (ns, n) in [("a.x", 1), ("b.x", 2), ("b.y", 3), ("a.y", 4), ("b.x", 4)] {
            s.op(&on(ns, n, false));
        }
        for ns in ["a.x", "b.x", "b.x"] {
            s.op(&on(ns, 0, true));
        }
        s.only_database("a");
        assert_eq!(s.transactions.keys().map(|t| t.txn_number).collect::<Vec<_>>(), vec![1, 4]);
        assert_eq!(s.transactions[&txn(4)].iter().map(|q| q.ns.as_str()).collect::<Vec<_>>(), vec!["a.y"]);
        assert_eq!((s.transactions_found(), s.joins_seen, s.joins.len()), (2, 1, 1));
    }

    fn clone(s: &Sessions) -> Sessions {
        Sessions { transactions: s.transactions.clone(), kept: s.kept.clone(), sampled: s.sampled, ..Default::default() }
    }

    /// A statement in one part, its command line in the next: the statement still joins
    /// the transaction; a statement claimed by a command outside any transaction joins none.
    #[test]
    fn statements_join_the_transaction_their_command_line_names_across_parts() {
        let mut a = Sessions::default();
        a.op(&stmt("conn1", "db.a"));
        a.op(&stmt("conn2", "db.b"));
        let mut b = Sessions::default();
        b.claim("conn1", Some(txn(1)));
        b.claim("conn2", None);
        b.op(&stmt("conn1", "db.c"));
        let mut main = Sessions::default();
        main.merge(Box::new(a));
        main.merge(Box::new(b));
        assert_eq!(main.transactions.len(), 1);
        assert_eq!(main.transactions[&txn(1)].iter().map(|q| q.ns.as_str()).collect::<Vec<_>>(), vec!["db.a"]);
        // db.c waits for conn1's next command line.
        assert_eq!(main.waiting(), 1);
        let mut c = Sessions::default();
        c.claim("conn1", Some(txn(2)));
        main.merge(Box::new(c));
        assert_eq!(main.transactions[&txn(2)][0].ns, "db.c");
        assert_eq!(main.waiting(), 0);
    }
}

#[cfg(test)]
mod reading {
    use super::*;
    use crate::sources::queries::{read_queries_in, QueryLog};

    /// Profiler documents as mongod 6.0 writes them for one transaction: a find and an
    /// insert carry the session in `command`, the update statement carries none. The
    /// insert joins the find's transaction; the update is counted unplaced, and the
    /// transaction is then seen in part.
    #[test]
    fn a_profiled_insert_joins_its_transaction_and_an_update_leaves_it_in_part() {
        use bson::doc;
        let lsid = doc! {"id": bson::Binary { subtype: bson::spec::BinarySubtype::Uuid, bytes: vec![7; 16] }};
        let session = |mut c: bson::Document| {
            c.insert("lsid", lsid.clone());
            c.insert("txnNumber", 3i64);
            c.insert("autocommit", false);
            c.insert("$db", "shop");
            c
        };
        let mut log = QueryLog { sink: Some(Box::new(Sessions::default())), ..Default::default() };
        let docs = [
            doc! {"op": "query", "ns": "shop.orders", "command": session(doc! {"find": "orders", "filter": {"customerId": 5}, "startTransaction": true})},
            doc! {"op": "insert", "ns": "shop.payments", "command": session(doc! {"insert": "payments", "ordered": true}), "ninserted": 1},
            doc! {"op": "update", "ns": "shop.customers", "command": {"q": {"_id": 5}, "u": {"$inc": {"n": 1}}, "multi": false, "upsert": false}},
        ];
        for d in &docs {
            super::super::profile::add_profile_doc(&mut log, d);
        }
        let s = log.sink.take().unwrap().as_any().downcast::<Sessions>().unwrap();
        assert_eq!(s.transactions.len(), 1, "{s:?}");
        let (t, ops) = s.transactions.iter().next().unwrap();
        assert_eq!(
            ops.iter().map(|q| (q.op, q.ns.as_str())).collect::<Vec<_>>(),
            vec![(Op::Find, "shop.orders"), (Op::Insert, "shop.payments")]
        );
        // These documents carry no client and no time: nothing places the update.
        assert_eq!(s.unplaced(), 1);
        assert_eq!(s.unplaced_by_namespace().get("shop.customers"), Some(&1));
        assert!(s.seen_in_part(t, ops));
        // Without the unplaced update, the same transaction is whole.
        let whole = Sessions::default();
        assert!(!whole.seen_in_part(t, ops));
    }

    /// Profiler documents as mongod 6.0.5 wrote them for one driver transaction (captured:
    /// insert an order, update the customer, insert a payment; trimmed of locks and
    /// cluster time): the update carries no session, but ran from the transaction's client
    /// between its two inserts: placed, and the transaction is whole. The same update from
    /// another client, or after the payment (it may be a write after the commit), is not
    /// placed and the transaction is seen in part; after it, it still counts for links.
    #[test]
    fn a_profiled_update_between_its_transactions_inserts_is_placed_by_client_and_time() {
        use bson::{doc, DateTime};
        let lsid = doc! {"id": bson::Binary { subtype: bson::spec::BinarySubtype::Uuid, bytes: vec![8; 16] }};
        let ins = |coll: &str, starts: bool, ms: i64| {
            let mut c = doc! {"insert": coll, "ordered": true, "lsid": lsid.clone()};
            if starts {
                c.insert("startTransaction", true);
            }
            c.extend(doc! {"txnNumber": 2i64, "autocommit": false, "$db": "saas"});
            doc! {"op": "insert", "ns": format!("saas.{coll}"), "command": c, "ninserted": 1, "ts": DateTime::from_millis(ms), "client": "127.0.0.1"}
        };
        let upd = |client: &str, ms: i64| {
            doc! {"op": "update", "ns": "saas.customers", "command": {"q": {"_id": 3}, "u": {"$inc": {"orders": 1}}, "multi": false, "upsert": false},
            "nMatched": 1, "ts": DateTime::from_millis(ms), "client": client}
        };
        let run = |docs: &[bson::Document]| {
            let mut log = QueryLog { sink: Some(Box::new(Sessions::default())), ..Default::default() };
            for d in docs {
                super::super::profile::add_profile_doc(&mut log, d);
            }
            let mut s = *log.sink.take().unwrap().as_any().downcast::<Sessions>().unwrap();
            s.place();
            s
        };
        let t0 = 1_795_682_123_803;
        let s = run(&[ins("orders", true, t0), upd("127.0.0.1", t0 + 2), ins("payments", false, t0 + 11)]);
        let (t, ops) = s.transactions.iter().next().unwrap();
        assert_eq!(ops.iter().map(|q| q.ns.as_str()).collect::<Vec<_>>(), vec!["saas.orders", "saas.payments", "saas.customers"]);
        assert_eq!((s.placed(), s.unplaced()), (1, 0));
        assert!(!s.seen_in_part(t, ops));
        for (docs, likely) in [
            (vec![ins("orders", true, t0), upd("10.1.1.1", t0 + 2), ins("payments", false, t0 + 11)], 0),
            (vec![ins("orders", true, t0), ins("payments", false, t0 + 11), upd("127.0.0.1", t0 + 12)], 1),
        ] {
            let s = run(&docs);
            let (t, ops) = s.transactions.iter().next().unwrap();
            assert_eq!(ops.len(), 2);
            assert_eq!((s.placed(), s.unplaced()), (0, 1));
            assert_eq!(s.seen_in_part(t, ops), likely == 1, "the other client's update is no transaction's");
            assert_eq!(s.likely().values().map(Vec::len).sum::<usize>(), likely);
        }
    }

    /// mongod 6.0.5's lines for a driver session that aborts transaction 2 and commits 3
    /// (captured, trimmed of locks): the aborted one leaves, with its insert; the committed
    /// one stays.
    #[test]
    fn an_aborted_transaction_is_left_out() {
        let ins = |n: i64| {
            format!(
                r#"{{"t":{{"$date":"2026-11-26T10:36:09.040+00:00"}},"s":"I",  "c":"COMMAND",  "id":51803,   "ctx":"conn6","msg":"Slow query","attr":{{"type":"command","ns":"shop.orders","command":{{"insert":"orders","ordered":true,"lsid":{{"id":{{"$uuid":"dcb583ed-38b7-4beb-91f6-9b176c66742c"}}}},"txnNumber":{n},"startTransaction":true,"autocommit":false,"$db":"shop"}},"ninserted":1,"durationMillis":0}}}}"#
            )
        };
        let summary = |n: i64, cause: &str| {
            format!(
                r#"{{"t":{{"$date":"2026-11-26T10:36:09.041+00:00"}},"s":"I",  "c":"TXN",      "id":51802,   "ctx":"conn6","msg":"transaction","attr":{{"parameters":{{"lsid":{{"id":{{"$uuid":"dcb583ed-38b7-4beb-91f6-9b176c66742c"}},"uid":{{"$binary":{{"base64":"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=","subType":"0"}}}}}},"txnNumber":{n},"txnRetryCounter":0,"autocommit":false,"readConcern":{{"level":"local","provenance":"implicitDefault"}}}},"readTimestamp":"Timestamp(0, 0)","ninserted":1,"keysInserted":1,"terminationCause":"{cause}","timeActiveMicros":90,"timeInactiveMicros":435,"numYields":0,"storage":{{}},"wasPrepared":false,"durationMillis":0}}}}"#
            )
        };
        let text = [ins(2), summary(2, "aborted"), ins(3), summary(3, "committed")].join("\n") + "\n";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mongod.log");
        std::fs::write(&path, text).unwrap();
        let mut log = QueryLog { sink: Some(Box::new(Sessions::default())), ..Default::default() };
        read_queries_in(crate::sources::records::open(&path).unwrap(), &mut log).unwrap();
        let mut s = *log.sink.take().unwrap().as_any().downcast::<Sessions>().unwrap();
        assert_eq!(s.transactions.len(), 2);
        s.place();
        assert_eq!(s.transactions.keys().map(|t| t.txn_number).collect::<Vec<_>>(), vec![3]);
        assert_eq!(s.aborted_left_out, 1);
    }

    /// Lines as mongod 6.0.5 writes them (captured from a replica set running a driver
    /// transaction): an insert command with the session, an update's statement on its own
    /// WRITE line, then the update command with the session but no statements.
    #[test]
    fn a_json_log_transaction_is_read_whole() {
        let text = r#"{"t":{"$date":"2026-11-24T06:01:49.541+00:00"},"s":"I",  "c":"COMMAND",  "id":51803,   "ctx":"conn5","msg":"Slow query","attr":{"type":"command","ns":"shop.orders","command":{"insert":"orders","ordered":true,"lsid":{"id":{"$uuid":"48c5d050-ca79-4822-9777-2b193e6aef5c"}},"startTransaction":true,"txnNumber":1,"autocommit":false,"$db":"shop"},"ninserted":1,"durationMillis":0}}
{"t":{"$date":"2026-11-24T06:01:49.542+00:00"},"s":"I",  "c":"WRITE",    "id":51803,   "ctx":"conn5","msg":"Slow query","attr":{"type":"update","ns":"shop.payments","command":{"q":{"orderId":1,"customerId":7},"u":{"$set":{"x":1}},"multi":false,"upsert":true},"planSummary":"COLLSCAN","durationMillis":0}}
{"t":{"$date":"2026-11-24T06:01:49.542+00:00"},"s":"I",  "c":"COMMAND",  "id":51803,   "ctx":"conn5","msg":"Slow query","attr":{"type":"command","ns":"shop.$cmd","command":{"update":"payments","ordered":true,"lsid":{"id":{"$uuid":"48c5d050-ca79-4822-9777-2b193e6aef5c"}},"txnNumber":1,"autocommit":false,"$db":"shop"},"durationMillis":0}}
"#;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mongod.log");
        std::fs::write(&path, text).unwrap();
        let mut log = QueryLog { sink: Some(Box::new(Sessions::default())), ..Default::default() };
        read_queries_in(crate::sources::records::open(&path).unwrap(), &mut log).unwrap();
        let s = log.sink.take().unwrap().as_any().downcast::<Sessions>().unwrap();
        assert_eq!(s.transactions.len(), 1, "{s:?}");
        let (id, ops) = s.transactions.iter().next().unwrap();
        assert_eq!(id.lsid, "48c5d050-ca79-4822-9777-2b193e6aef5c");
        assert_eq!(id.txn_number, 1);
        assert_eq!(ops.iter().map(|q| q.ns.as_str()).collect::<Vec<_>>(), vec!["shop.orders", "shop.payments"]);
    }
}
