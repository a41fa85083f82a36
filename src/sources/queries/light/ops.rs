//! What the light read says of a slow-query line: its operations (how many, on which
//! namespace, or why none), how it is tied to other lines, and its figures' texts, decided
//! from its type and commands as `slow_log::add_slow_query` and `command::add_command` do.

use super::super::once::{statement_key, Cmd, Tie};
use super::super::reasons::NOT_CRUD;
use super::cmd::LightCmd;
use crate::model::Op;
use std::borrow::Cow;

/// What a slow-query line yields: its operations (all on one namespace; how many the
/// full read pushes) or why it has none. Nothing is allocated for a line on the common path.
#[derive(Debug, PartialEq)]
pub(in crate::sources::queries) struct LightOps<'a> {
    pub(crate) ns: Ns<'a>,
    pub(crate) ops: usize,
    pub(crate) skip: Option<&'static str>,
    /// The logging connection (`ctx`).
    pub(crate) conn: Option<Cow<'a, str>>,
    /// How the line is tied to others (`once`): the full read takes it from here too.
    pub(crate) tie: Tie,
    /// What `workload` counts of its operations, unparsed (`figures`).
    pub(crate) figures: Figures<'a>,
    /// The multi-document transaction its operations ran in, as `command::txn_of` reads it.
    pub(crate) txn: LightTxn<'a>,
    /// An `update` or `delete` command: the full read tells the sink which transaction the
    /// connection's preceding statements ran in (`QueryLog::claim_statements`).
    pub(crate) claims: bool,
}

/// A line's transaction as `command::txn_of` reads it, from the command's texts.
#[derive(Debug, PartialEq, Clone, Copy, Default)]
pub(crate) enum LightTxn<'a> {
    /// In none (`autocommit: false`, `lsid` or `txnNumber` missing), or no operation takes it.
    #[default]
    None,
    /// `lsid` as the full read writes it (lowercase 8-4-4-4-12) and `txnNumber`.
    Txn { lsid: &'a str, number: i64 },
    /// In a form only the full read reads (a getMore's, an `lsid` with a `uid`, a
    /// `$numberLong`, a statement naming its own session).
    Unsure,
}

impl LightTxn<'_> {
    pub(crate) fn id(&self) -> Option<crate::model::query::TxnId> {
        match self {
            LightTxn::Txn { lsid, number } => Some(crate::model::query::TxnId { lsid: lsid.to_string(), txn_number: *number }),
            _ => None,
        }
    }
}

/// `command::txn_of` of the command a line's operations are read from, by its texts. The
/// full read takes a statement's session from it unless the statement names its own
/// (`command::with_outer`), and an `insert` line's operation from none.
fn txn<'a>(typ: Option<&str>, command: Option<&LightCmd<'a>>) -> LightTxn<'a> {
    let Some(c) = command else { return LightTxn::None };
    if typ == Some("insert") {
        return LightTxn::None;
    }
    if c.first.is_some_and(|n| n.eq_ignore_ascii_case("getMore")) {
        return LightTxn::Unsure;
    }
    // `get_bool("autocommit") != Some(false)`: a text other than `false` is no transaction.
    if c.autocommit != Some("false") {
        return LightTxn::None;
    }
    let (Some(lsid), Some(number)) = (c.lsid, c.txn_number) else { return LightTxn::None };
    let own = |w: &str| c.statements.is_some_and(|t| t.contains(w));
    if own("\"lsid\"") || own("\"txnNumber\"") || own("\"autocommit\"") {
        return LightTxn::Unsure;
    }
    // Every driver's `{"id":{"$uuid":...}}`: bson reads it as a UUID, which `uuid_text` writes
    // back in lowercase.
    let uuid = lsid.strip_prefix("{\"id\":{\"$uuid\":\"").and_then(|r| r.strip_suffix("\"}}"));
    match (uuid, number.parse::<i64>()) {
        (Some(u), Ok(n)) if super::cmd::hyphenated_uuid(u) && !u.bytes().any(|b| b.is_ascii_uppercase()) => {
            LightTxn::Txn { lsid: u, number: n }
        }
        _ => LightTxn::Unsure,
    }
}

/// A namespace as the line gives it: whole, or a database and a collection to join.
#[derive(Debug, PartialEq)]
pub(in crate::sources::queries) enum Ns<'a> {
    Given(Cow<'a, str>),
    Joined(Cow<'a, str>, Cow<'a, str>),
}

impl Ns<'_> {
    /// The namespace's text: borrowed when the line names it whole (no formatting machinery:
    /// `to_string` on every line was 4% of `plan`'s reading).
    pub(crate) fn text(&self) -> Cow<'_, str> {
        match self {
            Ns::Given(n) => Cow::Borrowed(n),
            Ns::Joined(db, coll) => Cow::Owned([&**db, ".", &**coll].concat()),
        }
    }

    /// The namespace's text, joined in `buf` (kept from line to line: a log's command lines
    /// mostly join the same one again, and a join a line was 2.6% of `workload`'s CPU).
    pub(crate) fn text_in<'s>(&'s self, buf: &'s mut String) -> &'s str {
        match self {
            Ns::Given(n) => n,
            Ns::Joined(db, coll) => {
                if !self.is(buf) {
                    buf.clear();
                    buf.extend([&**db, ".", &**coll]);
                }
                buf
            }
        }
    }

    /// The namespace shared with the lines before it that named it, found among `recent`
    /// (the last few: a log's lines take turns among a few namespaces, and one text a line
    /// was 2% of `analyze --queries`' time).
    pub(crate) fn shared(&self, recent: &mut Vec<std::sync::Arc<str>>) -> std::sync::Arc<str> {
        const KEPT: usize = 8;
        if let Some(n) = recent.iter().find(|n| self.is(n)) {
            return n.clone();
        }
        if recent.len() == KEPT {
            recent.remove(0);
        }
        let n: std::sync::Arc<str> = self.text().into();
        recent.push(n.clone());
        n
    }

    /// Whether this is `ns`, without joining.
    pub(crate) fn is(&self, ns: &str) -> bool {
        match self {
            Ns::Given(n) => n == ns,
            Ns::Joined(db, coll) => {
                ns.len() == db.len() + 1 + coll.len() && ns.starts_with(&**db) && ns.ends_with(&**coll) && ns.as_bytes()[db.len()] == b'.'
            }
        }
    }
}

impl<'a> LightOps<'a> {
    pub(super) fn skipped(why: &'static str) -> Self {
        LightOps {
            ns: Ns::Given(Cow::Borrowed("")),
            ops: 0,
            skip: Some(why),
            conn: None,
            tie: Tie::Alone,
            figures: Figures::default(),
            txn: LightTxn::None,
            claims: false,
        }
    }

    pub(super) fn on(ns: Ns<'a>, ops: usize) -> Self {
        LightOps { ns, ops, skip: None, conn: None, tie: Tie::Alone, figures: Figures::default(), txn: LightTxn::None, claims: false }
    }
}

/// What `ops` reads of a line's `attr` besides its namespace and commands.
pub(super) struct LineAttr<'s> {
    pub(super) typ: Option<&'s str>,
    pub(super) cursorid: Option<i64>,
    /// Whether it names a client (`appName`).
    pub(super) app: bool,
    /// Whether the reader is told the transaction (`LightOps::txn`; a sink of sessions).
    pub(super) sessions: bool,
}

/// How a line is tied to others (`once`), from its type, command and cursor.
pub(super) fn tie(typ: Option<&str>, command: Option<&LightCmd>, cursorid: Option<i64>) -> Tie {
    let cursor = cursorid.filter(|c| *c != 0);
    match typ.unwrap_or("command") {
        "update" => command.and_then(|c| c.q).map_or(Tie::Alone, |q| Tie::Write(statement_key(b'u', q))),
        "remove" => command.and_then(|c| c.q).map_or(Tie::Alone, |q| Tie::Write(statement_key(b'd', q))),
        "insert" => Tie::Alone,
        _ => Tie::Command(match (command.and_then(|c| c.first), cursor) {
            (Some(n), Some(c)) if n.eq_ignore_ascii_case("getMore") => Cmd::GetMore(c),
            (Some("find" | "aggregate"), Some(c)) => Cmd::Opens(c),
            (Some("update"), _) => command.and_then(|c| c.updates.clone()).map_or(Cmd::Plain, Cmd::Statements),
            (Some("delete"), _) => command.and_then(|c| c.deletes.clone()).map_or(Cmd::Plain, Cmd::Statements),
            _ => Cmd::Plain,
        }),
    }
}

/// What the full read does with a slow query's type, namespace and commands, counted.
pub(super) fn ops<'a>(
    line: LineAttr,
    ns: Option<Cow<'a, str>>,
    command: Option<&LightCmd<'a>>,
    originating: Option<&LightCmd<'a>>,
) -> LightOps<'a> {
    let tie = tie(line.typ, command, line.cursorid);
    let txn = if line.sessions { txn(line.typ, command) } else { LightTxn::None };
    LightOps { tie, txn, ..counted(line, ns, command, originating) }
}

fn counted<'a>(
    line: LineAttr,
    ns: Option<Cow<'a, str>>,
    command: Option<&LightCmd<'a>>,
    originating: Option<&LightCmd<'a>>,
) -> LightOps<'a> {
    let ns = ns.unwrap_or_default();
    let Some(cmd) = command else {
        return LightOps::skipped(NOT_CRUD);
    };
    if !line.app && cmd.secondary_preferred && cmd.local && cmd.max_time && cmd.lsid.is_none() {
        return LightOps::skipped(super::super::profile::MIRRORED_READS);
    }
    let out = match line.typ.unwrap_or("command") {
        "update" | "remove" | "insert" => LightOps::on(Ns::Given(ns), 1),
        _ => {
            if cmd.first.is_some_and(|n| n.eq_ignore_ascii_case("getMore")) {
                match originating {
                    Some(orig) => self::command(orig, ns),
                    None => LightOps::skipped(NOT_CRUD),
                }
            } else {
                self::command(cmd, ns)
            }
        }
    };
    // An update or delete with no statement documents yields nothing (its claim stands).
    if out.ops == 0 && out.skip.is_none() {
        return LightOps { claims: out.claims, ..LightOps::skipped(NOT_CRUD) };
    }
    out
}

/// `command::add_command`, counting.
fn command<'a>(cmd: &LightCmd<'a>, ns_hint: Cow<'a, str>) -> LightOps<'a> {
    let Some(name) = cmd.first else {
        return LightOps::skipped(NOT_CRUD);
    };
    if name == "q" {
        return LightOps::on(Ns::Given(ns_hint), 1);
    }
    let db = cmd.db.clone().or_else(|| match ns_hint {
        Cow::Borrowed(n) => n.split_once('.').map(|(db, _)| Cow::Borrowed(db)),
        Cow::Owned(n) => n.split_once('.').map(|(db, _)| Cow::Owned(db.to_string())),
    });
    let (Some(coll), Some(db)) = (&cmd.first_str, db) else {
        return LightOps::skipped(NOT_CRUD);
    };
    let ns = Ns::Joined(db, coll.clone());
    match name {
        "find" | "count" | "distinct" | "aggregate" | "insert" => LightOps::on(ns, 1),
        "update" => LightOps {
            claims: true,
            ..match &cmd.updates {
                Some(k) => LightOps::on(ns, k.len()),
                None => LightOps::skipped("update commands logged without their statements (counted from their WRITE lines)"),
            }
        },
        "delete" => LightOps {
            claims: true,
            ..match &cmd.deletes {
                Some(k) => LightOps::on(ns, k.len()),
                None => LightOps::skipped("delete commands logged without their statements (counted from their WRITE lines)"),
            }
        },
        n if n.eq_ignore_ascii_case("findAndModify") => LightOps::on(ns, 1),
        _ => LightOps::skipped(NOT_CRUD),
    }
}

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
pub(in crate::sources::queries) fn kind_of<'a>(
    typ: Option<&str>,
    command: Option<&LightCmd<'a>>,
    originating: Option<&LightCmd<'a>>,
) -> Kind<'a> {
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
