//! The kept operations of light reads parsed in full, once the sample has chosen them.

use super::line::{classify_line, Line};
use super::log::{Deferred, QueryLog};
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
        let parse = |d: &Deferred| -> Result<Query> {
            let mut part = QueryLog { limit: usize::MAX, raw: true, ..Default::default() };
            let text = simdutf8::basic::from_utf8(&d.text).map_err(|_| disagree(d.lineno))?;
            match classify_line(text) {
                Line::Slow(sq) => slow_log::add_slow_query(&mut part, *sq, super::once::Tie::Alone),
                _ => return Err(disagree(d.lineno)),
            }
            let index = d.index as usize;
            if index >= part.queries.len() {
                return Err(disagree(d.lineno));
            }
            Ok(part.queries.swap_remove(index))
        };
        self.queries.par_iter_mut().zip(deferred.par_iter()).try_for_each(|(q, d)| {
            if let Some(d) = d {
                *q = parse(d)?;
            }
            Ok(())
        })
    }
}
