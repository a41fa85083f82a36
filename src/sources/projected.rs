//! Extended JSON lines read for a projection: a document's BSON size and the few
//! top-level fields the sample reads, without building the rest of it.
//!
//! Building every document whole (serde_json → `bson::Document`) cost more than the
//! analysis itself (issue 14). This scanner walks a line once, sums the BSON size of
//! every value it skips, and builds only the kept fields. It accepts only what the full
//! parse (`records::parse_json_document`) accepts, with the same values: anything
//! unusual (an escaped key, a duplicate key, a `$`-object other than `$oid`, `$date`,
//! `$numberLong`, `$numberInt`, `$numberDecimal`, deep nesting) makes `read` return
//! `None`, and the caller parses the line whole; long integers, exponents, escaped
//! strings and kept floats are read by serde_json on their own bytes. The differential
//! tests (`projected/tests.rs`) and the `projected` fuzz target (`scripts/fuzz.sh`) hold the two paths equal.

use crate::bsonx::bson_size;
use bson::oid::ObjectId;
use bson::{Bson, DateTime, Decimal128, Document};

/// The top-level fields to build; the rest are only measured.
#[derive(Debug, Default)]
pub struct Projection {
    fields: Vec<String>,
    /// Bit `n` set when a field's name is `n` bytes long (63: longer): most names a line
    /// holds are refused by one test, not compared with every field.
    lengths: u64,
    /// The size of the last raw document written: the next one's buffer is made that large
    /// at once (each `append` past the room reallocated it: 7% of an export read).
    last_raw: std::sync::atomic::AtomicUsize,
}

impl Clone for Projection {
    fn clone(&self) -> Self {
        Projection::new(self.fields.clone())
    }
}

impl Projection {
    pub fn new(mut fields: Vec<String>) -> Self {
        fields.sort();
        fields.dedup();
        let lengths = fields.iter().fold(0, |m, f| m | 1u64 << f.len().min(63));
        Projection { fields, lengths, last_raw: Default::default() }
    }

    fn keeps(&self, key: &[u8]) -> bool {
        self.lengths & 1u64 << key.len().min(63) != 0 && self.fields.iter().any(|f| f.as_bytes() == key)
    }

    /// An empty raw document with room for what the last one held (at most 16 KiB).
    fn raw_buffer(&self) -> bson::RawDocumentBuf {
        let last = self.last_raw.load(std::sync::atomic::Ordering::Relaxed);
        let mut data = Vec::with_capacity((last + last / 4 + 16).min(16 << 10));
        data.extend_from_slice(&[5, 0, 0, 0, 0]);
        bson::RawDocumentBuf::from_bytes(data).expect("the empty document")
    }

    /// `doc` reduced to the projection's fields (the full parse's result, projected the same way).
    pub(crate) fn apply(&self, doc: Document) -> Document {
        doc.into_iter().filter(|(k, _)| self.keeps(k.as_bytes())).collect()
    }
}

/// The projected document and the whole document's BSON size, or `None` when the line
/// needs the full parse (which then also reports any error).
pub fn read(line: &str, projection: &Projection) -> Option<(Document, usize)> {
    let mut s = Scan::new(line);
    s.ws();
    if s.peek()? != b'{' {
        return None;
    }
    let (size, doc) = s.top(projection)?;
    s.ws();
    (s.i == line.len()).then_some((doc, size))
}

/// `read` as raw BSON (the form the sample reads without decoding: see `model::DocBody`).
pub fn read_raw(line: &str, projection: &Projection) -> Option<(bson::RawDocumentBuf, usize)> {
    let mut s = Scan::new(line);
    s.ws();
    if s.peek()? != b'{' {
        return None;
    }
    let mut raw = projection.raw_buffer();
    let mut written = true;
    let m = s.members(
        |key| projection.keeps(key),
        |k, v| match bson::RawBson::try_from(v) {
            // `append` refuses a NUL in a name (JSON only has one escaped, which the scan declines).
            Ok(v) if !k.contains('\0') => raw.append(k, v),
            _ => written = false,
        },
    )?;
    s.ws();
    projection.last_raw.store(raw.as_bytes().len(), std::sync::atomic::Ordering::Relaxed);
    (written && !m.dollar && s.i == line.len()).then_some((raw, m.size))
}

/// A mongodump document (raw BSON) reduced to the projection's fields without decoding the
/// others; `None` when a kept field repeats (the full decode keeps the last, a raw read the
/// first: such a document takes the full decode).
pub(crate) fn project_bson(doc: &bson::RawDocument, projection: &Projection) -> Option<Result<bson::RawDocumentBuf, bson::raw::Error>> {
    let mut raw = projection.raw_buffer();
    let mut kept: Vec<&str> = Vec::new();
    for element in doc {
        let (k, v) = match element {
            Ok(e) => e,
            Err(e) => return Some(Err(e)),
        };
        if projection.keeps(k.as_bytes()) {
            if kept.contains(&k) {
                return None;
            }
            kept.push(k);
            raw.append_ref(k, v);
        }
    }
    projection.last_raw.store(raw.as_bytes().len(), std::sync::atomic::Ordering::Relaxed);
    Some(Ok(raw))
}

/// The full parse, projected: what `read` must equal (and the path for every line it declines).
pub fn full(text: &str, projection: Option<&Projection>) -> Result<(Document, usize), String> {
    let d = crate::sources::records::parse_json_document(text)?;
    let n = bson_size(&d).unwrap_or(0);
    Ok((project(projection, d), n))
}

/// `doc` reduced to the projection's fields, or whole without one.
pub(crate) fn project(projection: Option<&Projection>, doc: Document) -> Document {
    match projection {
        Some(p) => p.apply(doc),
        None => doc,
    }
}

/// Deeper than this, the full parse decides (serde_json stops at 128).
const MAX_DEPTH: u32 = 100;

/// How a value was written, for the `$`-objects whose meaning depends on it.
#[derive(Clone, Copy)]
enum Form<'a> {
    /// A string without escapes.
    Str(&'a str),
    /// A plain integer literal.
    Int(i64),
    /// `{"$numberLong": "…"}`.
    NumberLong(i64),
    Other,
}

/// A value's BSON size (payload only: no type byte, no key), the value when asked to
/// build it, and its form.
type Value<'a> = (usize, Option<Bson>, Form<'a>);

struct Scan<'a> {
    /// The line: text for the strings kept (checked UTF-8 once, by the caller's type),
    /// bytes (`b`) for the walk.
    t: &'a str,
    i: usize,
    depth: u32,
    /// The keys of the objects being read, innermost last (duplicate detection).
    keys: Vec<&'a [u8]>,
}

impl<'a> Scan<'a> {
    fn new(line: &'a str) -> Self {
        Scan { t: line, i: 0, depth: 0, keys: Vec::new() }
    }

    #[inline]
    fn b(&self) -> &'a [u8] {
        self.t.as_bytes()
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b().get(self.i).copied()
    }

    #[inline]
    fn ws(&mut self) {
        self.i = super::json_scan::skip_ws(self.b(), self.i);
    }

    #[inline]
    fn expect(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// A string at `"`: its raw content and whether it holds escapes. Control
    /// characters are invalid JSON: the full parse reports them.
    #[inline]
    fn string(&mut self) -> Option<(&'a str, bool)> {
        self.i += 1;
        let start = self.i;
        let mut escaped = false;
        // Up to the first byte that is not plain text, eight at a time.
        self.i += super::json_scan::special_at(&self.b()[self.i..]).unwrap_or(self.b().len() - self.i);
        loop {
            match *self.b().get(self.i)? {
                b'"' => {
                    // Both ends are next to a quote: on character boundaries.
                    let s = self.t.get(start..self.i)?;
                    self.i += 1;
                    return Some((s, escaped));
                }
                b'\\' => {
                    escaped = true;
                    self.i += 2;
                }
                c if c < 0x20 => return None,
                _ => self.i += 1,
            }
        }
    }

    /// The top-level document: kept fields built, the others measured.
    fn top(&mut self, projection: &Projection) -> Option<(usize, Document)> {
        let mut doc = Document::new();
        let m = self.members(
            |key| projection.keeps(key),
            |k, v| {
                doc.insert(k, v);
            },
        )?;
        // A top-level `$` key makes it something other than a document: the full parse says what.
        (!m.dollar).then_some((m.size, doc))
    }

    /// The members of an object at `{`: calls `keep` for each key's build decision and
    /// `put` with what was built. Read once, whatever the object turns out to be.
    fn members(&mut self, keep: impl Fn(&[u8]) -> bool, mut put: impl FnMut(&str, Bson)) -> Option<Members<'a>> {
        self.i += 1;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let frame = self.keys.len();
        let mut bloom = 0u64;
        let mut size = 5; // length + terminating NUL
        let mut dollar = false;
        let mut count = 0;
        let mut first: Option<(&'a [u8], Form<'a>)> = None;
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
        } else {
            loop {
                self.ws();
                if self.peek()? != b'"' {
                    return None;
                }
                let (name, escaped) = self.string()?;
                if escaped {
                    return None;
                }
                let key = name.as_bytes();
                // Duplicate keys: serde_json keeps the last value in the first place; leave that to it.
                let bit = 1u64 << ((key.len() * 31 + *key.first().unwrap_or(&0) as usize + 7 * *key.last().unwrap_or(&0) as usize) & 63);
                if bloom & bit != 0 && self.keys[frame..].contains(&key) {
                    return None;
                }
                bloom |= bit;
                self.keys.push(key);
                dollar |= key.first() == Some(&b'$');
                self.expect(b':')?;
                self.ws();
                // A `$`-object is rebuilt by `object`: nothing of it is built here.
                let build = keep(key) && !dollar;
                let (n, v, form) = self.value(build)?;
                size += 2 + key.len() + n;
                count += 1;
                if count == 1 {
                    first = Some((key, form));
                }
                if let Some(v) = v {
                    put(name, v);
                }
                if self.closed_after_item(b'}')? {
                    break;
                }
            }
        }
        self.keys.truncate(frame);
        self.depth -= 1;
        Some(Members { size, dollar, single: if count == 1 { first } else { None } })
    }

    /// After an object member or array item: `,` (more follow: false) or `close` (true).
    #[inline(always)]
    fn closed_after_item(&mut self, close: u8) -> Option<bool> {
        self.ws();
        match self.peek()? {
            b',' => {
                self.i += 1;
                Some(false)
            }
            c if c == close => {
                self.i += 1;
                Some(true)
            }
            _ => None,
        }
    }

    fn value(&mut self, build: bool) -> Option<Value<'a>> {
        match self.peek()? {
            b'{' => self.object(build),
            b'[' => self.array(build),
            b'"' => {
                let start = self.i;
                let (s, escaped) = self.string()?;
                if escaped {
                    let text: String = serde_json::from_slice(&self.b()[start..self.i]).ok()?;
                    return Some((5 + text.len(), build.then(|| Bson::String(text)), Form::Other));
                }
                let v = if build { Some(Bson::String(s.to_string())) } else { None };
                Some((5 + s.len(), v, Form::Str(s)))
            }
            b't' => self.literal(b"true", 1, Bson::Boolean(true), build),
            b'f' => self.literal(b"false", 1, Bson::Boolean(false), build),
            b'n' => self.literal(b"null", 0, Bson::Null, build),
            b'-' | b'0'..=b'9' => self.number(build),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8], size: usize, v: Bson, build: bool) -> Option<Value<'a>> {
        if !self.b()[self.i..].starts_with(word) {
            return None;
        }
        self.i += word.len();
        Some((size, build.then_some(v), Form::Other))
    }

    /// JSON's number grammar. Short integers are read here (int32 when they fit, as the
    /// bson crate does); floats are only measured unless built or unusual, and then
    /// serde_json reads them, so every bit is its.
    fn number(&mut self, build: bool) -> Option<Value<'a>> {
        let start = self.i;
        let n = super::json_scan::number_at(self.b(), start)?;
        self.i = n.end;
        let text = &self.b()[start..self.i];
        // `-0` is a double for serde_json; an integer beyond i64 is its u64 or f64 (below).
        // A 19-digit one (a random 64-bit value, a hash) is an i64 when it fits, as for serde_json.
        let int64 = || self.t.get(start..self.i)?.parse::<i64>().ok();
        if let Some(v) = (!n.fraction && !n.exponent && n.int_digits <= 19 && text != b"-0").then(int64).flatten() {
            return Some(match i32::try_from(v) {
                Ok(x) => (4, build.then_some(Bson::Int32(x)), Form::Int(v)),
                Err(_) => (8, build.then_some(Bson::Int64(v)), Form::Int(v)),
            });
        }
        // A float without an exponent and of sane length is always finite: 8 bytes.
        if n.fraction && !n.exponent && text.len() < 300 && !build {
            return Some((8, None, Form::Other));
        }
        let v: serde_json::Value = serde_json::from_slice(text).ok()?;
        let v = Bson::try_from(v).ok()?;
        let form = match v {
            Bson::Int64(x) => Form::Int(x),
            _ => Form::Other,
        };
        Some((payload_size(&v)?, build.then_some(v), form))
    }

    fn array(&mut self, build: bool) -> Option<Value<'a>> {
        self.i += 1;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let mut size = 5;
        let mut items = Vec::new();
        self.ws();
        if self.peek()? == b']' {
            self.i += 1;
        } else {
            let mut index = 0usize;
            loop {
                self.ws();
                let (n, v, _) = self.value(build)?;
                size += 2 + decimal_digits(index) + n;
                items.extend(v);
                index += 1;
                if self.closed_after_item(b']')? {
                    break;
                }
            }
        }
        self.depth -= 1;
        Some((size, build.then_some(Bson::Array(items)), Form::Other))
    }

    fn object(&mut self, build: bool) -> Option<Value<'a>> {
        // Only built documents are made (a `Document` draws a hasher seed when made).
        let mut doc: Option<Document> = None;
        let m = self.members(
            |_| build,
            |k, v| {
                doc.get_or_insert_with(Document::new).insert(k, v);
            },
        )?;
        if !m.dollar {
            return Some((m.size, build.then(|| Bson::Document(doc.unwrap_or_default())), Form::Other));
        }
        // A `$`-object: one of the common single-member forms, or the full parse decides.
        let (key, form) = m.single?;
        Some(common_dollar(key, form, build)?.with(build))
    }
}

/// What `Scan::members` read of an object.
struct Members<'a> {
    /// The BSON size of the object read as a document.
    size: usize,
    /// A key starts with `$`: an Extended JSON value, or an error.
    dollar: bool,
    /// The only member's key and value form, when there is one member.
    single: Option<(&'a [u8], Form<'a>)>,
}

/// A `$`-object's value and form, ready to be built or not.
struct Dollar {
    size: usize,
    value: Bson,
    form: Form<'static>,
}

impl Dollar {
    fn with<'a>(self, build: bool) -> Value<'a> {
        (self.size, build.then_some(self.value), self.form)
    }
}

/// `{"$oid": …}`, `{"$date": …}`, `{"$numberLong"|"$numberInt"|"$numberDecimal": "…"}`:
/// read as the bson crate reads them (extjson::models), or None to let it decide. A value
/// not `build` may be only checked (its size is the type's).
fn common_dollar(key: &[u8], form: Form, build: bool) -> Option<Dollar> {
    fn text<'s>(f: Form<'s>) -> Option<&'s str> {
        match f {
            Form::Str(s) => Some(s),
            _ => None,
        }
    }
    let d = |size, value| Some(Dollar { size, value, form: Form::Other });
    match key {
        b"$oid" => d(12, Bson::ObjectId(object_id(text(form)?)?)),
        b"$date" => match form {
            Form::Str(_) => d(8, Bson::DateTime(DateTime::parse_rfc3339_str(text(form)?).ok()?)),
            Form::Int(ms) | Form::NumberLong(ms) => d(8, Bson::DateTime(DateTime::from_millis(ms))),
            Form::Other => None,
        },
        b"$numberLong" => {
            let v: i64 = text(form)?.parse().ok()?;
            Some(Dollar { size: 8, value: Bson::Int64(v), form: Form::NumberLong(v) })
        }
        b"$numberInt" => d(4, Bson::Int32(text(form)?.parse().ok()?)),
        b"$numberDecimal" if !build && plain_decimal(text(form)?) => d(16, Bson::Null),
        b"$numberDecimal" => d(16, Bson::Decimal128(text(form)?.parse::<Decimal128>().ok()?)),
        _ => None,
    }
}

/// `ObjectId::parse_str` without its allocation (it was a third of this file's Extended JSON
/// reads): bson 2.x decodes the text with `hex::decode` and takes exactly 12 bytes; the same
/// crate's `decode_to_slice` into 12 bytes accepts the same texts.
fn object_id(text: &str) -> Option<ObjectId> {
    let mut bytes = [0u8; 12];
    hex::decode_to_slice(text, &mut bytes).ok()?;
    Some(ObjectId::from_bytes(bytes))
}

/// Whether bson 2.15 surely reads `text` as a Decimal128 (`ParsedDecimal128::from_str`):
/// `-`, digits, a point and digits, at most 34 digits once leading zeros go (none rounded)
/// and fewer than 6,000 after the point (the exponent, minus that, stays above its least, −6,176). Only checked,
/// a field the sample does not read skips the parse (its bit-level packing was a third of
/// the export's Extended JSON reads); anything else is parsed.
fn plain_decimal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |t: &str| t.bytes().all(|c| c.is_ascii_digit());
    let zeros = |t: &str| t.bytes().take_while(|&c| c == b'0').count();
    let leading = if zeros(int) == int.len() { int.len() + zeros(frac) } else { zeros(int) };
    let significant = int.len() + frac.len() - leading;
    !int.is_empty()
        && (!frac.is_empty() || !digits.contains('.'))
        && all_digits(int)
        && all_digits(frac)
        && significant <= 34
        && frac.len() < 6_000
}

fn decimal_digits(mut n: usize) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// A value's BSON payload size, as the bson crate writes it.
fn payload_size(v: &Bson) -> Option<usize> {
    let mut d = Document::new();
    d.insert("", v.clone());
    // length (4) + type (1) + empty key's NUL (1) + value + terminating NUL (1)
    Some(bson_size(&d).ok()? - 7)
}

#[cfg(test)]
mod tests;
