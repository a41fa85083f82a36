//! The light read of a "Slow query" line: which operations it holds and on which
//! namespaces, without building its command documents. Counting needs only that; the
//! few lines the sample keeps are parsed in full afterwards (`QueryLog::resolve`).
//!
//! It follows `slow_log::add_slow_query` and `command::add_command` step by step (`ops`,
//! `command`), from what one of two readers takes of the line: a hand scan (`scan`) for
//! plain JSON without escapes, else serde with each command value as raw text
//! (`read_serde`). Both decline (the line then takes the full path) wherever the full parse
//! could read it differently: duplicated command fields, a value bson refuses or reads as
//! Extended JSON (bson itself is asked about such values), very deep nesting. Tests hold
//! the light read to the full read on every line of the real logs and each command shape,
//! and the hand scan to the serde read there, on cut and respaced lines, and in fuzzing.

use super::log::QueryLog;
use super::once::{Cmd, Fate, Held, Tie};
use super::slow_log::FastLogLine;
use crate::model::Op;
use crate::model::Query;
use cmd::LightCmd;
use ops::{kind_of, ops, tie, Figures, Kind, LightOps, LightTxn, LineAttr};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// The light read of one line that holds `"id":51803`; None when the line must take
/// the full path.
/// `sessions`: say its transaction too (`LightOps::txn`: a sink of sessions reads it).
pub(super) fn read(text: &str, sessions: bool) -> Option<LightOps<'_>> {
    if let Some(found) = scan::line(text, sessions) {
        return Some(found);
    }
    read_serde(text, sessions)
}

/// Whether the hand scan of `text` reads it as serde does, when it reads it (the fuzz
/// target `log_lines` asks this of every line).
pub fn hand_scan_agrees(text: &str) -> bool {
    scan::line(text, true).is_none_or(|by_hand| Some(by_hand) == read_serde(text, true))
}

/// `read` through serde: every line the full parse takes, but slower than `scan`.
fn read_serde(text: &str, sessions: bool) -> Option<LightOps<'_>> {
    let line: FastLogLine<LightCmd> = serde_json::from_str(text).ok()?;
    let (Some(51803), Some(attr)) = (line.id, line.attr) else { return None };
    let mut out = if super::reasons::is_own(attr.app_name.as_deref()) {
        LightOps {
            tie: tie(attr.typ.as_deref(), attr.command.as_ref(), attr.cursorid),
            ..LightOps::skipped(super::reasons::OWN_OPERATIONS)
        }
    } else {
        let line = LineAttr { typ: attr.typ.as_deref(), cursorid: attr.cursorid, app: attr.app_name.is_some(), sessions };
        ops(line, attr.ns, attr.command.as_ref(), attr.originating_command.as_ref())
    };
    out.conn = line.ctx;
    out.figures = Figures {
        kind: kind_of(attr.typ.as_deref(), attr.command.as_ref(), attr.originating_command.as_ref()),
        millis: attr.duration_millis,
        docs_examined: attr.docs_examined,
        keys_examined: attr.keys_examined,
        nreturned: attr.nreturned,
        plan_summary: attr.plan_summary,
        t: line.t.map(|t| t.date),
    };
    Some(out)
}

/// How a slow-query line is tied to others (`once`) and its connection, for the full read:
/// the same as the light read's (`LightOps::tie`), from any line serde reads, also those the
/// light read leaves to the full one (a `$binary` whose `subType` bson refuses, as in every
/// `$clusterTime` a replica set's driver sends, fails the typed read of the command).
pub(super) fn tie_of(text: &str) -> (Option<Cow<'_, str>>, Tie) {
    let Ok(line) = serde_json::from_str::<FastLogLine<TieCmd>>(text) else { return (None, Tie::Alone) };
    let Some(attr) = line.attr else { return (line.ctx, Tie::Alone) };
    let cmd = attr.command.map(|c| c.0);
    (line.ctx, tie(attr.typ.as_deref(), cmd.as_ref(), attr.cursorid))
}

/// A command read for its tie only: every value taken as raw text, none checked with bson.
struct TieCmd<'a>(LightCmd<'a>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for TieCmd<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = TieCmd<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a command document")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<TieCmd<'a>, A::Error> {
                let mut c = LightCmd::default();
                while let Some(k) = m.next_key::<&'de str>()? {
                    let v: &'de RawValue = m.next_value()?;
                    if k != cmd::GOSSIP {
                        // A repeat is not refused here: a tie is read from any line serde reads.
                        let _ = c.take(k, v.get());
                    }
                }
                Ok(TieCmd(c))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// Whether a line is one `read` is for: a 4.4+ JSON log line naming id 51803.
pub(super) fn is_candidate(text: &str) -> bool {
    static ID: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("\"id\":51803"));
    text.starts_with("{\"t\":") && ID.find(text.as_bytes()).is_some()
}

/// Whether a sink that `reads_light` needs the line's operations parsed (else the light
/// read serves, `tell_sink` saying what the sink would have heard): they may join another
/// collection, run in a transaction it keeps, or in one only the full read reads; or they
/// are write statements outside any, which wait on their connection for the command line
/// naming their transaction (`Sessions::op`).
#[inline(never)]
pub(super) fn needs_parsed(found: &LightOps, text: &str, part: &mut QueryLog) -> bool {
    static JOINS: std::sync::LazyLock<[memchr::memmem::Finder<'static>; 3]> =
        std::sync::LazyLock::new(|| ["$lookup", "$graphLookup", "$unionWith"].map(memchr::memmem::Finder::new));
    let Some(sink) = part.sink.as_mut() else { return false };
    if JOINS.iter().any(|f| f.find(text.as_bytes()).is_some()) {
        return true;
    }
    match found.txn {
        LightTxn::Unsure => true,
        // A command's statements may be counted from other lines (`once`): parsed, their fates
        // set as they are read. Any other line's operations all count (`txn_line`).
        LightTxn::Txn { lsid, number } => {
            matches!(found.tie, Tie::Command(Cmd::Statements(_))) && found.ops > 0 && sink.wants_txn(lsid, number)
        }
        LightTxn::None => {
            found.ops > 0
                && found.conn.is_some()
                && matches!(found.figures.kind, Kind::One(Op::Update | Op::Delete, _) | Kind::Statements(..))
                && !waits_on_conn(found)
        }
    }
}

/// A WRITE line outside any transaction: its statement waits on its connection for the
/// command line naming the transaction (`OpSink::waits`). Its one operation always counts
/// (`once` ties a WRITE line to the command line after it).
fn waits_on_conn(found: &LightOps) -> bool {
    matches!(found.tie, Tie::Write(_))
        && found.ops == 1
        && found.conn.is_some()
        && found.txn == LightTxn::None
        && matches!(found.figures.kind, Kind::One(Op::Update | Op::Delete, _))
}

/// What the full read would have told the sink of a line read light: its operations that
/// count (`unread`), and the transaction of the connection's preceding statements (`claim`).
#[inline(never)]
pub(super) fn tell_sink(part: &mut QueryLog, found: &LightOps, text: &str, fates: &super::fates::LineFates) {
    let Some(sink) = part.sink.as_mut() else { return };
    let counted = (0..found.ops).filter(|i| fates.fate(*i) == Fate::Count).count();
    match (found.txn, found.conn.as_deref()) {
        (LightTxn::Txn { lsid, number }, _) if found.ops > 0 && sink.wants_txn(lsid, number) => {
            debug_assert_eq!(counted, found.ops, "only a command's statements wait or were counted elsewhere");
            sink.txn_line(lsid, number, text, found.ops)
        }
        (_, Some(conn)) if waits_on_conn(found) => sink.waits(conn, text),
        _ => sink.unread(counted as u64),
    }
    if let (true, Some(conn)) = (found.claims, found.conn.as_deref()) {
        sink.claim(conn, found.txn.id());
    }
}

/// The hand scan of a slow-query line (the fast path; `read_serde` takes what it declines).
mod cmd;
mod ops;
mod scan;

/// `workload`'s operations from a light read: filters parsed alone, no command document.
mod figures;

/// What `add_figures_line` reuses from line to line: the operations of a line, and the
/// namespace of the last one joined.
#[derive(Default)]
pub(in crate::sources::queries) struct Scratch {
    queries: Vec<Query>,
    ns: String,
}

/// A slow-query line read light for a sink of figures (`workload`): its operations counted,
/// skipped or held as the full read does (`once`). False when the light read leaves the
/// line to the full one.
pub(in crate::sources::queries) fn add_figures_line(part: &mut QueryLog, text: &str, reused: &mut Scratch) -> bool {
    let Some(found): Option<LightOps> = read(text, false) else { return false };
    let Scratch { queries: scratch, ns } = reused;
    scratch.clear();
    // `workload` counts a filter by its shape: a plain one is shaped from its text, not
    // parsed into a document (its parse and shaping were a sixth of `workload`'s profile).
    let mut shape = std::mem::take(&mut part.shape);
    let shaped = found.ops == 1 && part.takes_shapes() && found.figures.plain_shape(&mut shape);
    let ns = found.ns.text_in(ns);
    // One operation counted by its shape and figures (the common line): no `Query` is built
    // unless the sample or the merge takes it.
    let alone = found.ops == 1 && part.window == (None, None) && part.takes_shapes();
    let one = if alone { found.figures.one_op(ns).filter(|o| shaped || o.op == Op::Insert) } else { None };
    if one.is_none() && found.ops > 0 {
        found.figures.queries(ns, part.window != (None, None), shaped, scratch);
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
    if let Some(op) = one {
        match fates.fate(0) {
            Fate::Count => part.accept_figures(&op, &shape, || found.figures.one_query(&op)),
            Fate::Twice(why) => part.skip(why),
            // Held for the merge, which gives it to the sink whole.
            Fate::Wait => held.push(Held::Parsed(Box::new(found.figures.one_query(&op)))),
        }
    }
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

#[cfg(test)]
mod tests;
