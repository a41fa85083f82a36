//! Statements kept as their log lines, read light: a WRITE line waiting on its connection,
//! an operation of a kept transaction. The sample of transactions keeps a line's
//! operations only while its transaction hashes low enough, and most it keeps for a while
//! leave it again (a streaming bottom-k admits about k·(1 + ln(n/k)) of n): so lines are
//! parsed once the file is read (`resolve_lines`), only for the transactions still kept.

use super::{lean, Sessions};
use crate::model::query::TxnId;
use crate::model::Query;
use std::sync::Arc;

/// A statement waiting on its connection, or an operation on its way into a transaction:
/// parsed, or its line and its place among the line's operations.
#[derive(Debug, Clone)]
pub(super) enum Waiting {
    Parsed(Box<Query>),
    Line(Arc<str>, u32),
}

impl Waiting {
    /// The operation, parsed as `Sessions::op` is given it (None: the full read found none there).
    pub(super) fn into_query(self) -> Option<Query> {
        match self {
            Waiting::Parsed(q) => Some(*q),
            Waiting::Line(text, index) => parse(&text, index),
        }
    }
}

fn parse(text: &str, index: u32) -> Option<Query> {
    super::super::resolve::op_of_line(text, index as usize).map(|q| lean(&q))
}

impl Sessions {
    /// Parse the operations of the kept transactions still held as lines, on every core,
    /// into `transactions`. An operation the full read does not find where the light read did
    /// (it reads every line the light read takes the same way: `light::tests`) is left out.
    pub(super) fn resolve_lines(&mut self) {
        use rayon::prelude::*;
        let resolved: Vec<(TxnId, Vec<Query>, usize)> = std::mem::take(&mut self.reading)
            .into_par_iter()
            .map(|(t, ops)| {
                let n = ops.len();
                let parsed: Vec<Query> = ops.into_iter().filter_map(Waiting::into_query).collect();
                let missing = n - parsed.len();
                (t, parsed, missing)
            })
            .collect();
        debug_assert!(resolved.iter().all(|r| r.2 == 0), "the light and the full read of a transaction's line disagree");
        for (t, ops, _) in resolved {
            self.transactions.entry(t).or_default().extend(ops);
        }
    }
}
