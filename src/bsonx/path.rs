//! Dotted-path lookup with shard-key semantics: a missing field is null, and an
//! array anywhere along the path makes the value unusable as a shard key.

use bson::{Bson, Document, RawBsonRef, RawDocument};

/// What a path finds: a value, nothing, or an array the server would reject.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Found<V> {
    Value(V),
    Missing,
    /// An array on the path (or as the value): the server rejects such a document.
    Array,
}

/// A lookup in a decoded document.
pub(crate) type Lookup<'a> = Found<&'a Bson>;

pub(crate) fn lookup<'a>(doc: &'a Document, path: &str) -> Lookup<'a> {
    walk(
        path,
        |name| field(doc, name),
        |v| matches!(v, Bson::Array(_)),
        |v, name| match v {
            Bson::Document(d) => d.get(name),
            _ => None,
        },
    )
}

/// The shard-key reading of a dotted path, on any document form: the first part from
/// `top`, each next one from `child` (None when the value holds no such field or is no
/// document); an array on the way or at the end makes it `Array`.
fn walk<V: Copy>(
    path: &str,
    top: impl FnOnce(&str) -> Option<V>,
    is_array: impl Fn(V) -> bool,
    child: impl Fn(V, &str) -> Option<V>,
) -> Found<V> {
    let (first, rest) = match path.split_once('.') {
        Some((first, rest)) => (first, Some(rest)),
        None => (path, None),
    };
    let Some(cur) = top(first) else { return Found::Missing };
    walk_from(cur, rest, is_array, child)
}

/// `walk` on from the value of the path's first part; `rest` is the path after it.
fn walk_from<V: Copy>(mut cur: V, rest: Option<&str>, is_array: impl Fn(V) -> bool, child: impl Fn(V, &str) -> Option<V>) -> Found<V> {
    for part in rest.into_iter().flat_map(|r| r.split('.')) {
        if is_array(cur) {
            return Found::Array;
        }
        match child(cur, part) {
            Some(v) => cur = v,
            None => return Found::Missing,
        }
    }
    if is_array(cur) {
        Found::Array
    } else {
        Found::Value(cur)
    }
}

impl<V> Found<V> {
    pub(crate) fn map<W>(self, f: impl FnOnce(V) -> W) -> Found<W> {
        match self {
            Found::Value(v) => Found::Value(f(v)),
            Found::Missing => Found::Missing,
            Found::Array => Found::Array,
        }
    }
}

/// `doc.get(name)`; a small document (a projected sample document has a dozen fields)
/// is searched in order, cheaper than hashing the name.
#[inline]
pub(crate) fn field<'a>(doc: &'a Document, name: &str) -> Option<&'a Bson> {
    if doc.len() <= 16 {
        doc.iter().find(|(k, _)| k.as_str() == name).map(|(_, v)| v)
    } else {
        doc.get(name)
    }
}

/// A sampled document, decoded or as the driver's raw BSON (read without decoding:
/// only the key paths are looked up).
#[derive(Debug, Clone, Copy)]
pub(crate) enum DocRef<'a> {
    Doc(&'a Document),
    Raw(&'a RawDocument),
}

/// A value found in a `DocRef`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ValueRef<'a> {
    Doc(&'a Bson),
    Raw(RawBsonRef<'a>),
}

impl<'a> DocRef<'a> {
    /// `lookup`, on either form.
    pub(crate) fn lookup(self, path: &str) -> Found<ValueRef<'a>> {
        match self {
            DocRef::Doc(d) => lookup(d, path).map(ValueRef::Doc),
            DocRef::Raw(d) => lookup_raw(d, path).map(ValueRef::Raw),
        }
    }
}

impl ValueRef<'_> {
    /// The value decoded (what is kept: reservoirs, exact counts past the dense pass).
    pub(crate) fn to_bson(self) -> Bson {
        match self {
            ValueRef::Doc(v) => v.clone(),
            // A raw value the driver handed us converts; one that does not is malformed BSON
            // inside a document the server sent, which `lookup_raw` would not have returned.
            ValueRef::Raw(v) => v.to_raw_bson().try_into().unwrap_or(Bson::Undefined),
        }
    }
}

/// `lookup` on raw BSON. The first element of a name counts (a decoded `Document` keeps the
/// last of duplicated names; the server never returns duplicated names). An element that
/// does not parse reads as missing; the reader checked every document's top level.
pub(crate) fn lookup_raw<'a>(doc: &'a RawDocument, path: &str) -> Found<RawBsonRef<'a>> {
    walk(path, |name| field_raw(doc, name), is_raw_array, raw_child)
}

fn is_raw_array(v: RawBsonRef<'_>) -> bool {
    matches!(v, RawBsonRef::Array(_))
}

fn raw_child<'a>(v: RawBsonRef<'a>, name: &str) -> Option<RawBsonRef<'a>> {
    match v {
        RawBsonRef::Document(d) => field_raw(d, name),
        _ => None,
    }
}

/// What a pass over a raw document's top level says of one name (`top_fields`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Top<'a> {
    Found(RawBsonRef<'a>),
    Missing,
    /// A rare type or a bad size on the way: `RawDocument::get` decides.
    Unsure,
}

/// The top-level fields `names` asks for, in one pass over `doc` (several keys read the
/// same document: each lookup scanned it from its start). `out[i]` says of `names[i]`
/// what `field_raw`'s scan would. `hints` carries, from one document to the next, which
/// name each element held (documents of a collection tend to share a layout): an element
/// is compared with that name first.
pub(crate) fn top_fields<'a>(doc: &'a RawDocument, names: &[&str], out: &mut Vec<Top<'a>>, hints: &mut Vec<usize>) {
    const NONE: usize = usize::MAX;
    out.clear();
    out.resize(names.len(), Top::Unsure);
    // Which names are still looked for (on the stack for the usual few).
    let (mut few, mut many) = ([true; 32], Vec::new());
    let pending: &mut [bool] = if names.len() <= few.len() {
        &mut few[..names.len()]
    } else {
        many.resize(names.len(), true);
        &mut many
    };
    let (mut left, mut k) = (names.len(), 0);
    let end = each_element(doc.as_bytes(), |key, t, val| {
        let guess = hints.get(k).copied().unwrap_or(NONE);
        let i = match names.get(guess) {
            Some(n) if n.as_bytes() == key => Some(guess),
            _ => names.iter().position(|n| n.as_bytes() == key),
        };
        match hints.get_mut(k) {
            Some(h) => *h = i.unwrap_or(NONE),
            None => hints.push(i.unwrap_or(NONE)),
        }
        k += 1;
        if let Some(i) = i.filter(|&i| pending[i]) {
            pending[i] = false;
            out[i] = raw_value(t, val).map_or(Top::Unsure, Top::Found);
            left -= 1;
            if left == 0 {
                return std::ops::ControlFlow::Break(());
            }
        }
        std::ops::ControlFlow::Continue(())
    });
    // Names not found: missing after a proper end, else unsure (left at `Unsure`).
    if end == Walked::End {
        for (o, _) in out.iter_mut().zip(pending.iter()).filter(|(_, p)| **p) {
            *o = Top::Missing;
        }
    }
}

/// `lookup_raw` of `path`, from what `top_fields` said of its first part.
pub(crate) fn lookup_from_top<'a>(doc: &'a RawDocument, top: Top<'a>, path: &str) -> Found<RawBsonRef<'a>> {
    match top {
        Top::Found(v) => walk_from(v, path.split_once('.').map(|(_, rest)| rest), is_raw_array, raw_child),
        Top::Missing => Found::Missing,
        Top::Unsure => lookup_raw(doc, path),
    }
}

/// `doc.get(name)`, errors read as missing. The elements before the one wanted are
/// skipped by their type's size without being parsed (`RawDocument::get` parses and
/// checks each: most of a live sample's cost); anything unusual on the way (a rare
/// type, a bad size) hands the whole lookup to `get`.
pub(crate) fn field_raw<'a>(doc: &'a RawDocument, name: &str) -> Option<RawBsonRef<'a>> {
    match scan_raw(doc.as_bytes(), name.as_bytes()) {
        Scanned::Found(v) => Some(v),
        Scanned::Missing => None,
        Scanned::Unsure => doc.get(name).ok().flatten(),
    }
}

/// Whether every top-level element of `doc` has a well-formed type and size (what
/// `field_raw` relies on); false when unsure.
pub(crate) fn sizes_hold(doc: &RawDocument) -> bool {
    // No name holds a NUL byte: the scan walks every element to the end.
    matches!(scan_raw(doc.as_bytes(), b"\0"), Scanned::Missing)
}

enum Scanned<'a> {
    Found(RawBsonRef<'a>),
    Missing,
    Unsure,
}

fn scan_raw<'a>(b: &'a [u8], name: &[u8]) -> Scanned<'a> {
    let mut found = Scanned::Unsure;
    match each_element(b, |key, t, val| {
        if key != name {
            return std::ops::ControlFlow::Continue(());
        }
        if let Some(x) = raw_value(t, val) {
            found = Scanned::Found(x);
        }
        std::ops::ControlFlow::Break(())
    }) {
        Walked::Stopped => found,
        Walked::End => Scanned::Missing,
        Walked::Unsure => Scanned::Unsure,
    }
}

/// How `each_element` ended.
#[derive(Debug, PartialEq)]
enum Walked {
    /// `f` stopped it.
    Stopped,
    /// At the document's proper end.
    End,
    /// At a rare type or a bad size.
    Unsure,
}

/// Walk the top-level elements of document bytes `b` in order: `f(name, type, value
/// bytes)`, each skipped by its type's size without being parsed.
fn each_element<'a>(b: &'a [u8], mut f: impl FnMut(&'a [u8], u8, &'a [u8]) -> std::ops::ControlFlow<()>) -> Walked {
    let le32 = |at: usize| -> Option<usize> { i32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?).try_into().ok() };
    let mut at = 4;
    loop {
        let Some(&t) = b.get(at) else { return Walked::Unsure };
        if t == 0 {
            return if at + 1 == b.len() { Walked::End } else { Walked::Unsure };
        }
        let Some(nul) = b.get(at + 1..).and_then(|r| r.iter().position(|&c| c == 0)) else { return Walked::Unsure };
        let key = &b[at + 1..at + 1 + nul];
        let v = at + 2 + nul;
        let size = match t {
            0x01 | 0x09 | 0x11 | 0x12 => 8,
            0x02 | 0x0D | 0x0E => match le32(v) {
                Some(n) if n >= 1 => 4 + n,
                _ => return Walked::Unsure,
            },
            0x03 | 0x04 => match le32(v) {
                Some(n) if n >= 5 => n,
                _ => return Walked::Unsure,
            },
            0x05 => match le32(v) {
                Some(n) => 5 + n,
                None => return Walked::Unsure,
            },
            0x06 | 0x0A | 0x7F | 0xFF => 0,
            0x07 => 12,
            0x08 => 1,
            0x10 => 4,
            0x13 => 16,
            // Regular expression, DBPointer, code with scope: let `get` read them.
            _ => return Walked::Unsure,
        };
        let Some(val) = b.get(v..v + size) else { return Walked::Unsure };
        if f(key, t, val).is_break() {
            return Walked::Stopped;
        }
        at = v + size;
    }
}

/// The value of a scanned element, for the types a key holds; None hands it to `get`.
fn raw_value(t: u8, v: &[u8]) -> Option<RawBsonRef<'_>> {
    let u32_at = |at: usize| u32::from_le_bytes(v[at..at + 4].try_into().expect("4 bytes"));
    let u64_at = |at: usize| u64::from_le_bytes(v[at..at + 8].try_into().expect("8 bytes"));
    let text = || match v.split_last() {
        Some((0, s)) => std::str::from_utf8(&s[4..]).ok(),
        _ => None,
    };
    Some(match t {
        0x01 => RawBsonRef::Double(f64::from_bits(u64_at(0))),
        0x02 => RawBsonRef::String(text()?),
        0x0D => RawBsonRef::JavaScriptCode(text()?),
        0x0E => RawBsonRef::Symbol(text()?),
        0x03 => RawBsonRef::Document(RawDocument::from_bytes(v).ok()?),
        0x06 => RawBsonRef::Undefined,
        0x07 => RawBsonRef::ObjectId(bson::oid::ObjectId::from_bytes(v.try_into().ok()?)),
        0x08 => RawBsonRef::Boolean(match v[0] {
            0 => false,
            1 => true,
            _ => return None,
        }),
        0x09 => RawBsonRef::DateTime(bson::DateTime::from_millis(u64_at(0) as i64)),
        0x0A => RawBsonRef::Null,
        0x10 => RawBsonRef::Int32(u32_at(0) as i32),
        0x11 => RawBsonRef::Timestamp(bson::Timestamp { increment: u32_at(0), time: u32_at(4) }),
        0x12 => RawBsonRef::Int64(u64_at(0) as i64),
        0x7F => RawBsonRef::MaxKey,
        0xFF => RawBsonRef::MinKey,
        // Arrays, binary data, decimals: `get` builds them.
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn dotted_paths_missing_and_arrays() {
        let d = doc! {"a": {"x": 1}, "b": [1, 2], "c": [{"x": 1}], "n": null};
        assert_eq!(lookup(&d, "a.x"), Lookup::Value(&Bson::Int32(1)));
        assert_eq!(lookup(&d, "a.y"), Lookup::Missing);
        assert_eq!(lookup(&d, "z"), Lookup::Missing);
        assert_eq!(lookup(&d, "b"), Lookup::Array);
        assert_eq!(lookup(&d, "c.x"), Lookup::Array);
        assert_eq!(lookup(&d, "n"), Lookup::Value(&Bson::Null));
        assert_eq!(lookup(&d, "n.x"), Lookup::Missing);
    }

    #[test]
    fn the_raw_scan_finds_what_get_finds() {
        use bson::spec::BinarySubtype;
        let d = doc! {
            "d": 1.5, "s": "x", "e": "", "o": {"a": 1}, "a": [1], "b": bson::Binary { subtype: BinarySubtype::Generic, bytes: vec![1, 2] },
            "u": Bson::Undefined, "i": bson::oid::ObjectId::from_bytes([3; 12]), "t": true, "f": false,
            "dt": bson::DateTime::from_millis(-5), "n": null, "r": bson::Regex { pattern: "a".into(), options: "".into() },
            "c": Bson::JavaScriptCode("f".into()), "y": Bson::Symbol("sym".into()),
            "w": Bson::JavaScriptCodeWithScope(bson::JavaScriptCodeWithScope { code: "g".into(), scope: doc! {} }),
            "i32": -7, "ts": bson::Timestamp { time: 1, increment: 2 }, "i64": i64::MIN,
            "dec": Bson::Decimal128("2.5".parse().unwrap()), "max": Bson::MaxKey, "min": Bson::MinKey, "s": "dup",
        };
        let raw = bson::RawDocumentBuf::from_document(&d).unwrap();
        let mut names: Vec<String> = raw.iter().map(|e| e.unwrap().0.to_string()).collect();
        names.extend(["", "zz", "dd"].map(String::from));
        for n in &names {
            let want = raw.get(n).unwrap();
            let got = field_raw(&raw, n);
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "{n}");
        }
        // Truncated or corrupt documents: whatever `get` says (an error reads as missing).
        let bytes = raw.as_bytes();
        for cut in 5..bytes.len() {
            let mut b = bytes[..cut].to_vec();
            b.push(0);
            let len = (b.len() as i32).to_le_bytes();
            b[..4].copy_from_slice(&len);
            let Ok(doc) = RawDocument::from_bytes(&b) else { continue };
            for n in &names {
                let want = doc.get(n).ok().flatten();
                assert_eq!(format!("{:?}", field_raw(doc, n)), format!("{want:?}"), "{n} at {cut}");
            }
        }
    }

    #[test]
    fn raw_lookup_finds_what_the_decoded_lookup_finds() {
        let d = doc! {"a": {"x": 1, "y": {"z": "s"}}, "b": [1, 2], "c": [{"x": 1}], "n": null, "d": {"$x": 1.5}};
        let raw = bson::RawDocumentBuf::from_document(&d).unwrap();
        for p in ["a", "a.x", "a.y", "a.y.z", "a.q", "b", "b.0", "c.x", "n", "n.x", "z", "d", "d.$x", ""] {
            let want = lookup(&d, p).map(Bson::clone);
            let got = DocRef::Raw(&raw).lookup(p).map(ValueRef::to_bson);
            assert_eq!(got, want, "{p}");
        }
    }

    #[test]
    fn one_pass_over_the_top_level_finds_what_each_lookup_finds() {
        use bson::spec::BinarySubtype;
        let d = doc! {
            "d": 1.5, "s": "x", "o": {"a": 1, "b": {"c": 2}}, "a": [1], "b": bson::Binary { subtype: BinarySubtype::Generic, bytes: vec![1, 2] },
            "i": bson::oid::ObjectId::from_bytes([3; 12]), "t": true, "n": null, "r": bson::Regex { pattern: "a".into(), options: "".into() },
            "i32": -7, "i64": i64::MIN, "dec": Bson::Decimal128("2.5".parse().unwrap()), "s": "dup", "late": 1,
        };
        let raw = bson::RawDocumentBuf::from_document(&d).unwrap();
        let paths =
            ["d", "s", "o", "o.a", "o.b.c", "o.z", "a", "a.0", "b", "i", "t", "n", "r", "i32", "i64", "dec", "late", "zz", "zz.y", ""];
        let mut names: Vec<&str> = paths.iter().map(|p| p.split('.').next().unwrap()).collect();
        names.sort();
        names.dedup();
        // Whole, truncated and corrupt documents, one after another: the hints carry over.
        let bytes = raw.as_bytes();
        let mut docs = vec![bytes.to_vec()];
        for cut in 5..bytes.len() {
            let mut b = bytes[..cut].to_vec();
            b.push(0);
            let len = (b.len() as i32).to_le_bytes();
            b[..4].copy_from_slice(&len);
            docs.push(b);
            docs.push(bytes.to_vec());
        }
        let (mut tops, mut hints) = (Vec::new(), Vec::new());
        for b in &docs {
            let Ok(doc) = RawDocument::from_bytes(b) else { continue };
            top_fields(doc, &names, &mut tops, &mut hints);
            for p in paths {
                let slot = names.iter().position(|n| *n == p.split('.').next().unwrap()).unwrap();
                let want = lookup_raw(doc, p);
                let got = lookup_from_top(doc, tops[slot], p);
                assert_eq!(format!("{got:?}"), format!("{want:?}"), "{p} in {} bytes", b.len());
            }
        }
    }
}
