//! `workload`'s operations read light (issue 52). The counter reads of an operation only its
//! command, namespace, filter and cost figures (`metrics::workload`), so a line the light read
//! takes is not parsed into command documents: only each filter's text goes to bson, alone.
//! bson reads a value alone as it reads it inside the line (the same visitor, and the light
//! read has vouched for every value of the command), so the filters are the full read's.
//! What the full read builds besides (sessions, collations, joins, inserted documents) is
//! left out: only a sink that says it reads figures alone (`OpSink::figures_only`) is fed so.

use super::ops::{Figures, Kind};
use crate::model::{Op, OpFigures, OpStats, Query, QueryOrigin};
use bson::{Bson, Document};

static EMPTY: std::sync::LazyLock<Document> = std::sync::LazyLock::new(Document::new);

/// A value's text read as bson reads it; a document, else none.
fn document(text: Option<&str>) -> Option<Document> {
    match serde_json::from_str::<Bson>(text?) {
        Ok(Bson::Document(d)) => Some(d),
        _ => None,
    }
}

impl Figures<'_> {
    /// The shape of the line's one filter from its text, written into `out`, when its names
    /// alone make it (`scan::plain_filter_names`): the filter need not be parsed.
    pub(super) fn plain_shape(&self, out: &mut String) -> bool {
        let Kind::One(_, Some(filter)) = self.kind else { return false };
        let mut names = [""; 16];
        let Some(n) = super::scan::plain_filter_names(filter, &mut names) else { return false };
        crate::targeting::shapes::plain_shape_into(&mut names[..n], out);
        true
    }

    /// The line's one operation on `ns` (`Kind::One` or `Kind::Insert`) as a counter of
    /// figures reads it; None for any other kind.
    pub(super) fn one_op<'a>(&'a self, ns: &'a str) -> Option<OpFigures<'a>> {
        let op = match self.kind {
            Kind::One(op, _) => op,
            Kind::Insert => Op::Insert,
            _ => return None,
        };
        Some(OpFigures {
            op,
            ns,
            millis: self.millis,
            docs_examined: self.docs_examined,
            keys_examined: self.keys_examined,
            nreturned: self.nreturned,
            plan_summary: self.plan_summary.as_deref(),
        })
    }

    /// `one_op`'s operation as the full read gives it (its filter parsed), for the sample or
    /// the merge to keep.
    pub(super) fn one_query(&self, op: &OpFigures) -> Query {
        let filter = match self.kind {
            Kind::One(_, filter) => document(filter).unwrap_or_default(),
            _ => EMPTY.clone(),
        };
        Self::query(op.op, op.ns, filter, &self.stats(None))
    }

    fn stats(&self, ts_millis: Option<i64>) -> OpStats {
        OpStats {
            millis: self.millis,
            docs_examined: self.docs_examined,
            keys_examined: self.keys_examined,
            nreturned: self.nreturned,
            plan_summary: self.plan_summary.as_deref().map(str::to_string),
            ts_millis,
        }
    }

    fn query(op: Op, ns: &str, filter: Document, stats: &OpStats) -> Query {
        let mut q = Query::new(op, ns, filter, QueryOrigin::SlowQueryLog);
        q.stats = Some(Box::new(stats.clone()));
        q
    }

    /// The filter of the line's one operation (`Kind::One`), parsed.
    pub(super) fn one_filter(&self) -> Document {
        match self.kind {
            Kind::One(_, filter) => document(filter).unwrap_or_default(),
            _ => Document::new(),
        }
    }

    /// The operations of the line on `ns`, with their figures (and their time when `timed`),
    /// as the full read gives them to a sink, in order, into `out`; `Kind::One`'s filter left
    /// empty when `shaped` (its shape was taken from its text).
    pub(crate) fn queries(&self, ns: &str, timed: bool, shaped: bool, out: &mut Vec<Query>) {
        let ts_millis = if timed {
            self.t.as_deref().and_then(|d| bson::DateTime::parse_rfc3339_str(d).ok()).map(|d| d.timestamp_millis())
        } else {
            None
        };
        let stats = self.stats(ts_millis);
        let mut push = |op: Op, filter: Document| out.push(Self::query(op, ns, filter, &stats));
        match self.kind {
            Kind::Nothing => {}
            // A clone of an empty document draws no hasher seed (`Document::new` does, from
            // a counter both cores share: 6% of `workload`'s profile with the parse); inserts too.
            Kind::One(op, _) if shaped => push(op, EMPTY.clone()),
            Kind::One(op, filter) => push(op, document(filter).unwrap_or_default()),
            Kind::Insert => push(Op::Insert, EMPTY.clone()),
            Kind::Aggregate(pipeline) => {
                let filter = match pipeline.map(serde_json::from_str::<Bson>) {
                    Some(Ok(Bson::Array(p))) => crate::model::pipeline::leading_match(&p),
                    _ => Document::new(),
                };
                push(Op::Aggregate, filter);
            }
            Kind::Statements(op, stmts) => {
                if let Some(Ok(Bson::Array(stmts))) = stmts.map(serde_json::from_str::<Bson>) {
                    for s in stmts.iter().filter_map(Bson::as_document) {
                        push(op, s.get_document("q").cloned().unwrap_or_default());
                    }
                }
            }
        }
    }
}
