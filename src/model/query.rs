//! One sampled operation on the analysed collection, whatever log it came from.

use bson::{Bson, Document};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Find,
    Aggregate,
    Count,
    Distinct,
    Update,
    Delete,
    FindAndModify,
    Insert,
}

impl Op {
    /// Every operation, in declaration order (`op as usize` indexes it).
    pub(crate) const ALL: [Op; 8] =
        [Op::Find, Op::Aggregate, Op::Count, Op::Distinct, Op::Update, Op::Delete, Op::FindAndModify, Op::Insert];

    pub(crate) fn is_read(self) -> bool {
        matches!(self, Op::Find | Op::Aggregate | Op::Count | Op::Distinct)
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Op::Find => "find",
            Op::Aggregate => "aggregate",
            Op::Count => "count",
            Op::Distinct => "distinct",
            Op::Update => "update",
            Op::Delete => "delete",
            Op::FindAndModify => "findAndModify",
            Op::Insert => "insert",
        }
    }
}

/// Where a query was read from; sampled queries carry their own shard key update diffs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryOrigin {
    SlowQueryLog,
    Profiler,
    SampledQueries,
}

#[derive(Debug, Clone, PartialEq)]
pub enum UpdateSpec {
    /// `{$set: ..., $unset: ...}`
    Modifiers(Document),
    /// A whole new document.
    Replacement(Document),
    /// An aggregation pipeline update.
    Pipeline(Vec<Document>),
    /// findAndModify with `remove: true`.
    Remove,
}

impl UpdateSpec {
    pub(crate) fn from_bson(u: &Bson) -> Option<UpdateSpec> {
        match u {
            Bson::Document(d) => {
                if d.keys().next().is_some_and(|k| k.starts_with('$')) {
                    Some(UpdateSpec::Modifiers(d.clone()))
                } else {
                    Some(UpdateSpec::Replacement(d.clone()))
                }
            }
            Bson::Array(a) => Some(UpdateSpec::Pipeline(a.iter().filter_map(|s| s.as_document().cloned()).collect())),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub(crate) op: Op,
    pub(crate) ns: String,
    pub filter: Document,
    pub collation: Option<Document>,
    pub(crate) let_vars: Option<Document>,
    /// update `multi: true`, delete `limit: 0`; findAndModify is never multi.
    pub multi: bool,
    pub upsert: bool,
    pub update: Option<UpdateSpec>,
    pub origin: QueryOrigin,
    /// Documents an insert wrote (1 for a logged insert statement).
    pub(crate) count: u64,
    /// What the log or profiler says the operation cost, when it says.
    pub(crate) stats: Option<Box<OpStats>>,
    /// The multi-document transaction it ran in (`lsid` + `txnNumber` with `autocommit: false`),
    /// and the connection that logged it; None outside sessions.
    pub(crate) session: Option<Box<SessionRef>>,
    /// The collections an aggregation joins (`$lookup`, `$graphLookup`, `$unionWith`).
    pub(crate) joins: Vec<Join>,
    /// An insert's documents, when the source holds them (a driver that sends them in the
    /// command body: the log's and the profiler's `documents`) and a transaction reader
    /// wants them (`plan`): their values place the insert and link its collection.
    pub(crate) inserted: Vec<Document>,
}

/// A multi-document transaction: the session id and its transaction number.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct TxnId {
    /// `lsid.id`, as text (a UUID).
    pub(crate) lsid: String,
    pub(crate) txn_number: i64,
}

/// Where an operation ran: its transaction (if any) and the logging connection (`ctx`,
/// JSON logs only), which ties a write statement's line to its command's.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct SessionRef {
    pub(crate) txn: Option<TxnId>,
    pub(crate) conn: Option<String>,
    /// The profiler's `client` (an address, no port) and `ts`: what places a profiled
    /// write statement, which carries no session, in its transaction.
    pub(crate) client: Option<String>,
    pub(crate) ts_millis: Option<i64>,
    /// The command said `startTransaction: true`: nothing of its transaction ran before it.
    pub(crate) starts: bool,
}

/// One stage of an aggregation that reads another collection.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Join {
    pub(crate) stage: JoinStage,
    /// The joined collection's namespace.
    pub(crate) from: String,
    /// The field of this collection's documents matched (`localField`, `connectFromField`).
    pub(crate) local_field: Option<String>,
    /// The field of the joined collection matched (`foreignField`, `connectToField`).
    pub(crate) foreign_field: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JoinStage {
    Lookup,
    GraphLookup,
    UnionWith,
}

impl JoinStage {
    pub(crate) fn name(self) -> &'static str {
        match self {
            JoinStage::Lookup => "$lookup",
            JoinStage::GraphLookup => "$graphLookup",
            JoinStage::UnionWith => "$unionWith",
        }
    }
}

/// Cost figures of one logged or profiled operation (`shardkey workload`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpStats {
    pub(crate) millis: Option<i64>,
    pub(crate) docs_examined: Option<i64>,
    pub(crate) keys_examined: Option<i64>,
    pub(crate) nreturned: Option<i64>,
    pub(crate) plan_summary: Option<String>,
    /// When it ran, milliseconds since the epoch (absent from 2.x ctime timestamps, which have no year).
    pub(crate) ts_millis: Option<i64>,
}

/// An operation as a counter of figures reads it (`metrics::workload`): a `Query`'s, or a
/// slow-query line's read light, where building a `Query` per operation (its namespace, its
/// figures boxed, its plan copied, each moved three times) was a tenth of `workload`'s time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OpFigures<'a> {
    pub(crate) op: Op,
    pub(crate) ns: &'a str,
    pub(crate) millis: Option<i64>,
    pub(crate) docs_examined: Option<i64>,
    pub(crate) keys_examined: Option<i64>,
    pub(crate) nreturned: Option<i64>,
    pub(crate) plan_summary: Option<&'a str>,
}

impl Query {
    pub fn new(op: Op, ns: impl Into<String>, filter: Document, origin: QueryOrigin) -> Query {
        Query {
            op,
            ns: ns.into(),
            filter,
            collation: None,
            let_vars: None,
            multi: false,
            upsert: false,
            update: None,
            origin,
            count: 1,
            stats: None,
            session: None,
            joins: Vec::new(),
            inserted: Vec::new(),
        }
    }

    /// What a counter of figures reads of it.
    pub(crate) fn figures(&self) -> OpFigures<'_> {
        let st = self.stats.as_deref();
        OpFigures {
            op: self.op,
            ns: &self.ns,
            millis: st.and_then(|s| s.millis),
            docs_examined: st.and_then(|s| s.docs_examined),
            keys_examined: st.and_then(|s| s.keys_examined),
            nreturned: st.and_then(|s| s.nreturned),
            plan_summary: st.and_then(|s| s.plan_summary.as_deref()),
        }
    }

    /// A retention delete: `deleteMany` whose filter is only an upper bound (`$lt`/`$lte`) on
    /// one field, `{ts: {$lt: cutoff}}`. It removes the oldest documents wherever the key puts
    /// them: the same documents, the same work, under every key.
    pub(crate) fn is_retention_delete(&self) -> bool {
        if self.op != Op::Delete || !self.multi || self.filter.len() != 1 {
            return false;
        }
        let Some((field, Bson::Document(ops))) = self.filter.iter().next() else { return false };
        !field.starts_with('$') && !ops.is_empty() && ops.keys().all(|k| k == "$lt" || k == "$lte")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn every_op_is_listed_at_its_own_index() {
        assert!(Op::ALL.iter().enumerate().all(|(i, op)| *op as usize == i));
        let names: std::collections::BTreeSet<&str> = Op::ALL.iter().map(|op| op.name()).collect();
        assert_eq!(names.len(), Op::ALL.len());
    }

    #[test]
    fn a_retention_delete_is_a_delete_many_below_one_bound() {
        let many = |f: Document| Query { multi: true, ..Query::new(Op::Delete, "a.b", f, QueryOrigin::Profiler) };
        assert!(many(doc! {"ts": {"$lt": 5}}).is_retention_delete());
        assert!(many(doc! {"ts": {"$lte": 5}}).is_retention_delete());
        // A tenant's own clean-up, a range from below, a deleteOne: not retention.
        assert!(!many(doc! {"ts": {"$lt": 5}, "accountId": 3}).is_retention_delete());
        assert!(!many(doc! {"ts": {"$gt": 5}}).is_retention_delete());
        assert!(!many(doc! {"ts": 5}).is_retention_delete());
        assert!(!Query::new(Op::Delete, "a.b", doc! {"ts": {"$lt": 5}}, QueryOrigin::Profiler).is_retention_delete());
        let update = Query { multi: true, ..Query::new(Op::Update, "a.b", doc! {"ts": {"$lt": 5}}, QueryOrigin::Profiler) };
        assert!(!update.is_retention_delete());
    }
}
