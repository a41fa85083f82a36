//! Statements kept as their log lines, read light: a WRITE line waiting on its connection,
//! an operation of a kept transaction. The sample of transactions keeps a line's
//! operations only while its transaction hashes low enough, and most it keeps for a while
//! leave it again (a streaming bottom-k admits about k·(1 + ln(n/k)) of n): so lines are
//! parsed once the file is read (`resolve_lines`), only for the transactions still kept.

use super::{lean, Sessions};
use crate::model::query::TxnId;
use crate::model::{Op, Query, QueryOrigin};
use std::sync::Arc;

/// A statement waiting on its connection, or an operation on its way into a transaction:
/// parsed, or its line and its place among the line's operations.
#[derive(Debug)]
pub(super) enum Waiting {
    Parsed(Box<Query>),
    Line(Arc<str>, u32),
}

impl Waiting {
    /// The operation, parsed as `Sessions::op` is given it (None: the full read found none there).
    #[cfg(test)]
    pub(super) fn into_query(self) -> Option<Query> {
        match self {
            Waiting::Parsed(q) => Some(*q),
            Waiting::Line(text, index) => parse(&text, index),
        }
    }
}

/// An operation of a kept transaction not parsed yet: its place in the transaction's list
/// (a placeholder holds it), its line and its place among the line's operations.
#[derive(Debug)]
pub(super) struct Unparsed {
    pub(super) at: usize,
    pub(super) text: Arc<str>,
    pub(super) index: u32,
}

fn parse(text: &str, index: u32) -> Option<Query> {
    super::super::resolve::op_of_line(text, index as usize).map(|q| lean(&q))
}

/// What holds an unparsed operation's place. The empty filter is cloned (a new `Document`
/// draws a hasher seed).
fn placeholder() -> Query {
    static EMPTY: std::sync::LazyLock<bson::Document> = std::sync::LazyLock::new(bson::Document::new);
    Query::new(Op::Find, String::new(), EMPTY.clone(), QueryOrigin::SlowQueryLog)
}

impl Sessions {
    /// A connection's waiting statements (or a line's operations) into `txn` if it is kept;
    /// those still as lines stay so until the file is read.
    pub(super) fn add_waiting(&mut self, txn: TxnId, waiting: Vec<Waiting>) {
        let mut ops = Vec::with_capacity(waiting.len());
        let mut unparsed = Vec::new();
        for w in waiting {
            match w {
                Waiting::Parsed(q) => ops.push(*q),
                Waiting::Line(text, index) => {
                    unparsed.push(Unparsed { at: ops.len(), text, index });
                    ops.push(placeholder());
                }
            }
        }
        self.add_with_unparsed(txn, ops, unparsed);
    }

    /// Parse the kept transactions' operations still held as lines, on every core. An
    /// operation the full read does not find where the light read did (it reads every line
    /// the light read takes the same way: `light::tests`) leaves its transaction.
    pub(super) fn resolve_lines(&mut self) {
        use rayon::prelude::*;
        let jobs: Vec<(TxnId, Unparsed)> =
            std::mem::take(&mut self.unparsed).into_iter().flat_map(|(t, us)| us.into_iter().map(move |u| (t.clone(), u))).collect();
        let parsed: Vec<(TxnId, usize, Option<Query>)> = jobs.into_par_iter().map(|(t, u)| (t, u.at, parse(&u.text, u.index))).collect();
        let mut missing: std::collections::BTreeMap<TxnId, Vec<usize>> = Default::default();
        for (t, at, q) in parsed {
            match (q, self.transactions.get_mut(&t).and_then(|ops| ops.get_mut(at))) {
                (Some(q), Some(slot)) => *slot = q,
                _ => missing.entry(t).or_default().push(at),
            }
        }
        debug_assert!(missing.is_empty(), "the light and the full read of a transaction's line disagree");
        for (t, mut ats) in missing {
            ats.sort_unstable_by(|a, b| b.cmp(a));
            if let Some(ops) = self.transactions.get_mut(&t) {
                for at in ats {
                    if at < ops.len() {
                        ops.remove(at);
                    }
                }
            }
        }
    }
}
