//! mongod 4.4+ JSON log "Slow query" lines (id 51803), including per-statement
//! `WRITE` lines and `getMore` through `originatingCommand`.

use super::command::get_i64;
use super::command::{add_command, statement_delete, statement_update};
use super::log::QueryLog;
use super::once::Tie;
use super::reasons::{NOT_CRUD, NOT_SLOW_QUERY, UNKNOWN};
use crate::model::{Op, OpStats, Query, QueryOrigin};
use bson::Document;

/// The keys bson reads as Extended JSON inside a document.
pub(super) const EXT_KEYS: &[&str] = &[
    "$oid",
    "$symbol",
    "$numberInt",
    "$numberLong",
    "$numberDouble",
    "$binary",
    "$uuid",
    "$code",
    "$scope",
    "$timestamp",
    "$regularExpression",
    "$dbPointer",
    "$date",
    "$maxKey",
    "$minKey",
    "$undefined",
    "$numberDecimal",
    "$numberDecimalBytes",
];

/// `$clusterTime`: the cluster time a replica set's driver gossips with every command, and
/// its signature. No operation is read from it, and bson refuses the signature's `$binary`
/// (`"subType":"0"`): every reader leaves it out of a command (`Command`, the light reads),
/// so such a line is read as any other, not by the slow reads (issue 52).
pub(super) const GOSSIP: &str = "$clusterTime";

/// A command document as the full read keeps it: bson's reading of it (`Document`'s) without
/// its `$clusterTime` (`GOSSIP`).
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Command(pub(super) Document);

impl std::ops::Deref for Command {
    type Target = Document;
    fn deref(&self) -> &Document {
        &self.0
    }
}

impl Command {
    /// A command already read as a document (the slow reads), without its `$clusterTime`.
    fn of(d: &Document) -> Command {
        Command(d.iter().filter(|(k, _)| *k != GOSSIP).map(|(k, v)| (k.clone(), v.clone())).collect())
    }
}

impl<'de> serde::Deserialize<'de> for Command {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, IgnoredAny, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Command;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a command document")
            }
            // bson's own reading of a map (bson 2.15, de/serde.rs, `BsonVisitor::visit_map`):
            // each field's value as `Bson`, inserted in order (a repeated name keeps its first
            // place, its last value); a map with an Extended JSON name is that value, no document.
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Command, A::Error> {
                let mut doc = Document::new();
                while let Some(k) = m.next_key::<String>()? {
                    if k == GOSSIP {
                        m.next_value::<IgnoredAny>()?;
                        continue;
                    }
                    if EXT_KEYS.contains(&k.as_str()) {
                        return Err(A::Error::custom("expected a document, found Extended JSON"));
                    }
                    let v = m.next_value::<bson::Bson>()?;
                    doc.insert(k, v);
                }
                Ok(Command(doc))
            }
        }
        d.deserialize_map(V)
    }
}

/// The fields of a slow-query line we use. Parsed in one pass straight into
/// these types (bson reads Extended JSON itself); everything else is skipped.
/// `C` is how the commands are read: whole (`Document`), or counted (`light::LightCmd`),
/// with every other field the same, so the same lines fail both.
#[derive(serde::Deserialize)]
#[serde(bound(deserialize = "C: serde::Deserialize<'de>"))]
pub(super) struct FastLogLine<'a, C = Command> {
    pub(super) id: Option<i64>,
    #[serde(borrow)]
    pub(super) attr: Option<SlowQuery<'a, C>>,
    #[serde(borrow)]
    pub(super) t: Option<LogTime<'a>>,
    /// The logging connection (`conn12`): ties a write statement's line to its command's.
    #[serde(borrow)]
    pub(super) ctx: Option<std::borrow::Cow<'a, str>>,
}

/// `"t": {"$date": "2024-06-04T11:19:50.398+00:00"}`.
#[derive(serde::Deserialize)]
pub(super) struct LogTime<'a> {
    #[serde(rename = "$date", borrow)]
    pub(super) date: std::borrow::Cow<'a, str>,
}

#[derive(serde::Deserialize)]
#[serde(bound(deserialize = "C: serde::Deserialize<'de>"))]
pub(super) struct SlowQuery<'a, C = Command> {
    #[serde(rename = "type", borrow)]
    pub(super) typ: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) ns: Option<std::borrow::Cow<'a, str>>,
    ninserted: Option<i64>,
    /// The cursor a find or aggregate left open, or a getMore continued (`once`).
    pub(super) cursorid: Option<i64>,
    pub(super) command: Option<C>,
    #[serde(rename = "originatingCommand")]
    pub(super) originating_command: Option<C>,
    #[serde(rename = "durationMillis")]
    pub(super) duration_millis: Option<i64>,
    #[serde(rename = "docsExamined")]
    pub(super) docs_examined: Option<i64>,
    #[serde(rename = "keysExamined")]
    pub(super) keys_examined: Option<i64>,
    pub(super) nreturned: Option<i64>,
    #[serde(rename = "planSummary", borrow)]
    pub(super) plan_summary: Option<std::borrow::Cow<'a, str>>,
    /// The client's name: shardkey's own reads are not the application's workload.
    #[serde(rename = "appName", borrow)]
    pub(super) app_name: Option<std::borrow::Cow<'a, str>>,
    /// Not in the line's `attr`: its `t`, read only when a time is needed (`--since`/`--until`, `workload`).
    #[serde(skip)]
    t: Option<std::borrow::Cow<'a, str>>,
    /// Set by the slow path, which parsed the line as a document.
    #[serde(skip)]
    ts_millis: Option<i64>,
    /// Not in `attr`: the line's `ctx`.
    #[serde(skip)]
    conn: Option<std::borrow::Cow<'a, str>>,
}

impl<'a> SlowQuery<'a> {
    /// Attach the line's time (from `t`, outside `attr`); parsed later, only if needed.
    pub(super) fn at(mut self, t: Option<LogTime<'a>>, ctx: Option<std::borrow::Cow<'a, str>>) -> Self {
        self.t = t.map(|t| t.date);
        self.conn = ctx;
        self
    }

    fn stats(&self) -> OpStats {
        let ts_millis = self
            .ts_millis
            .or_else(|| self.t.as_deref().and_then(|d| bson::DateTime::parse_rfc3339_str(d).ok()).map(|d| d.timestamp_millis()));
        OpStats {
            millis: self.duration_millis,
            docs_examined: self.docs_examined,
            keys_examined: self.keys_examined,
            nreturned: self.nreturned,
            plan_summary: self.plan_summary.as_deref().map(str::to_string),
            ts_millis,
        }
    }
}

/// A log line parsed as a document (the slow path; see `super::line::classify_line`).
pub(super) fn add_log_line(log: &mut QueryLog, d: &Document) {
    add_log_line_tied(log, d, Tie::Alone)
}

/// `add_log_line` of a line tied to others as `tie` says (`once`).
pub(super) fn add_log_line_tied(log: &mut QueryLog, d: &Document, tie: Tie) {
    if get_i64(d, "id") == Some(51802) {
        log.skip(super::reasons::TXN_LINES);
        return;
    }
    if get_i64(d, "id") != Some(51803) {
        log.skip(NOT_SLOW_QUERY);
        return;
    }
    let Ok(attr) = d.get_document("attr") else {
        log.skip(UNKNOWN);
        return;
    };
    let ts_millis = match d.get("t") {
        Some(bson::Bson::DateTime(t)) => Some(t.timestamp_millis()),
        Some(bson::Bson::Document(t)) => {
            t.get_str("$date").ok().and_then(|x| bson::DateTime::parse_rfc3339_str(x).ok()).map(|t| t.timestamp_millis())
        }
        _ => None,
    };
    let sq = SlowQuery {
        typ: attr.get_str("type").ok().map(Into::into),
        ns: attr.get_str("ns").ok().map(Into::into),
        ninserted: get_i64(attr, "ninserted"),
        cursorid: get_i64(attr, "cursorid"),
        command: attr.get_document("command").ok().map(Command::of),
        originating_command: attr.get_document("originatingCommand").ok().map(Command::of),
        duration_millis: get_i64(attr, "durationMillis"),
        docs_examined: get_i64(attr, "docsExamined"),
        keys_examined: get_i64(attr, "keysExamined"),
        nreturned: get_i64(attr, "nreturned"),
        plan_summary: attr.get_str("planSummary").ok().map(Into::into),
        app_name: attr.get_str("appName").ok().map(Into::into),
        t: None,
        ts_millis,
        conn: d.get_str("ctx").ok().map(Into::into),
    };
    add_slow_query(log, sq, tie);
}

/// The tie of a line that names no cursor, no statement and is no WRITE line (most lines):
/// what `light::tie_of` would say, without reading the line again. None: ask it.
pub(super) fn plain_tie(text: &str, sq: &SlowQuery) -> Option<Tie> {
    use memchr::memmem::Finder;
    use std::sync::LazyLock;
    static WORDS: LazyLock<[Finder<'static>; 4]> =
        LazyLock::new(|| [Finder::new("\"cursorid\""), Finder::new("\"updates\""), Finder::new("\"deletes\""), Finder::new("\"q\"")]);
    if WORDS.iter().any(|w| w.find(text.as_bytes()).is_some()) {
        return None;
    }
    Some(match sq.typ.as_deref().unwrap_or("command") {
        "update" | "remove" | "insert" => Tie::Alone,
        _ => Tie::Command(super::once::Cmd::Plain),
    })
}

/// One slow operation; `tie` (how its line is tied to others) decides which of its
/// operations another line already counted (`once`).
pub(super) fn add_slow_query(log: &mut QueryLog, sq: SlowQuery, tie: Tie) {
    let fates = log.line_fates(sq.conn.as_deref(), &tie);
    log.gate = fates.fates.iter().rev().copied().collect();
    add_operations(log, sq);
    log.gate.clear();
    let held = std::mem::take(&mut log.held);
    log.end_line(fates, held);
}

fn add_operations(log: &mut QueryLog, sq: SlowQuery) {
    if super::reasons::is_own(sq.app_name.as_deref()) {
        log.skip(super::reasons::OWN_OPERATIONS);
        return;
    }
    let ns = sq.ns.as_deref().unwrap_or("");
    let Some(cmd) = &sq.command else {
        log.skip(NOT_CRUD);
        return;
    };
    // A secondary's copy of a primary's read: not the application's (`profile::is_mirrored_command`).
    if sq.app_name.is_none() && super::profile::is_mirrored_command(cmd) {
        log.skip(super::profile::MIRRORED_READS);
        return;
    }
    let (found, skipped, held) = (log.found, log.skipped.values().sum::<u64>(), log.held.len());
    let origin = QueryOrigin::SlowQueryLog;
    // Cost figures and times serve `workload` and `--since`/`--until` only: not built otherwise.
    if log.wants_stats() {
        log.pending = Some(sq.stats());
    }
    if log.sink.is_some() {
        log.pending_conn = sq.conn.as_deref().map(str::to_string);
    }
    match sq.typ.as_deref().unwrap_or("command") {
        "update" => statement_update(log, cmd, ns, origin),
        "remove" => statement_delete(log, cmd, ns, origin),
        "insert" => {
            let mut q = Query::new(Op::Insert, ns, Document::new(), origin);
            q.count = sq.ninserted.unwrap_or(1).max(0) as u64;
            log.push(q);
        }
        _ => {
            let cmd_name = cmd.keys().next().map(String::as_str).unwrap_or("");
            if cmd_name.eq_ignore_ascii_case("getMore") {
                match &sq.originating_command {
                    Some(orig) => add_command(log, orig, ns, origin, sq.ninserted),
                    None => log.skip(NOT_CRUD),
                }
            } else {
                add_command(log, cmd, ns, origin, sq.ninserted);
            }
        }
    }
    log.pending = None;
    log.pending_conn = None;
    if log.found == found && log.skipped.values().sum::<u64>() == skipped && log.held.len() == held {
        log.skip(NOT_CRUD);
    }
}
