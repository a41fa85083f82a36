//! The light read by hand, for the common shape of a line: plain JSON whose strings hold
//! no escapes. Whatever it does not take (None) goes to `read_serde`; what it takes it
//! reads as `read_serde` would (held by a test on every real log line and their cuts).

use super::cmd::{bson_reads, hyphenated_uuid, shallow, LightCmd, EXT_KEYS};
use super::ops::{kind_of, ops, tie, Figures, LightOps, LineAttr};
use std::borrow::Cow;

/// Deeper than this, serde decides (its limit is 128 from the line).
const MAX_DEPTH: u32 = 100;

struct Scan<'a> {
    b: &'a [u8],
    s: &'a str,
    i: usize,
    depth: u32,
    /// A value read since this was cleared holds what bson might refuse or read as
    /// Extended JSON: `bson_reads` decides for it.
    unsure: bool,
}

/// `sessions`: say the line's transaction (`LineAttr::sessions`).
pub(super) fn line(text: &str, sessions: bool) -> Option<LightOps<'_>> {
    let mut p = Scan { b: text.as_bytes(), s: text, i: 0, depth: 0, unsure: false };
    p.ws();
    // `attr` (two commands, about 1 KB) is filled where it lies: returned by value, it was
    // copied three or four times a line (`memcpy` took 10% of `analyze --queries`' profile).
    let (mut id, mut t, mut ctx) = (None, None, None);
    let (mut a, mut has_attr) = (Attr::default(), false);
    p.object(|p, key| {
        match key {
            "id" if id.is_none() => id = Some(p.int()?),
            "attr" if !has_attr => {
                p.attr(&mut a)?;
                has_attr = true;
            }
            "t" if t.is_none() => t = Some(p.log_time()?),
            // serde's `Option<Cow<str>>`: null or a string.
            "ctx" if ctx.is_none() => ctx = Some(p.opt_str()?),
            // The same field twice: serde fails.
            "id" | "attr" | "t" | "ctx" => return None,
            _ => {
                p.value()?;
            }
        }
        Some(())
    })?;
    p.ws();
    if p.i != p.b.len() || id != Some(51803) || !has_attr {
        return None;
    }
    let mut out = if super::super::reasons::is_own(a.app) {
        LightOps { tie: tie(a.typ, a.command.as_ref(), a.cursorid), ..LightOps::skipped(super::super::reasons::OWN_OPERATIONS) }
    } else {
        let line = LineAttr { typ: a.typ, cursorid: a.cursorid, app: a.app.is_some(), sessions };
        ops(line, a.ns.map(Cow::Borrowed), a.command.as_ref(), a.originating.as_ref())
    };
    out.conn = ctx.flatten().map(Cow::Borrowed);
    out.figures = Figures {
        kind: kind_of(a.typ, a.command.as_ref(), a.originating.as_ref()),
        millis: a.millis,
        docs_examined: a.docs_examined,
        keys_examined: a.keys_examined,
        nreturned: a.nreturned,
        plan_summary: a.plan.map(Cow::Borrowed),
        t: t.map(Cow::Borrowed),
    };
    Some(out)
}

#[derive(Default)]
struct Attr<'a> {
    typ: Option<&'a str>,
    ns: Option<&'a str>,
    app: Option<&'a str>,
    cursorid: Option<i64>,
    millis: Option<i64>,
    docs_examined: Option<i64>,
    keys_examined: Option<i64>,
    nreturned: Option<i64>,
    plan: Option<&'a str>,
    command: Option<LightCmd<'a>>,
    originating: Option<LightCmd<'a>>,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline]
    fn ws(&mut self) {
        self.i = crate::sources::json_scan::skip_ws(self.b, self.i);
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// A string without escapes or control characters (anything else: serde decides).
    fn string(&mut self) -> Option<&'a str> {
        self.ws();
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.i + 1;
        let end = start + crate::sources::json_scan::special_at(&self.b[start..])?;
        if self.b[end] != b'"' {
            return None;
        }
        self.i = end + 1;
        // The text is UTF-8 and the cut is at ASCII bytes.
        Some(&self.s[start..end])
    }

    /// `{ "key": value, ... }`: `f` reads each value.
    fn object(&mut self, mut f: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
        } else {
            loop {
                let key = self.string()?;
                self.eat(b':')?;
                self.ws();
                f(self, key)?;
                self.ws();
                match self.peek()? {
                    b',' => self.i += 1,
                    b'}' => {
                        self.i += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(())
    }

    /// Any JSON value, checked and skipped; its text.
    fn value(&mut self) -> Option<&'a str> {
        self.ws();
        let start = self.i;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' => {
                let mut first = true;
                self.object(|p, key| {
                    if key.starts_with('$') && EXT_KEYS.contains(&key) && !(first && p.plain_extended(key)) {
                        p.unsure = true;
                    }
                    first = false;
                    p.value().map(|_| ())
                })?
            }
            b'[' => {
                self.i += 1;
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return None;
                }
                self.ws();
                if self.peek()? == b']' {
                    self.i += 1;
                } else {
                    loop {
                        self.value()?;
                        self.ws();
                        match self.peek()? {
                            b',' => self.i += 1,
                            b']' => {
                                self.i += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                self.depth -= 1;
            }
            b't' => self.word(b"true")?,
            b'f' => self.word(b"false")?,
            b'n' => self.word(b"null")?,
            _ => self.number()?,
        }
        Some(&self.s[start..self.i])
    }

    fn word(&mut self, w: &[u8]) -> Option<()> {
        self.b[self.i..].starts_with(w).then(|| self.i += w.len())
    }

    /// At `key`'s value, the first of an object: whether it is `{"$oid": <hex>}`,
    /// `{"$date": <RFC 3339 text>}` or `{"$uuid": <UUID text>}` alone, which bson reads as an
    /// ObjectId, a date or a UUID.
    fn plain_extended(&self, key: &str) -> bool {
        let mut p = Scan { b: self.b, s: self.s, i: self.i, depth: self.depth, unsure: false };
        let Some(v) = p.string() else { return false };
        p.ws();
        if p.peek() != Some(b'}') {
            return false;
        }
        match key {
            "$oid" => bson::oid::ObjectId::parse_str(v).is_ok(),
            "$date" => bson::DateTime::parse_rfc3339_str(v).is_ok(),
            // Every logged command's `lsid`: bson 2.15 (de/serde.rs, `"$uuid"`) reads the string
            // with `uuid::Uuid::parse_str`, as `bson::Uuid::parse_str` does. Vouched here, the
            // lsid is no longer sent to bson on every line (6% of `workload`'s profile).
            // The hyphenated form drivers send is checked by hand (uuid's parser was 2% of the
            // profile); uuid 1.x parses every such text (parser.rs, `try_parse`).
            "$uuid" => hyphenated_uuid(v) || bson::Uuid::parse_str(v).is_ok(),
            _ => false,
        }
    }

    /// JSON's number grammar. A number bson could refuse (beyond int64, or a float
    /// serde_json cannot hold) makes the value unsure.
    fn number(&mut self) -> Option<()> {
        let n = crate::sources::json_scan::number_at(self.b, self.i)?;
        let t = &self.s[self.i..n.end];
        self.i = n.end;
        let integer = !n.fraction && !n.exponent;
        if t.len() >= 19 || (!integer && !t.parse::<f64>().is_ok_and(f64::is_finite)) {
            self.unsure = self.unsure || !integer || t.parse::<i64>().is_err();
        }
        Some(())
    }

    /// An integer serde reads as an i64 (no fraction or exponent).
    fn int(&mut self) -> Option<i64> {
        let v = self.value()?;
        v.parse::<i64>().ok()
    }

    /// `Option<i64>`: null or an integer.
    fn opt_int(&mut self) -> Option<Option<i64>> {
        self.ws();
        if self.peek()? == b'n' {
            return self.word(b"null").map(|_| None);
        }
        self.int().map(Some)
    }

    /// `Option<&str>`: null or a string.
    fn opt_str(&mut self) -> Option<Option<&'a str>> {
        self.ws();
        if self.peek()? == b'n' {
            return self.word(b"null").map(|_| None);
        }
        self.string().map(Some)
    }

    /// `"t": {"$date": "..."}` (serde's `LogTime`: other fields ignored, `$date` once): the date.
    fn log_time(&mut self) -> Option<&'a str> {
        let mut date = None;
        self.object(|p, key| {
            if key == "$date" {
                if date.is_some() {
                    return None;
                }
                date = Some(p.string()?);
                Some(())
            } else {
                p.value().map(|_| ())
            }
        })?;
        date
    }

    /// `attr`, with `SlowQuery`'s fields and types (each at most once).
    fn attr(&mut self, a: &mut Attr<'a>) -> Option<()> {
        let mut seen: u16 = 0;
        const FIELDS: [&str; 12] = [
            "type",
            "ns",
            "ninserted",
            "cursorid",
            "command",
            "originatingCommand",
            "durationMillis",
            "docsExamined",
            "keysExamined",
            "nreturned",
            "planSummary",
            "appName",
        ];
        self.object(|p, key| {
            let Some(f) = FIELDS.iter().position(|&x| x == key) else {
                return p.value().map(|_| ());
            };
            if seen & (1 << f) != 0 {
                return None;
            }
            seen |= 1 << f;
            match key {
                "type" => a.typ = p.opt_str()?,
                "ns" => a.ns = p.opt_str()?,
                "appName" => a.app = p.opt_str()?,
                "planSummary" => a.plan = p.opt_str()?,
                "durationMillis" => a.millis = p.opt_int()?,
                "docsExamined" => a.docs_examined = p.opt_int()?,
                "keysExamined" => a.keys_examined = p.opt_int()?,
                "nreturned" => a.nreturned = p.opt_int()?,
                "command" => p.opt_command(&mut a.command)?,
                "originatingCommand" => p.opt_command(&mut a.originating)?,
                "cursorid" => a.cursorid = p.opt_int()?,
                _ => {
                    p.opt_int()?;
                }
            }
            Some(())
        })
    }

    /// `Option<LightCmd>`, read into `out` (null: None), not moved.
    fn opt_command(&mut self, out: &mut Option<LightCmd<'a>>) -> Option<()> {
        self.ws();
        if self.peek()? == b'n' {
            *out = None;
            return self.word(b"null");
        }
        self.command(out.insert(LightCmd::default()))
    }

    /// `LightCmd`'s reading, into `c` (a fresh one).
    fn command(&mut self, c: &mut LightCmd<'a>) -> Option<()> {
        self.object(|p, key| {
            let hash = c.admits(key)?;
            p.unsure = false;
            let v = p.value()?;
            // Bson is asked only about a value the scan could not vouch for.
            if !(if p.unsure { bson_reads(v) } else { shallow(v) }) {
                return None;
            }
            c.take(key, v, hash);
            Some(())
        })
    }
}

/// The field names of a filter's text (a value the light read vouched for) when its shape
/// is theirs alone (`shapes::plain_shape_into`): a document of at most 16 distinct names,
/// none starting with `$`, each compared by value, as bson reads it: not a document whose
/// first name starts with `$` (an operator, or Extended JSON that bson may read as a regex).
/// None: the filter is parsed into a document and shaped from it.
pub(in crate::sources::queries) fn plain_filter_names<'a>(text: &'a str, names: &mut [&'a str; 16]) -> Option<usize> {
    let mut p = Scan { b: text.as_bytes(), s: text, i: 0, depth: 0, unsure: false };
    let mut n = 0;
    p.object(|p, key| {
        if key.starts_with('$') || n == names.len() || names[..n].contains(&key) {
            return None;
        }
        names[n] = key;
        n += 1;
        p.ws();
        if p.peek()? == b'{' {
            let mut first = Scan { b: p.b, s: p.s, i: p.i + 1, depth: 0, unsure: false };
            first.ws();
            if first.peek()? != b'}' && first.string()?.starts_with('$') {
                return None;
            }
        }
        p.value().map(|_| ())
    })?;
    p.ws();
    (p.i == p.b.len()).then_some(n)
}
