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

use super::once::{statement_key, Cmd, Tie};
use super::reasons::NOT_CRUD;
use super::slow_log::FastLogLine;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// What a slow-query line yields: its operations (all on one namespace; how many the
/// full read pushes) or why it has none. Nothing is allocated for a line on the common path.
#[derive(Debug, PartialEq)]
pub(super) struct LightOps<'a> {
    pub(crate) ns: Ns<'a>,
    pub(crate) ops: usize,
    pub(crate) skip: Option<&'static str>,
    /// The logging connection (`ctx`).
    pub(crate) conn: Option<Cow<'a, str>>,
    /// How the line is tied to others (`once`): the full read takes it from here too.
    pub(crate) tie: Tie,
    /// What `workload` counts of its operations, unparsed (`figures`).
    pub(crate) figures: Figures<'a>,
}

/// A namespace as the line gives it: whole, or a database and a collection to join.
#[derive(Debug, PartialEq)]
pub(super) enum Ns<'a> {
    Given(Cow<'a, str>),
    Joined(Cow<'a, str>, Cow<'a, str>),
}

impl Ns<'_> {
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

impl fmt::Display for Ns<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Ns::Given(n) => f.write_str(n),
            Ns::Joined(db, coll) => write!(f, "{db}.{coll}"),
        }
    }
}

impl<'a> LightOps<'a> {
    fn skipped(why: &'static str) -> Self {
        LightOps { ns: Ns::Given(Cow::Borrowed("")), ops: 0, skip: Some(why), conn: None, tie: Tie::Alone, figures: Figures::default() }
    }

    fn on(ns: Ns<'a>, ops: usize) -> Self {
        LightOps { ns, ops, skip: None, conn: None, tie: Tie::Alone, figures: Figures::default() }
    }
}

/// The keys bson reads as Extended JSON inside a document.
const EXT_KEYS: &[&str] = &[
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

/// What `add_command` reads of a command document besides the filters it copies.
#[derive(Debug, Default)]
struct LightCmd<'a> {
    first: Option<&'a str>,
    /// The first field's value, when a string.
    first_str: Option<Cow<'a, str>>,
    db: Option<Cow<'a, str>>,
    /// The statement documents of an `updates` / `deletes` array: their keys (`once`).
    updates: Option<Vec<u64>>,
    deletes: Option<Vec<u64>>,
    /// A WRITE line's statement: its filter's text.
    q: Option<&'a str>,
    /// The texts `workload` reads its operations' filters from (`figures`): `filter`,
    /// `query`, `pipeline`, the `updates` / `deletes` arrays; whether a statement has `u`.
    filter: Option<&'a str>,
    query: Option<&'a str>,
    pipeline: Option<&'a str>,
    statements: Option<&'a str>,
    u: bool,
    /// What marks a mirrored read (`profile::is_mirrored_command`).
    secondary_preferred: bool,
    local: bool,
    lsid: bool,
    /// Hashes of the names so far (more names than this holds: full path). A name whose
    /// hash was seen is taken for a repeat: the full path then reads the line, as it would a
    /// true repeat (a small array moves cheaply, and no names are compared).
    seen: [u32; 32],
    names: usize,
}

impl<'a> LightCmd<'a> {
    /// Whether the command may name `key` next: one that is an Extended JSON value, or
    /// names a field twice (the full parse keeps the last value at the first place),
    /// takes the full path.
    /// Admitted: the name's hash, for `take` (hashed once a field).
    fn admits(&self, key: &str) -> Option<u32> {
        if self.names >= self.seen.len() || (key.starts_with('$') && EXT_KEYS.contains(&key)) {
            return None;
        }
        let hash = name_hash(key);
        (!self.seen[..self.names].contains(&hash)).then_some(hash)
    }

    /// One field, `value` its JSON text (one bson reads as the full parse would); `hash`
    /// its name's (`name_hash`).
    fn take(&mut self, key: &'a str, value: &'a str, hash: u32) {
        if self.names == 0 {
            self.first = Some(key);
            self.first_str = text(value);
        }
        match key {
            _ if self.names == 0 && key != "q" => {}
            "$db" => self.db = text(value),
            "updates" => {
                self.updates = statement_keys(value, b'u');
                self.statements = Some(value);
            }
            "deletes" => {
                self.deletes = statement_keys(value, b'd');
                self.statements = Some(value);
            }
            "q" => self.q = Some(value),
            "u" => self.u = true,
            "filter" => self.filter = Some(value),
            "query" => self.query = Some(value),
            "pipeline" => self.pipeline = Some(value),
            "$readPreference" => self.secondary_preferred = string_field(value, "mode").as_deref() == Some("secondaryPreferred"),
            "readConcern" => self.local = string_field(value, "level").as_deref() == Some("local"),
            "lsid" => self.lsid = true,
            _ => {}
        }
        self.seen[self.names] = hash;
        self.names += 1;
    }
}

/// FNV-1a of a command field's name.
fn name_hash(key: &str) -> u32 {
    key.bytes().fold(0x811c_9dc5, |h, b| (h ^ b as u32).wrapping_mul(0x0100_0193))
}

/// The light read of one line that holds `"id":51803`; None when the line must take
/// the full path.
pub(super) fn read(text: &str) -> Option<LightOps<'_>> {
    if let Some(found) = scan::line(text) {
        return Some(found);
    }
    read_serde(text)
}

/// Whether the hand scan of `text` reads it as serde does, when it reads it (the fuzz
/// target `log_lines` asks this of every line).
pub fn hand_scan_agrees(text: &str) -> bool {
    scan::line(text).is_none_or(|by_hand| Some(by_hand) == read_serde(text))
}

/// `read` through serde: every line the full parse takes, but slower than `scan`.
fn read_serde(text: &str) -> Option<LightOps<'_>> {
    let line: FastLogLine<LightCmd> = serde_json::from_str(text).ok()?;
    let (Some(51803), Some(attr)) = (line.id, line.attr) else { return None };
    let mut out = if super::reasons::is_own(attr.app_name.as_deref()) {
        LightOps {
            tie: tie(attr.typ.as_deref(), attr.command.as_ref(), attr.cursorid),
            ..LightOps::skipped(super::reasons::OWN_OPERATIONS)
        }
    } else {
        let line = LineAttr { typ: attr.typ.as_deref(), cursorid: attr.cursorid, app: attr.app_name.is_some() };
        ops(line, attr.ns, attr.command.as_ref(), attr.originating_command.as_ref())
    };
    out.conn = line.ctx;
    out.figures = Figures {
        kind: figures::kind_of(attr.typ.as_deref(), attr.command.as_ref(), attr.originating_command.as_ref()),
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
                    if c.names < c.seen.len() {
                        c.take(k, v.get(), name_hash(k));
                    }
                }
                Ok(TieCmd(c))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// What `ops` reads of a line's `attr` besides its namespace and commands.
struct LineAttr<'s> {
    typ: Option<&'s str>,
    cursorid: Option<i64>,
    /// Whether it names a client (`appName`).
    app: bool,
}

/// How a line is tied to others (`once`), from its type, command and cursor.
fn tie(typ: Option<&str>, command: Option<&LightCmd>, cursorid: Option<i64>) -> Tie {
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
fn ops<'a>(line: LineAttr, ns: Option<Cow<'a, str>>, command: Option<&LightCmd<'a>>, originating: Option<&LightCmd<'a>>) -> LightOps<'a> {
    let tie = tie(line.typ, command, line.cursorid);
    LightOps { tie, ..counted(line, ns, command, originating) }
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
    if !line.app && cmd.secondary_preferred && cmd.local && !cmd.lsid {
        return LightOps::skipped(super::profile::MIRRORED_READS);
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
    // An update or delete with no statement documents yields nothing.
    if out.ops == 0 && out.skip.is_none() {
        return LightOps::skipped(NOT_CRUD);
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
        "update" => match &cmd.updates {
            Some(k) => LightOps::on(ns, k.len()),
            None => LightOps::skipped("update commands logged without their statements (counted from their WRITE lines)"),
        },
        "delete" => match &cmd.deletes {
            Some(k) => LightOps::on(ns, k.len()),
            None => LightOps::skipped("delete commands logged without their statements (counted from their WRITE lines)"),
        },
        n if n.eq_ignore_ascii_case("findAndModify") => LightOps::on(ns, 1),
        _ => LightOps::skipped(NOT_CRUD),
    }
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for LightCmd<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = LightCmd<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a command document")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<LightCmd<'a>, A::Error> {
                let declined = || de::Error::custom("declined");
                let mut c = LightCmd::default();
                // A name with escapes cannot be borrowed: the read fails, the full path takes it.
                while let Some(k) = m.next_key::<&'de str>()? {
                    let Some(hash) = c.admits(k) else {
                        return Err(declined());
                    };
                    let v: &'de RawValue = m.next_value()?;
                    let v = v.get();
                    if !bson_reads(v) {
                        return Err(declined());
                    }
                    c.take(k, v, hash);
                }
                Ok(c)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// Whether bson reads this value as the full parse would read it inside the line: one
/// without `$` keys or long numbers is plain JSON to it; any other is read by bson here.
/// A deeply nested value is left to the full parse (its depth limit counts from the line).
fn bson_reads(v: &str) -> bool {
    if !shallow(v) {
        return false;
    }
    let b = v.as_bytes();
    let dollar_key = memchr::memmem::find(b, b"\"$").is_some();
    let long_number = b.windows(19).any(|w| w.iter().all(u8::is_ascii_digit));
    // A float serde_json cannot hold (1e400) fails the full parse.
    let exponent = b.windows(2).any(|w| (w[0].is_ascii_digit() || w[0] == b'.') && matches!(w[1], b'e' | b'E'));
    !(dollar_key || long_number || exponent) || serde_json::from_str::<bson::Bson>(v).is_ok()
}

/// Few enough brackets (strings included) that no depth limit can matter.
fn shallow(v: &str) -> bool {
    // 64 bytes or fewer cannot hold more (most command values: not scanned again).
    v.len() <= 64 || v.bytes().filter(|&c| c == b'{' || c == b'[').count() <= 64
}

/// A string value (borrowed when it has no escapes).
fn text(t: &str) -> Option<Cow<'_, str>> {
    if !t.starts_with('"') {
        return None;
    }
    match t[1..t.len() - 1].contains('\\') {
        false => Some(Cow::Borrowed(&t[1..t.len() - 1])),
        true => serde_json::from_str::<String>(t).ok().map(Cow::Owned),
    }
}

/// An `updates` / `deletes` array: the keys (`once::statement_key`) of the elements bson
/// reads as documents, the statements the full read pushes.
fn statement_keys(v: &str, kind: u8) -> Option<Vec<u64>> {
    if !v.starts_with('[') {
        return None;
    }
    let items: Vec<&RawValue> = serde_json::from_str(v).ok()?;
    let document = |x: &&&RawValue| {
        let t = x.get();
        t.starts_with('{')
            && (memchr::memmem::find(t.as_bytes(), b"\"$").is_none()
                || matches!(serde_json::from_str::<bson::Bson>(t), Ok(bson::Bson::Document(_))))
    };
    #[derive(serde::Deserialize)]
    struct Stmt<'a> {
        #[serde(borrow)]
        q: Option<&'a RawValue>,
    }
    let q = |t: &str| serde_json::from_str::<Stmt>(t).ok().and_then(|s| s.q).map_or(0, |r| statement_key(kind, r.get()));
    Some(items.iter().filter(document).map(|x| q(x.get())).collect())
}

/// `$readPreference`'s `mode` or `readConcern`'s `level` (`{"mode": "secondaryPreferred"}`),
/// as bson would read it (a field of another type: none), without a map.
fn string_field<'a>(v: &'a str, field: &str) -> Option<Cow<'a, str>> {
    #[derive(serde::Deserialize)]
    struct Fields<'a> {
        #[serde(borrow)]
        mode: Option<&'a RawValue>,
        #[serde(borrow)]
        level: Option<&'a RawValue>,
    }
    if !v.starts_with('{') {
        return None;
    }
    let f: Fields = serde_json::from_str(v).ok()?;
    let x = if field == "mode" { f.mode } else { f.level };
    x.and_then(|x| text(x.get()))
}

/// Whether a line is one `read` is for: a 4.4+ JSON log line naming id 51803.
pub(super) fn is_candidate(text: &str) -> bool {
    static ID: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("\"id\":51803"));
    text.starts_with("{\"t\":") && ID.find(text.as_bytes()).is_some()
}

/// The hand scan of a slow-query line (the fast path; `read_serde` takes what it declines).
mod scan;

/// `workload`'s operations from a light read: filters parsed alone, no command document.
mod figures;
pub(super) use figures::add_line as add_figures_line;
use figures::Figures;

#[cfg(test)]
mod tests;
