//! `workload`'s operations read light (issue 52). The counter reads of an operation only its
//! command, namespace, filter and cost figures (`metrics::workload`), so a line the light read
//! takes is not parsed into command documents: only each filter's text goes to bson, alone.
//! bson reads a value alone as it reads it inside the line (the same visitor, and the light
//! read has vouched for every value of the command), so the filters are the full read's.
//! What the full read builds besides (sessions, collations, joins, inserted documents) is
//! left out: only a sink that says it reads figures alone (`OpSink::figures_only`) is fed so.

use super::super::log::QueryLog;
use super::super::once::{Fate, Held};
use super::{LightCmd, LightOps};
use crate::model::{Op, OpStats, Query, QueryOrigin};
use bson::{Bson, Document};
use std::borrow::Cow;

/// What a slow-query line tells of its operations' figures, as texts of the line.
#[derive(Debug, PartialEq, Default)]
pub(crate) struct Figures<'a> {
    pub(crate) kind: Kind<'a>,
    pub(crate) millis: Option<i64>,
    pub(crate) docs_examined: Option<i64>,
    pub(crate) keys_examined: Option<i64>,
    pub(crate) nreturned: Option<i64>,
    pub(crate) plan_summary: Option<Cow<'a, str>>,
    /// The line's `t.$date`.
    pub(crate) t: Option<Cow<'a, str>>,
}

/// Which operations a line yields, with the text each one's filter is read from.
#[derive(Debug, PartialEq, Default, Clone, Copy)]
pub(crate) enum Kind<'a> {
    /// None (the light read says why, or counts none).
    #[default]
    Nothing,
    /// One operation; its filter's text (a missing or non-document filter is empty).
    One(Op, Option<&'a str>),
    /// An insert (no filter).
    Insert,
    /// An aggregation: the text of its pipeline (its leading `$match` is the filter).
    Aggregate(Option<&'a str>),
    /// An update or delete command with its statements: the array's text.
    Statements(Op, Option<&'a str>),
}

/// `slow_log::add_operations` and `command::add_command`'s choice of operation and filter,
/// step by step, as `light::counted` follows them for the count.
pub(super) fn kind_of<'a>(typ: Option<&str>, command: Option<&LightCmd<'a>>, originating: Option<&LightCmd<'a>>) -> Kind<'a> {
    let Some(mut cmd) = command else { return Kind::Nothing };
    match typ.unwrap_or("command") {
        "update" => return Kind::One(Op::Update, cmd.q),
        "remove" => return Kind::One(Op::Delete, cmd.q),
        "insert" => return Kind::Insert,
        _ => {}
    }
    if cmd.first.is_some_and(|n| n.eq_ignore_ascii_case("getMore")) {
        match originating {
            Some(o) => cmd = o,
            None => return Kind::Nothing,
        }
    }
    match cmd.first {
        // A write statement profiled on its own: an update when it has `u`.
        Some("q") => Kind::One(if cmd.u { Op::Update } else { Op::Delete }, cmd.q),
        Some("find") => Kind::One(Op::Find, cmd.filter),
        Some("count") => Kind::One(Op::Count, cmd.query),
        Some("distinct") => Kind::One(Op::Distinct, cmd.query),
        Some("aggregate") => Kind::Aggregate(cmd.pipeline),
        Some("insert") => Kind::Insert,
        Some("update") => Kind::Statements(Op::Update, cmd.statements),
        Some("delete") => Kind::Statements(Op::Delete, cmd.statements),
        Some(n) if n.eq_ignore_ascii_case("findAndModify") => Kind::One(Op::FindAndModify, cmd.query),
        _ => Kind::Nothing,
    }
}

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

    /// The filter of the line's one operation (`Kind::One`), parsed.
    fn one_filter(&self) -> Document {
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
        let stats = OpStats {
            millis: self.millis,
            docs_examined: self.docs_examined,
            keys_examined: self.keys_examined,
            nreturned: self.nreturned,
            plan_summary: self.plan_summary.as_deref().map(str::to_string),
            ts_millis,
        };
        let mut push = |op: Op, filter: Document| {
            let mut q = Query::new(op, ns, filter, QueryOrigin::SlowQueryLog);
            q.stats = Some(Box::new(stats.clone()));
            out.push(q);
        };
        match self.kind {
            Kind::Nothing => {}
            // A clone of an empty document draws no hasher seed (`Document::new` does, from
            // a counter both cores share: 6% of `workload`'s profile with the parse).
            Kind::One(op, _) if shaped => push(op, EMPTY.clone()),
            Kind::One(op, filter) => push(op, document(filter).unwrap_or_default()),
            Kind::Insert => push(Op::Insert, Document::new()),
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

/// A slow-query line read light for a sink of figures (`workload`): its operations counted,
/// skipped or held as the full read does (`once`). False when the light read leaves the
/// line to the full one. `scratch` is reused from line to line.
pub(in crate::sources::queries) fn add_line(part: &mut QueryLog, text: &str, scratch: &mut Vec<Query>) -> bool {
    let Some(found): Option<LightOps> = super::read(text) else { return false };
    scratch.clear();
    // `workload` counts a filter by its shape: a plain one is shaped from its text, not
    // parsed into a document (its parse and shaping were a sixth of `workload`'s profile).
    let mut shape = std::mem::take(&mut part.shape);
    let shaped = found.ops == 1 && part.takes_shapes() && found.figures.plain_shape(&mut shape);
    if found.ops > 0 {
        let ns = match &found.ns {
            super::Ns::Given(n) => n.to_string(),
            super::Ns::Joined(db, coll) => [&**db, ".", &**coll].concat(),
        };
        found.figures.queries(&ns, part.window != (None, None), shaped, scratch);
        // The light count and these operations disagree only if a reader is wrong: the full
        // read decides.
        if scratch.len() != found.ops {
            part.shape = shape;
            return false;
        }
    }
    if let Some(why) = found.skip {
        part.skip(why);
    }
    let fates = part.line_fates(found.conn.as_deref(), &found.tie);
    let mut held = Vec::new();
    for (index, mut q) in scratch.drain(..).enumerate() {
        match fates.fate(index) {
            Fate::Count => part.accept_shaped(q, shaped.then_some(shape.as_str())),
            Fate::Twice(why) => part.skip(why),
            Fate::Wait => {
                // Held for the merge, which gives it to the sink whole.
                if shaped {
                    q.filter = found.figures.one_filter();
                }
                held.push(Held::Parsed(Box::new(q)))
            }
        }
    }
    part.end_line(fates, held);
    part.shape = shape;
    true
}
