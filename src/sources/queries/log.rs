//! The query log: every operation read, counted per namespace, and a uniform sample of
//! them kept (Algorithm R) for classification; parts read in parallel merge in file order.

use super::once::InBlock;
use crate::model::{OpStats, Query};
use bson::Document;
use std::collections::BTreeMap;

/// A shard key update diff from `config.sampledQueriesDiff`.
#[derive(Debug, Clone)]
pub(crate) struct KeyDiff {
    pub(crate) ns: String,
    pub(crate) diff: Document,
}

/// Operations read from query logs. Memory stays bounded: at most `limit`
/// operations are kept, a uniform sample (Algorithm R) of those offered; every
/// operation is still counted per namespace.
#[derive(Debug)]
pub struct QueryLog {
    pub queries: Vec<Query>,
    pub(crate) diffs: Vec<KeyDiff>,
    /// Records (lines or documents) read.
    pub(crate) records: u64,
    /// Records not turned into a query, by reason.
    pub(crate) skipped: BTreeMap<String, u64>,
    /// Operations found, per namespace.
    pub by_namespace: BTreeMap<String, u64>,
    /// When set, only this namespace's operations are kept.
    pub(crate) only: Option<String>,
    /// Operations offered to the sample (after the namespace filter).
    pub(crate) offered: u64,
    /// Operations found (before the namespace filter).
    pub(crate) found: u64,
    pub(crate) limit: usize,
    pub(super) rng: crate::util::splitmix::SplitMix64,
    /// The cost figures of the record being read, attached to every operation it yields.
    pub(crate) pending: Option<OpStats>,
    /// The logging connection (`ctx`) of the line being read, when a sink wants sessions.
    pub(crate) pending_conn: Option<String>,
    /// The profiler's `client` of the document being read, when a sink wants sessions.
    pub(crate) pending_client: Option<String>,
    /// Lines that show one operation twice: write statements, cursors (`once`).
    pub(crate) once: super::once::Once,
    /// Each line read on its own, every operation it shows (`resolve`, tests): no `once`.
    pub(super) raw: bool,
    /// The fates of the operations the record being read pushes next, last first (`once`).
    pub(super) gate: Vec<super::once::Fate>,
    /// The operations the record being read pushed that wait for the merge (`Fate::Wait`).
    pub(super) held: Vec<super::once::Held>,
    /// `--since`/`--until` (milliseconds since the epoch): operations outside are skipped.
    pub(crate) window: (Option<i64>, Option<i64>),
    /// Sees every operation (not only the sample): `shardkey workload`.
    pub(crate) sink: Option<Box<dyn OpSink>>,
    /// While reading: `queries[j]` is a placeholder for the operation `deferred[j]` names,
    /// read in full once the file is read (`resolve`). Empty, or as long as `queries`.
    pub(super) deferred: Vec<Option<Deferred>>,
    /// A part of a block read light: its operations in order, for `merge_block` to offer.
    pub(super) staging: bool,
    pub(super) staged: Vec<Staged>,
    /// Lines that are not valid JSON (or not UTF-8): the first (line, why) and the last line.
    pub(crate) malformed: Option<((u64, String), u64)>,
    /// The server version the file being read names, the last such line in file order (a
    /// restart after an upgrade names the newer one): its text, and whether a JSON build-info
    /// line (id 23403) or a text log's startup line said it.
    pub(crate) seen_version: Option<(String, bool)>,
    /// The version each file read names, in read order (`read_query_file_into`).
    pub(crate) versions: Vec<crate::model::version::ServerVersion>,
    /// Keep each operation's time even when nothing else needs it: several sources are
    /// compared for the operations they share (`app::overlap`).
    pub(crate) keep_times: bool,
    /// The shape of the filter of the line being read light for a sink of shapes, reused
    /// from line to line (`light::figures`).
    pub(super) shape: String,
}

/// An operation a part holds for the merge: parsed (rare on the light path), or only
/// its namespace and line.
#[derive(Debug)]
pub(super) enum Staged {
    Ready(Box<Query>),
    Light { ns: std::sync::Arc<str>, at: InBlock },
}

/// What holds a deferred operation's slot until `resolve`. The empty filter is cloned
/// (a new `Document` draws a hasher seed).
fn placeholder(ns: String) -> Query {
    static EMPTY: std::sync::LazyLock<Document> = std::sync::LazyLock::new(Document::new);
    Query::new(crate::model::Op::Find, ns, EMPTY.clone(), crate::model::QueryOrigin::SlowQueryLog)
}

/// An operation counted from a light read of its line (`light`), parsed only if kept: its
/// line copied out of its block (checked as UTF-8 there; `resolve` checks it again, in parallel).
#[derive(Debug, Clone)]
pub(super) struct Deferred {
    pub(super) text: std::sync::Arc<[u8]>,
    pub(super) lineno: u64,
    pub(super) index: u32,
}

/// Something that sees every operation read, in parallel parts merged in file order.
pub(crate) trait OpSink: Send + Sync + std::fmt::Debug {
    fn op(&mut self, q: &Query);
    /// A write command logged without its statements, on connection `conn`: the statements
    /// logged just before on that connection (its `WRITE` lines) ran in `txn` (None: in none).
    fn claim(&mut self, _conn: &str, _txn: Option<crate::model::query::TxnId>) {}
    /// A transaction the log says was aborted (its summary line, id 51802).
    fn aborted(&mut self, _txn: crate::model::query::TxnId) {}
    /// Whether it reads of an operation only its command, namespace, filter and cost figures
    /// (`workload`): not its session, collation, joins nor inserted documents, nor `claim`
    /// nor `aborted`. Its lines may then be read light (`light::figures`).
    fn figures_only(&self) -> bool {
        false
    }
    /// Whether it reads of a filter only its shape (`targeting::shapes`): a light read may
    /// then shape a plain filter from its text and not parse it (`op_shaped`).
    fn takes_shapes(&self) -> bool {
        false
    }
    /// `op` for an operation whose filter was not parsed, its figures and its filter's shape
    /// given; only a sink that `takes_shapes` is given one.
    fn op_shaped(&mut self, _op: &crate::model::OpFigures, _shape: &str) {
        debug_assert!(false, "op_shaped reaches only a sink that takes_shapes");
    }
    /// Whether it reads a slow-query line's operations parsed only when `needs_parsed` says so
    /// (`plan`'s transactions): the others are read light, and the sink told of them
    /// (`unread`, `claim`). Never with `--since`/`--until`.
    fn reads_light(&self) -> bool {
        false
    }
    /// Whether operations of transaction `lsid` + `number` would be kept (else a light read
    /// serves: only `unread` hears of them).
    fn wants_txn(&mut self, _lsid: &str, _number: i64) -> bool {
        true
    }
    /// `op` for `n` operations read light, which `op` would have left unread.
    fn unread(&mut self, _n: u64) {}
    /// `op` for a write statement outside any transaction, read light: `line` (a WRITE line on
    /// connection `conn`, its one operation) waits for the command line naming its transaction.
    fn waits(&mut self, _conn: &str, _line: &str) {}
    /// `op` for the `ops` operations of a line read light (all counted), in transaction
    /// `lsid` + `number`, which `wants_txn` keeps: `line` is parsed if it is still kept once
    /// the file is read (`lines_read`).
    fn txn_line(&mut self, _lsid: &str, _number: i64, _line: &str, _ops: usize) {}
    /// The file is read: parse what was kept as lines.
    fn lines_read(&mut self) {}
    /// An empty sink of the same kind, for a parallel part.
    fn fresh(&self) -> Box<dyn OpSink>;
    /// Take in a part's sink (made by `fresh`).
    fn merge(&mut self, other: Box<dyn OpSink>);
    fn as_any(self: Box<Self>) -> Box<dyn std::any::Any>;
}

/// Why an operation outside `--since`/`--until` was left out.
pub(crate) const OUTSIDE_WINDOW: &str = "operations outside --since/--until";

/// Operations kept for classification; beyond, a uniform sample.
pub(crate) const QUERY_SAMPLE: usize = 100_000;

impl Default for QueryLog {
    fn default() -> Self {
        QueryLog {
            queries: Vec::new(),
            diffs: Vec::new(),
            records: 0,
            skipped: BTreeMap::new(),
            by_namespace: BTreeMap::new(),
            only: None,
            offered: 0,
            found: 0,
            limit: QUERY_SAMPLE,
            rng: crate::util::splitmix::SplitMix64(0x9e37_79b9),
            pending: None,
            pending_conn: None,
            pending_client: None,
            once: Default::default(),
            raw: false,
            gate: Vec::new(),
            held: Vec::new(),
            window: (None, None),
            sink: None,
            deferred: Vec::new(),
            staging: false,
            staged: Vec::new(),
            malformed: None,
            seen_version: None,
            versions: Vec::new(),
            keep_times: false,
            shape: String::new(),
        }
    }
}

impl QueryLog {
    /// A log that keeps only `ns`'s operations (all when None).
    pub(crate) fn for_namespace(ns: Option<String>) -> Self {
        QueryLog { only: ns, ..Default::default() }
    }

    /// A line that is not valid JSON (or not UTF-8): counted, and the first kept for the words.
    pub(crate) fn malformed_line(&mut self, line: u64, why: String) {
        self.skip(super::reasons::MALFORMED_LINES);
        self.note_malformed_from(Some(((line, why), line)));
    }

    pub(super) fn note_malformed_from(&mut self, other: Option<((u64, String), u64)>) {
        let Some((first, last)) = other else { return };
        self.malformed = Some(match self.malformed.take() {
            Some((f, l)) => (if f.0 <= first.0 { f } else { first }, l.max(last)),
            None => (first, last),
        });
    }

    pub(crate) fn skip(&mut self, reason: &str) {
        match self.skipped.get_mut(reason) {
            Some(n) => *n += 1,
            None => {
                self.skipped.insert(reason.to_string(), 1);
            }
        }
    }

    /// Whether operations need their cost figures and time (`workload`, `--since`/`--until`).
    pub(crate) fn wants_stats(&self) -> bool {
        self.sink.is_some() || self.keep_times || self.window != (None, None)
    }

    /// Whether slow-query lines may be read light for a sink that `reads_light`.
    pub(super) fn sink_reads_light(&self) -> bool {
        self.window == (None, None) && self.sink.as_ref().is_some_and(|s| s.reads_light())
    }

    /// Whether slow-query lines may be read light for the sink (`light::figures`): it reads
    /// figures only, and nothing keeps the operations' other fields (`keep_times`).
    pub(super) fn figures_only(&self) -> bool {
        self.sink.as_ref().is_some_and(|s| s.figures_only()) && !self.keep_times
    }

    /// Whether a filter may reach the sink as its shape alone, unparsed (`accept_shaped`):
    /// the sink reads no more of it, and no operation is kept (a kept one needs its filter).
    pub(super) fn takes_shapes(&self) -> bool {
        self.limit == 0 && self.sink.as_ref().is_some_and(|s| s.takes_shapes())
    }

    /// A part for a parallel chunk: no sample limit (none at all when the log keeps no
    /// operation, as `workload`'s: a part kept every operation of its 2,048 lines for the merge
    /// to drop, 1.4% of `workload`'s profile in `place` and more in the moves), the same
    /// window, a fresh sink.
    pub(super) fn part(&self) -> QueryLog {
        QueryLog {
            limit: if self.limit == 0 { 0 } else { usize::MAX },
            window: self.window,
            sink: self.sink.as_ref().map(|s| s.fresh()),
            keep_times: self.keep_times,
            once: super::once::Once::for_part(),
            ..Default::default()
        }
    }

    /// A part that stages its operations for `merge_block` to offer, light ones compact.
    pub(super) fn staging_part(&self) -> QueryLog {
        QueryLog { staging: true, ..self.part() }
    }

    /// Count an operation and offer it to the sample, unless `gate` says it was counted from
    /// another line or waits for the merge (`once`).
    pub(crate) fn push(&mut self, mut q: Query) {
        if let Some(s) = &self.pending {
            q.stats = Some(Box::new(s.clone()));
        }
        if self.sink.is_some() {
            if let Some(conn) = &self.pending_conn {
                q.session.get_or_insert_with(Default::default).conn = Some(conn.clone());
            }
            if let Some(client) = &self.pending_client {
                let s = q.session.get_or_insert_with(Default::default);
                s.client = Some(client.clone());
                s.ts_millis = q.stats.as_ref().and_then(|x| x.ts_millis);
            }
        }
        match self.gate.pop() {
            None | Some(super::once::Fate::Count) => self.accept(q),
            Some(super::once::Fate::Twice(why)) => self.skip(why),
            Some(super::once::Fate::Wait) => self.held.push(super::once::Held::Parsed(Box::new(q))),
        }
    }

    /// `push` past `once`: the window, the sink, the count and the sample.
    pub(super) fn accept(&mut self, q: Query) {
        self.accept_shaped(q, None);
    }

    /// `accept` of an operation whose filter's shape the sink is given (`OpSink::op_shaped`):
    /// its filter was not parsed, so only a log that keeps no operation (`limit` 0) takes it.
    pub(super) fn accept_shaped(&mut self, q: Query, shape: Option<&str>) {
        debug_assert!(shape.is_none() || self.takes_shapes(), "a filter left unparsed reaches only a sink of shapes");
        if let (Some(t), (since, until)) = (q.stats.as_ref().and_then(|s| s.ts_millis), self.window) {
            if since.is_some_and(|x| t < x) || until.is_some_and(|x| t >= x) {
                self.skip(OUTSIDE_WINDOW);
                return;
            }
        } else if self.window != (None, None) {
            self.skip("operations without a time (--since/--until cannot place them)");
            return;
        }
        if let Some(sink) = &mut self.sink {
            match shape {
                Some(shape) => sink.op_shaped(&q.figures(), shape),
                None => sink.op(&q),
            }
        }
        self.count(&q.ns);
        self.offer_parsed(q);
    }

    /// `accept_shaped` of one operation read light, outside any window, not built (`build`)
    /// unless the sample takes it: a sink that `takes_shapes` reads only `op` and `shape`.
    pub(super) fn accept_figures(&mut self, op: &crate::model::OpFigures, shape: &str, build: impl FnOnce() -> Query) {
        debug_assert!(self.window == (None, None) && self.takes_shapes());
        if let Some(sink) = &mut self.sink {
            sink.op_shaped(op, shape);
        }
        self.count(op.ns);
        let taken = if self.staging { self.offer(build()) } else { self.slot_for(op.ns).inspect(|&j| self.place(j, build())) };
        if let Some(j) = taken {
            self.set_deferred(j, None);
        }
    }

    /// A write command without its statements: tell the sink which transaction the
    /// connection's preceding statements belong to.
    pub(crate) fn claim_statements(&mut self, txn: Option<crate::model::query::TxnId>) {
        if let (Some(sink), Some(conn)) = (&mut self.sink, &self.pending_conn) {
            sink.claim(conn, txn);
        }
    }

    /// An operation found on `ns`.
    fn count(&mut self, ns: &str) {
        self.found += 1;
        match self.by_namespace.get_mut(ns) {
            Some(n) => *n += 1,
            None => {
                self.by_namespace.insert(ns.to_string(), 1);
            }
        }
    }

    /// Offer a parsed operation: the slot it takes no longer waits for a line.
    fn offer_parsed(&mut self, q: Query) {
        if let Some(j) = self.offer(q) {
            self.set_deferred(j, None);
        }
    }

    /// Offer to the sample; the slot it took, if any.
    fn offer(&mut self, q: Query) -> Option<usize> {
        if self.staging {
            self.staged.push(Staged::Ready(Box::new(q)));
            return None;
        }
        let j = self.slot_for(&q.ns)?;
        self.place(j, q);
        Some(j)
    }

    /// Algorithm R's decision for an operation on `ns`: the slot it takes (the end when
    /// the sample is not full yet), if any. The operation is built only when it has one.
    fn slot_for(&mut self, ns: &str) -> Option<usize> {
        if self.only.as_ref().is_some_and(|only| only != ns) {
            return None;
        }
        self.offered += 1;
        self.rng.reservoir_slot(self.offered, self.queries.len(), self.limit)
    }

    fn place(&mut self, j: usize, q: Query) {
        if self.queries.capacity() == 0 && self.limit < usize::MAX {
            // The sample's room at once (pages are touched only as it fills), not grown by copies.
            self.queries.reserve_exact(self.limit);
        }
        if j == self.queries.len() {
            self.queries.push(q);
        } else {
            self.queries[j] = q;
        }
    }

    /// Count an operation a light read found (`push` without a window or a sink, which
    /// need the parsed line) and stage it: a part read light does (`read_block`), and
    /// `merge_block` offers it, a placeholder holding its place until `resolve`.
    pub(super) fn push_deferred(&mut self, ns: std::sync::Arc<str>, at: InBlock) {
        debug_assert!(self.staging, "only a staging part reads light");
        self.count(&ns);
        self.staged.push(Staged::Light { ns, at });
    }

    /// Slot `j` waits for `d`'s line. A slot that already waits keeps its placeholder
    /// (writing a fresh one cost more than the rest of the merge).
    fn place_deferred(&mut self, j: usize, ns: &str, d: Deferred) {
        match self.queries.get_mut(j) {
            Some(q) if self.deferred.get(j).is_some_and(Option::is_some) => {
                if q.ns != ns {
                    q.ns.clear();
                    q.ns.push_str(ns);
                }
            }
            _ => self.place(j, placeholder(ns.to_string())),
        }
        self.set_deferred(j, Some(d));
    }

    fn set_deferred(&mut self, j: usize, d: Option<Deferred>) {
        if d.is_none() && self.deferred.is_empty() {
            return;
        }
        if self.deferred.len() < self.queries.len() {
            self.deferred.resize(self.queries.len(), None);
        }
        self.deferred[j] = d;
    }

    pub(crate) fn merge(&mut self, other: QueryLog) {
        self.merge_block(other, &[]);
    }

    /// `merge` of a part read from `block`: its deferred operations that the sample
    /// takes get their own copy of their line.
    pub(super) fn merge_block(&mut self, mut other: QueryLog, block: &[u8]) {
        if let (Some(mine), Some(theirs)) = (&mut self.sink, other.sink.take()) {
            mine.merge(theirs);
        }
        let mut last: Option<(usize, std::sync::Arc<[u8]>)> = None;
        // A deferred operation the sample takes gets its own copy of its line (shared by
        // the line's operations).
        let mut own = |at: InBlock| {
            let text = match &last {
                Some((s, t)) if *s == at.start => t.clone(),
                _ => {
                    let t: std::sync::Arc<[u8]> = block[at.start..at.start + at.len].into();
                    last = Some((at.start, t.clone()));
                    t
                }
            };
            Deferred { text, lineno: at.lineno, index: at.index }
        };
        // What the part held for the parts before it (`once`), settled now that they are read.
        let mut once = std::mem::take(&mut self.once);
        once.settle(&mut other.once, |held, fate| match (held, fate) {
            (_, super::once::Fate::Twice(why)) => self.skip(why),
            (super::once::Held::Parsed(q), _) => self.accept(*q),
            (super::once::Held::Light { ns, at }, _) => {
                if let Some(sink) = &mut self.sink {
                    sink.unread(1);
                }
                self.count(&ns);
                if let Some(j) = self.slot_for(&ns) {
                    self.place_deferred(j, &ns, own(at));
                }
            }
        });
        self.once = once;
        for item in std::mem::take(&mut other.staged) {
            match item {
                Staged::Ready(q) => self.offer_parsed(*q),
                Staged::Light { ns, at } => {
                    if let Some(j) = self.slot_for(&ns) {
                        self.place_deferred(j, &ns, own(at));
                    }
                }
            }
        }
        // Only the log being read holds placeholders (`resolve` empties it): a merged log's
        // queries are parsed.
        debug_assert!(other.deferred.is_empty(), "a log is merged before its kept lines are parsed");
        for q in other.queries {
            self.offer_parsed(q);
        }
        self.diffs.extend(other.diffs.into_iter().filter(|d| self.only.as_ref().is_none_or(|ns| ns == &d.ns)));
        self.records += other.records;
        self.found += other.found;
        self.note_malformed_from(other.malformed.take());
        if other.seen_version.is_some() {
            self.seen_version = other.seen_version.take();
        }
        self.versions.extend(other.versions);
        for (k, v) in other.skipped {
            *self.skipped.entry(k).or_default() += v;
        }
        for (k, v) in other.by_namespace {
            *self.by_namespace.entry(k).or_default() += v;
        }
    }
}
