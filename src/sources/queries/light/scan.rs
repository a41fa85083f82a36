//! The light read by hand, for the common shape of a line: plain JSON whose strings hold
//! no escapes. Whatever it does not take (None) goes to `read_serde`; what it takes it
//! reads as `read_serde` would (held by a test on every real log line and their cuts).

use super::cmd::{bson_reads, hyphenated_uuid, shallow, LightCmd, EXT_KEYS, GOSSIP};
use super::ops::{kind_of, ops, tie, Figures, LightOps, LineAttr};
use std::borrow::Cow;

/// Deeper than this, serde decides (its limit is 128 from the line).
const MAX_DEPTH: u32 = 100;

#[derive(Clone, Copy)]
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
pub(super) fn line<'a>(text: &'a str, sessions: bool) -> Option<LightOps<'a>> {
    let mut p = Scan { b: text.as_bytes(), s: text, i: 0, depth: 0, unsure: false };
    p.ws();
    // `attr` (two commands, about 1 KB) is filled where it lies: returned by value, it was
    // copied three or four times a line (`memcpy` took 10% of `analyze --queries`' profile).
    let (mut id, mut t, mut ctx) = (None, None, None);
    // mongod's own head of the line read by its keys' bytes (a fifth of a line's strings);
    // a line that does not begin so is read member by member from its start.
    let mut head = p;
    let fast = head.head();
    if let Some((i, d, c)) = fast {
        (id, t, ctx) = (Some(i), Some(d), Some(c));
        p = head;
    }
    let (mut a, mut has_attr) = (Attr::default(), false);
    let field = |p: &mut Scan<'a>, key: &'a str| {
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
    };
    match fast {
        Some(_) => p.members(field)?,
        None => p.object(field)?,
    }
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
    fn object(&mut self, f: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
            self.depth -= 1;
            return Some(());
        }
        self.members(f)
    }

    /// An object's members from its first (or next) key on, and its `}`.
    fn members(&mut self, mut f: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
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
        self.depth -= 1;
        Some(())
    }

    /// The head mongod writes on every line, `{"t":{"$date":"…"},"s":"…","c":"…","id":N,
    /// "ctx":"…","msg":"…",` (white space after each comma), read by its keys' bytes: the
    /// line's id, date and connection, the scan left at the next member's key, inside the
    /// line's object. None (the scan moved): the line does not begin so.
    fn head(&mut self) -> Option<(i64, &'a str, Option<&'a str>)> {
        self.literal(b"{\"t\":{\"$date\":")?;
        let date = self.string()?;
        self.literal(b"}")?;
        self.comma()?;
        self.literal(b"\"s\":")?;
        self.string()?;
        self.comma()?;
        self.literal(b"\"c\":")?;
        self.string()?;
        self.comma()?;
        self.literal(b"\"id\":")?;
        let id = self.int()?;
        self.comma()?;
        self.literal(b"\"ctx\":")?;
        let ctx = self.opt_str()?;
        self.comma()?;
        self.literal(b"\"msg\":")?;
        self.string()?;
        self.comma()?;
        self.depth = 1;
        Some((id, date, ctx))
    }

    /// These bytes, here. (Inlined: its callers' bytes are constants, compared in place
    /// rather than by a call to `memcmp`, 4% of `workload`'s time.)
    #[inline(always)]
    fn literal(&mut self, l: &[u8]) -> Option<()> {
        self.b[self.i..].starts_with(l).then(|| self.i += l.len())
    }

    /// A comma and the white space after it.
    fn comma(&mut self) -> Option<()> {
        self.literal(b",")?;
        self.ws();
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
            b'{' if self.plain_lsid() => {}
            b'{' | b'[' => self.nested()?,
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'n' => self.literal(b"null")?,
            _ => self.number()?,
        }
        Some(&self.s[start..self.i])
    }

    /// An object or array (at its bracket), checked and skipped in one loop rather than a
    /// call per value: a bit per open level says object (1) or array (0). Its keys and
    /// numbers make the value unsure as `value` says. (Recursion, a call and a closure per
    /// value, was most of the scan's time on a line's skipped values.)
    fn nested(&mut self) -> Option<()> {
        let top = self.depth;
        let mut objects: u128 = 0;
        loop {
            // At a value, white space skipped.
            match self.peek()? {
                open @ (b'{' | b'[') => {
                    self.i += 1;
                    self.depth += 1;
                    if self.depth > MAX_DEPTH {
                        return None;
                    }
                    let object = open == b'{';
                    objects = objects << 1 | object as u128;
                    self.ws();
                    if self.peek()? != if object { b'}' } else { b']' } {
                        if object {
                            self.key(true)?;
                        }
                        continue;
                    }
                    self.i += 1;
                    self.depth -= 1;
                    objects >>= 1;
                }
                b'"' => {
                    self.string()?;
                }
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                _ => self.number()?,
            }
            // After a value: the next one, or the close of its level.
            loop {
                if self.depth == top {
                    return Some(());
                }
                self.ws();
                let object = objects & 1 == 1;
                match self.peek()? {
                    b',' => {
                        self.i += 1;
                        if object {
                            self.key(false)?;
                        } else {
                            self.ws();
                        }
                        break;
                    }
                    b'}' if object => {}
                    b']' if !object => {}
                    _ => return None,
                }
                self.i += 1;
                self.depth -= 1;
                objects >>= 1;
            }
        }
    }

    /// A value of a text the light read vouched for (valid JSON), skipped without checking
    /// it again: its strings end at their first unescaped quote, its brackets nest. (Checked
    /// again, the filters were a twentieth of `workload`'s time.)
    fn skip_vouched(&mut self) -> Option<()> {
        let mut depth = 0u32;
        loop {
            match *self.b.get(self.i)? {
                b'"' => loop {
                    self.i += 1 + memchr::memchr2(b'"', b'\\', self.b.get(self.i + 1..)?)?;
                    if self.b[self.i] == b'"' {
                        self.i += 1;
                        break;
                    }
                    // The byte it escapes.
                    self.i += 1;
                },
                b'{' | b'[' => {
                    depth += 1;
                    self.i += 1;
                    continue;
                }
                b'}' | b']' if depth > 0 => {
                    depth -= 1;
                    self.i += 1;
                }
                // Where the value ends, at its own level.
                b',' | b'}' | b']' if depth == 0 => return Some(()),
                _ => {
                    self.i += 1;
                    continue;
                }
            }
            if depth == 0 {
                return Some(());
            }
        }
    }

    /// At `{"id":{"$uuid":"<hyphenated UUID>"}}`, every driver's session id (`lsid`) as
    /// mongod logs it: read by its bytes, as `nested` would read it (a plain `$uuid`, not
    /// unsure), the scan moved past it; else false, the scan not moved.
    fn plain_lsid(&mut self) -> bool {
        const OPEN: &[u8] = b"{\"id\":{\"$uuid\":\"";
        let at = self.i + OPEN.len();
        let fits = self.depth + 2 <= MAX_DEPTH && self.b[self.i..].starts_with(OPEN);
        let plain = fits && self.b.get(at + 36..at + 39) == Some(b"\"}}") && self.s.get(at..at + 36).is_some_and(hyphenated_uuid);
        if plain {
            self.i = at + 39;
        }
        plain
    }

    /// An object's key and colon, to its value (white space skipped). An Extended JSON key
    /// makes the value unsure, unless it opens a plain one (`plain_extended`).
    fn key(&mut self, first: bool) -> Option<()> {
        let key = self.string()?;
        self.eat(b':')?;
        self.ws();
        if key.starts_with('$') && EXT_KEYS.contains(&key) && !(first && self.plain_extended(key)) {
            self.unsure = true;
        }
        Some(())
    }

    /// At `key`'s value, the first of an object: whether it is `{"$oid": <hex>}`,
    /// `{"$date": <RFC 3339 text>}`, `{"$uuid": <UUID text>}` or `{"$timestamp": {"t": <u32>,
    /// "i": <u32>}}` alone, which bson reads as an ObjectId, a date, a UUID or a timestamp.
    fn plain_extended(&self, key: &str) -> bool {
        let mut p = Scan { b: self.b, s: self.s, i: self.i, depth: self.depth, unsure: false };
        if key == "$timestamp" {
            // The cluster time of a causally consistent read (`readConcern.afterClusterTime`)
            // and of an oplog read; bson 2.15 (de/serde.rs, `"$timestamp"`) reads it as
            // extjson/models.rs's `TimestampBody`: `t` and `i`, each a u32, no other field.
            return p.plain_timestamp() && {
                p.ws();
                p.peek() == Some(b'}')
            };
        }
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

    /// `{"t":<u32>,"i":<u32>}` as mongod writes it (another spelling: bson decides).
    fn plain_timestamp(&mut self) -> bool {
        // u32's parser refuses a sign, a fraction and an exponent, as serde's u32 does.
        let u32_at = |p: &mut Scan| {
            let Some(n) = crate::sources::json_scan::number_at(p.b, p.i) else { return false };
            let t = &p.s[p.i..n.end];
            p.i = n.end;
            t.parse::<u32>().is_ok()
        };
        self.literal(b"{\"t\":").is_some()
            && u32_at(self)
            && self.literal(b",\"i\":").is_some()
            && u32_at(self)
            && self.literal(b"}").is_some()
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
        self.ws();
        // A line's ids, durations and counts by their digits (18 cannot overflow): no
        // dispatch on the value, no second pass to parse it (3% of `workload`'s time).
        let b = &self.b[self.i..];
        let neg = b.first() == Some(&b'-');
        let digits = &b[neg as usize..];
        let n = digits.iter().take(19).take_while(|c| c.is_ascii_digit()).count();
        let plain = (1..=18).contains(&n) && (n == 1 || digits[0] != b'0') && !matches!(digits.get(n), Some(b'.' | b'e' | b'E'));
        let (neg, v) = if plain {
            let v = digits[..n].iter().fold(0i64, |v, c| v * 10 + i64::from(c - b'0'));
            self.i += neg as usize + n;
            (neg, if neg { -v } else { v })
        } else {
            let v = self.value()?;
            (v.starts_with('-'), v.parse::<i64>().ok()?)
        };
        // serde_json reads `-0` as a float (its sign kept), which no i64 field takes.
        (!(neg && v == 0)).then_some(v)
    }

    /// `Option<i64>`: null or an integer.
    fn opt_int(&mut self) -> Option<Option<i64>> {
        self.ws();
        if self.peek()? == b'n' {
            return self.literal(b"null").map(|_| None);
        }
        self.int().map(Some)
    }

    /// `Option<&str>`: null or a string.
    fn opt_str(&mut self) -> Option<Option<&'a str>> {
        self.ws();
        if self.peek()? == b'n' {
            return self.literal(b"null").map(|_| None);
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
        self.object(|p, key| {
            // A match, not a search of the names: most keys of `attr` are one of them.
            let f = match key {
                "type" => 0,
                "ns" => 1,
                "ninserted" => 2,
                "cursorid" => 3,
                "command" => 4,
                "originatingCommand" => 5,
                "durationMillis" => 6,
                "docsExamined" => 7,
                "keysExamined" => 8,
                "nreturned" => 9,
                "planSummary" => 10,
                "appName" => 11,
                _ => return p.value().map(|_| ()),
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
            return self.literal(b"null");
        }
        self.command(out.insert(LightCmd::default()))
    }

    /// `LightCmd`'s reading, into `c` (a fresh one).
    fn command(&mut self, c: &mut LightCmd<'a>) -> Option<()> {
        self.object(|p, key| {
            // Left out of every command, as the full read leaves it (`slow_log::GOSSIP`).
            if key == GOSSIP {
                return p.value().map(|_| ());
            }
            if !c.admits(key) {
                return None;
            }
            p.unsure = false;
            let v = p.value()?;
            // Bson is asked only about a value the scan could not vouch for.
            if !(if p.unsure { bson_reads(v) } else { shallow(v) }) {
                return None;
            }
            c.take(key, v)
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
        p.skip_vouched()
    })?;
    p.ws();
    (p.i == p.b.len()).then_some(n)
}

#[cfg(test)]
mod int_tests;
