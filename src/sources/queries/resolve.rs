//! The kept operations of light reads parsed in full, once the sample has chosen them.

use super::line::{classify_line, Line};
use super::log::{Deferred, OpSink, QueryLog};
use super::slow_log;
use crate::model::Query;
use anyhow::Result;

impl QueryLog {
    /// Parse in full the lines of the operations the sample kept from light reads, on every
    /// core, each slot's parsed operation written in place. (A line two kept operations share
    /// is parsed for each: rare, and cheaper than what matched lines to slots, a map and the
    /// moves after it, which ran on one thread: 7% of `analyze --queries`' time.)
    pub(super) fn resolve(&mut self, shown: &str) -> Result<()> {
        use rayon::prelude::*;
        if self.deferred.is_empty() {
            return Ok(());
        }
        let deferred = std::mem::take(&mut self.deferred);
        let disagree =
            |lineno: u64| anyhow::anyhow!("{shown}: line {lineno}: internal error: the light and the full read of a slow query disagree");
        // Read as the log's own lines are: with their figures, and what a sink's reading
        // attaches (the connection, an insert's documents) when it has one (`plan`).
        let (stats, sink) = (self.wants_stats(), self.sink.is_some());
        let parse = |d: &Deferred| -> Result<Query> {
            let text = simdutf8::basic::from_utf8(&d.text).map_err(|_| disagree(d.lineno))?;
            parse_op(text, d.index as usize, stats, sink).ok_or_else(|| disagree(d.lineno))
        };
        self.queries.par_iter_mut().zip(deferred.par_iter()).try_for_each(|(q, d)| {
            if let Some(d) = d {
                *q = parse(d)?;
            }
            Ok(())
        })
    }
}

/// Operation `index` of a slow-query line read light, read in full as the log's lines are
/// read for a sink (`Sessions`' statements kept as lines); None if it has no such one.
pub(super) fn op_of_line(text: &str, index: usize) -> Option<Query> {
    parse_op(text, index, false, true)
}

/// Operation `index` of a slow-query line read on its own, with its figures (`stats`) and
/// what a sink's reading attaches (`sink`); None if the full read finds no such one.
fn parse_op(text: &str, index: usize, stats: bool, sink: bool) -> Option<Query> {
    let sink = sink.then(|| Box::new(Unseen) as Box<dyn OpSink>);
    let mut part = QueryLog { limit: usize::MAX, raw: true, keep_times: stats, sink, ..Default::default() };
    match classify_line(text) {
        Line::Slow(sq) => slow_log::add_slow_query(&mut part, *sq, super::once::Tie::Alone),
        _ => return None,
    }
    (index < part.queries.len()).then(|| part.queries.swap_remove(index))
}

/// A sink that reads nothing: a kept line parsed again gets what the log's sink made the
/// full read attach.
#[derive(Debug)]
struct Unseen;

impl OpSink for Unseen {
    fn op(&mut self, _q: &Query) {}
    fn fresh(&self) -> Box<dyn OpSink> {
        Box::new(Unseen)
    }
    fn merge(&mut self, _other: Box<dyn OpSink>) {}
    fn as_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}
