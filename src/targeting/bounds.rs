//! Index bounds of a query filter on one shard key field, as the query planner
//! would build them for an index on the shard key (what mongos targets with).
//! Only what decides the targeting label and the ranges touched is modelled.

use crate::bsonx::{cmp_bson, hash64, is_collatable};
use bson::{Bson, Document, Regex};
use std::cmp::Ordering;

/// One interval of values; inclusive or exclusive at each end.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Interval {
    pub(crate) lo: Bson,
    pub(crate) lo_inc: bool,
    pub(crate) hi: Bson,
    pub(crate) hi_inc: bool,
}

impl Interval {
    pub(crate) fn point(v: Bson) -> Interval {
        Interval { lo: v.clone(), lo_inc: true, hi: v, hi_inc: true }
    }

    pub(crate) fn is_point(&self) -> bool {
        self.lo_inc && self.hi_inc && cmp_bson(&self.lo, &self.hi) == Ordering::Equal
    }

    fn is_empty(&self) -> bool {
        match cmp_bson(&self.lo, &self.hi) {
            Ordering::Greater => true,
            Ordering::Equal => !(self.lo_inc && self.hi_inc),
            Ordering::Less => false,
        }
    }

    fn intersect(&self, o: &Interval) -> Option<Interval> {
        let (lo, lo_inc) = match cmp_bson(&self.lo, &o.lo) {
            Ordering::Greater => (self.lo.clone(), self.lo_inc),
            Ordering::Less => (o.lo.clone(), o.lo_inc),
            Ordering::Equal => (self.lo.clone(), self.lo_inc && o.lo_inc),
        };
        let (hi, hi_inc) = match cmp_bson(&self.hi, &o.hi) {
            Ordering::Less => (self.hi.clone(), self.hi_inc),
            Ordering::Greater => (o.hi.clone(), o.hi_inc),
            Ordering::Equal => (self.hi.clone(), self.hi_inc && o.hi_inc),
        };
        let i = Interval { lo, lo_inc, hi, hi_inc };
        (!i.is_empty()).then_some(i)
    }
}

/// The bounds on one field: unconstrained, or a union of intervals (possibly none).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FieldBounds {
    Any,
    Set(Vec<Interval>),
}

impl FieldBounds {
    fn intersect(self, o: FieldBounds) -> FieldBounds {
        match (self, o) {
            (FieldBounds::Any, x) | (x, FieldBounds::Any) => x,
            (FieldBounds::Set(a), FieldBounds::Set(b)) => {
                let mut out = Vec::new();
                for x in &a {
                    for y in &b {
                        if let Some(i) = x.intersect(y) {
                            out.push(i);
                        }
                    }
                }
                FieldBounds::Set(normalize(out))
            }
        }
    }

    /// The union of many bounds, normalised once (a large `$in` stays O(n log n)).
    fn union_all(parts: impl IntoIterator<Item = FieldBounds>) -> FieldBounds {
        let mut all = Vec::new();
        for p in parts {
            match p {
                FieldBounds::Any => return FieldBounds::Any,
                FieldBounds::Set(v) => all.extend(v),
            }
        }
        FieldBounds::Set(normalize(all))
    }
}

/// Sort and merge overlapping intervals.
fn normalize(mut v: Vec<Interval>) -> Vec<Interval> {
    v.sort_by(|a, b| cmp_bson(&a.lo, &b.lo).then_with(|| b.lo_inc.cmp(&a.lo_inc)));
    let mut out: Vec<Interval> = Vec::with_capacity(v.len());
    for i in v {
        if let Some(last) = out.last_mut() {
            let touch = match cmp_bson(&i.lo, &last.hi) {
                Ordering::Less => true,
                Ordering::Equal => i.lo_inc || last.hi_inc,
                Ordering::Greater => false,
            };
            if touch {
                match cmp_bson(&i.hi, &last.hi) {
                    Ordering::Greater => {
                        last.hi = i.hi;
                        last.hi_inc = i.hi_inc;
                    }
                    Ordering::Equal => last.hi_inc |= i.hi_inc,
                    Ordering::Less => {}
                }
                continue;
            }
        }
        out.push(i);
    }
    out
}

/// How predicates may be turned into bounds on this field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FieldContext {
    pub(crate) hashed: bool,
    /// The effective collation is simple (binary).
    pub(crate) simple_collation: bool,
}

/// The bounds a filter puts on `path`. Only predicates on exactly `path` count:
/// `{a: {x: 0}}` does not bound the index field `a.x`.
pub(crate) fn bounds_for(filter: &Document, path: &str, cx: FieldContext, let_vars: Option<&Document>) -> FieldBounds {
    let mut acc = FieldBounds::Any;
    for (k, v) in filter {
        let b = match k.as_str() {
            "$and" => match v {
                Bson::Array(items) => items
                    .iter()
                    .filter_map(|x| x.as_document())
                    .fold(FieldBounds::Any, |a, d| a.intersect(bounds_for(d, path, cx, let_vars))),
                _ => FieldBounds::Any,
            },
            "$or" => match v {
                Bson::Array(items) if items.iter().any(|x| x.as_document().is_some()) => {
                    FieldBounds::union_all(items.iter().filter_map(|x| x.as_document()).map(|d| bounds_for(d, path, cx, let_vars)))
                }
                _ => FieldBounds::Any,
            },
            "$expr" => expr_equalities(v, let_vars)
                .into_iter()
                .filter(|(p, _)| p == path)
                .fold(FieldBounds::Any, |acc, (_, val)| acc.intersect(value_point(&val, cx))),
            _ if k.starts_with('$') => FieldBounds::Any,
            _ if k == path => predicate_bounds(v, cx),
            _ => FieldBounds::Any,
        };
        acc = acc.intersect(b);
    }
    acc
}

/// `{$eq: ["$field", <constant or $$var>]}` (either order) inside `$expr`.
/// Every `$eq` between a field and a constant in an `$expr`, through `$and`
/// (`{$and: [{$eq: ["$a", "$$v"]}, {$eq: ["$b", 1]}]}`), as the server's equality fast path sees them.
pub(crate) fn expr_equalities(expr: &Bson, let_vars: Option<&Document>) -> Vec<(String, Bson)> {
    if let Some(eq) = expr_equality(expr, let_vars) {
        return vec![eq];
    }
    match expr.as_document().filter(|d| d.len() == 1).and_then(|d| d.get("$and")).and_then(Bson::as_array) {
        Some(items) => items.iter().flat_map(|x| expr_equalities(x, let_vars)).collect(),
        None => vec![],
    }
}

/// One `{$eq: ["$field", <constant or $$variable>]}` (either order).
pub(crate) fn expr_equality(expr: &Bson, let_vars: Option<&Document>) -> Option<(String, Bson)> {
    let d = expr.as_document()?;
    if d.len() != 1 {
        return None;
    }
    let args = d.get("$eq")?.as_array()?;
    if args.len() != 2 {
        return None;
    }
    let field_of = |b: &Bson| match b {
        Bson::String(s) if s.starts_with('$') && !s.starts_with("$$") => Some(s[1..].to_string()),
        _ => None,
    };
    let const_of = |b: &Bson| -> Option<Bson> {
        match b {
            Bson::String(s) if s.starts_with("$$") => let_vars?.get(&s[2..]).cloned(),
            Bson::String(s) if s.starts_with('$') => None,
            Bson::Document(d) if d.keys().next().is_some_and(|k| k.starts_with('$')) => d.get("$literal").cloned(),
            other => Some(other.clone()),
        }
    };
    if let Some(f) = field_of(&args[0]) {
        return Some((f, const_of(&args[1])?));
    }
    if let Some(f) = field_of(&args[1]) {
        return Some((f, const_of(&args[0])?));
    }
    None
}

fn is_operator_doc(v: &Bson) -> Option<&Document> {
    match v {
        Bson::Document(d) if d.keys().next().is_some_and(|k| k.starts_with('$')) => Some(d),
        _ => None,
    }
}

fn predicate_bounds(v: &Bson, cx: FieldContext) -> FieldBounds {
    let Some(ops) = is_operator_doc(v) else {
        return match v {
            Bson::RegularExpression(r) => regex_bounds(r, cx),
            other => value_point(other, cx),
        };
    };
    let mut acc = FieldBounds::Any;
    for (op, arg) in ops {
        let b = match op.as_str() {
            "$eq" => value_point(arg, cx),
            "$in" => match arg {
                Bson::Array(items) => FieldBounds::union_all(items.iter().map(|x| match x {
                    Bson::RegularExpression(r) => regex_bounds(r, cx),
                    other => value_point(other, cx),
                })),
                _ => FieldBounds::Any,
            },
            "$all" => match arg {
                Bson::Array(items) if !items.is_empty() => items.iter().fold(FieldBounds::Any, |a, x| a.intersect(value_point(x, cx))),
                _ => FieldBounds::Any,
            },
            "$gt" | "$gte" | "$lt" | "$lte" => range_bounds(op, arg, cx),
            "$ne" => complement(value_point(arg, cx), cx),
            "$nin" => match arg {
                Bson::Array(items) => complement(FieldBounds::union_all(items.iter().map(|x| value_point(x, cx))), cx),
                _ => FieldBounds::Any,
            },
            "$exists" => {
                let truthy = match arg {
                    Bson::Boolean(b) => *b,
                    Bson::Int32(i) => *i != 0,
                    Bson::Int64(i) => *i != 0,
                    Bson::Double(f) => *f != 0.0,
                    _ => true,
                };
                if truthy {
                    FieldBounds::Any
                } else {
                    value_point(&Bson::Null, cx)
                }
            }
            "$regex" => {
                let pattern = match arg {
                    Bson::String(s) => s.clone(),
                    Bson::RegularExpression(r) => r.pattern.clone(),
                    _ => String::new(),
                };
                let options = ops.get_str("$options").unwrap_or("").to_string();
                regex_bounds(&Regex { pattern, options }, cx)
            }
            "$not" => match arg {
                Bson::RegularExpression(_) => FieldBounds::Any,
                Bson::Document(d) if d.contains_key("$regex") => FieldBounds::Any,
                other => complement(predicate_bounds(other, cx), cx),
            },
            _ => FieldBounds::Any,
        };
        acc = acc.intersect(b);
    }
    acc
}

/// Equality to one value. Hashed fields bound the hash; a non-simple collation
/// makes strings, objects and arrays unusable for bounds on a simple-collation index.
pub(crate) fn value_point(v: &Bson, cx: FieldContext) -> FieldBounds {
    if !cx.simple_collation && is_collatable(v) {
        return FieldBounds::Any;
    }
    if cx.hashed {
        return match v {
            Bson::Array(_) | Bson::RegularExpression(_) => FieldBounds::Any,
            other => FieldBounds::Set(vec![Interval::point(Bson::Int64(hash64(other)))]),
        };
    }
    FieldBounds::Set(vec![Interval::point(v.clone())])
}

fn complement(b: FieldBounds, cx: FieldContext) -> FieldBounds {
    if cx.hashed {
        return FieldBounds::Any;
    }
    match b {
        FieldBounds::Any => FieldBounds::Any,
        FieldBounds::Set(ints) => {
            let mut out = Vec::new();
            let mut lo = Bson::MinKey;
            let mut lo_inc = true;
            for i in ints {
                out.push(Interval { lo: lo.clone(), lo_inc, hi: i.lo.clone(), hi_inc: !i.lo_inc });
                lo = i.hi;
                lo_inc = !i.hi_inc;
            }
            out.push(Interval { lo, lo_inc, hi: Bson::MaxKey, hi_inc: true });
            FieldBounds::Set(out.into_iter().filter(|i| !i.is_empty()).collect())
        }
    }
}

/// Type-bracketed range: `{$gt: 5}` only matches numbers, so its bounds end at +inf.
fn range_bounds(op: &str, v: &Bson, cx: FieldContext) -> FieldBounds {
    if cx.hashed || (!cx.simple_collation && is_collatable(v)) {
        return FieldBounds::Any;
    }
    let (tmin, tmax) = type_bracket(v);
    let i = match op {
        "$gt" => Interval { lo: v.clone(), lo_inc: false, hi: tmax, hi_inc: true },
        "$gte" => Interval { lo: v.clone(), lo_inc: true, hi: tmax, hi_inc: true },
        "$lt" => Interval { lo: tmin, lo_inc: true, hi: v.clone(), hi_inc: false },
        _ => Interval { lo: tmin, lo_inc: true, hi: v.clone(), hi_inc: true },
    };
    FieldBounds::Set(if i.is_empty() { vec![] } else { vec![i] })
}

fn type_bracket(v: &Bson) -> (Bson, Bson) {
    use bson::oid::ObjectId;
    match v {
        Bson::Double(_) | Bson::Int32(_) | Bson::Int64(_) | Bson::Decimal128(_) => {
            (Bson::Double(f64::NEG_INFINITY), Bson::Double(f64::INFINITY))
        }
        Bson::String(_) | Bson::Symbol(_) => (Bson::String(String::new()), Bson::Document(Document::new())),
        Bson::DateTime(_) => (Bson::DateTime(bson::DateTime::from_millis(i64::MIN)), Bson::DateTime(bson::DateTime::from_millis(i64::MAX))),
        Bson::ObjectId(_) => (Bson::ObjectId(ObjectId::from_bytes([0; 12])), Bson::ObjectId(ObjectId::from_bytes([0xff; 12]))),
        Bson::Boolean(_) => (Bson::Boolean(false), Bson::Boolean(true)),
        _ => (Bson::MinKey, Bson::MaxKey),
    }
}

/// A regex bounds strings: a simple `^prefix` to that prefix's range, any other to all strings.
fn regex_bounds(r: &Regex, cx: FieldContext) -> FieldBounds {
    if cx.hashed || !cx.simple_collation {
        return FieldBounds::Any;
    }
    let all_strings = Interval { lo: Bson::String(String::new()), lo_inc: true, hi: Bson::Document(Document::new()), hi_inc: false };
    let prefix = simple_regex_prefix(&r.pattern, &r.options);
    if prefix.is_empty() {
        return FieldBounds::Set(vec![all_strings]);
    }
    let mut end = prefix.clone().into_bytes();
    // The smallest string above every string with this prefix.
    while let Some(last) = end.pop() {
        if last < 0x7f {
            end.push(last + 1);
            break;
        }
    }
    let hi = if end.is_empty() { Bson::Document(Document::new()) } else { Bson::String(String::from_utf8_lossy(&end).into_owned()) };
    FieldBounds::Set(vec![Interval { lo: Bson::String(prefix), lo_inc: true, hi, hi_inc: false }])
}

/// The literal prefix every match of a regex starts with, as the server takes it for index
/// bounds (`IndexBoundsBuilder::simpleRegex`, mongodb/mongo
/// src/mongo/db/query/index_bounds_builder.cpp at 0452eb9615e1cef8ed3fe704937e50a6bf473be3):
/// anchored by `^` (or `\A`, which alone allows the `m` flag), no unescaped `|` anywhere,
/// flags among `m`/`s`/`x` (`i` gives none); literal characters up to the first
/// metacharacter, `*` or `?` dropping the character before them, `\Q...\E` quoted. Empty: no
/// prefix, every string.
fn simple_regex_prefix(pattern: &str, flags: &str) -> String {
    let b = pattern.as_bytes();
    let (mut i, multiline_ok) = if b.starts_with(b"\\A") {
        (2, true)
    } else if b.starts_with(b"^") {
        (1, false)
    } else {
        return String::new();
    };
    if may_have_unescaped_pipe(&b[i..]) {
        return String::new();
    }
    let mut extended = false;
    for f in flags.chars() {
        match f {
            'm' if multiline_ok => {}
            's' => {}
            'x' => extended = true,
            _ => return String::new(),
        }
    }
    let mut out: Vec<u8> = Vec::new();
    while i < b.len() {
        let c = b[i];
        i += 1;
        match c {
            // They make the character before them optional.
            b'*' | b'?' => {
                out.pop();
                break;
            }
            b'\\' => {
                let e = b.get(i).copied().unwrap_or(0);
                i += 1;
                if e == b'Q' {
                    while i < b.len() {
                        if b[i] == b'\\' && b.get(i + 1) == Some(&b'E') {
                            i += 2;
                            break;
                        }
                        out.push(b[i]);
                        i += 1;
                    }
                } else if e.is_ascii_alphanumeric() || e == 0 {
                    break; // a class (\d, \w) or a back reference
                } else {
                    out.push(e);
                }
            }
            b'^' | b'$' | b'.' | b'[' | b'(' | b')' | b'+' | b'{' => break,
            b'#' if extended => break,
            c if extended && c.is_ascii_whitespace() => {}
            c => out.push(c),
        }
    }
    // A `?` after a multi-byte character leaves part of it: keep whole characters.
    match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            String::from_utf8_lossy(&e.into_bytes()[..valid]).into_owned()
        }
    }
}

/// The server's `stringMayHaveUnescapedPipe` (same file): a `|` not preceded by a backslash, or
/// preceded by an escaped one; false positives allowed (inside a class or `\Q...\E`).
fn may_have_unescaped_pipe(s: &[u8]) -> bool {
    if s.first() == Some(&b'|') {
        return true;
    }
    if s.len() > 1 && s[1] == b'|' && s[0] != b'\\' {
        return true;
    }
    (2..s.len()).any(|i| s[i] == b'|' && (s[i - 1] != b'\\' || s[i - 2] == b'\\'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    const CX: FieldContext = FieldContext { hashed: false, simple_collation: true };

    /// A pattern, its flags, and the string interval mongod's explain gave (upper bound None: all strings).
    type ServerBounds<'a> = (&'a str, &'a str, (&'a str, Option<&'a str>));

    #[test]
    fn regex_prefixes_are_the_servers() {
        // (pattern, flags, the string interval mongod 6.0.5's explain gave on an index {sku: 1}).
        let server: [ServerBounds; 17] = [
            ("^OFFC|^HOME", "", ("", None)),
            ("^OFFC-00", "m", ("", None)),
            ("^a", "i", ("", None)),
            ("^OFFC", "", ("OFFC", Some("OFFD"))),
            ("\\AOFFC", "m", ("OFFC", Some("OFFD"))),
            ("^ab?c", "", ("a", Some("b"))),
            ("^a\\.b", "", ("a.b", Some("a.c"))),
            ("^a\\db", "", ("a", Some("b"))),
            ("^a b", "x", ("ab", Some("ac"))),
            ("^a#b", "", ("a#b", Some("a#c"))),
            ("^\\Qa.b\\E.c", "", ("a.b", Some("a.c"))),
            ("^a|b", "", ("", None)),
            ("^a\\|b", "", ("a|b", Some("a|c"))),
            ("^abc", "s", ("abc", Some("abd"))),
            ("abc", "", ("", None)),
            ("^ab*", "", ("a", Some("b"))),
            ("^\u{e9}1", "", ("\u{e9}1", Some("\u{e9}2"))),
        ];
        for (pattern, flags, (lo, hi)) in server {
            let b = regex_bounds(&Regex { pattern: pattern.into(), options: flags.into() }, CX);
            let hi = hi.map_or(Bson::Document(Document::new()), |h| Bson::String(h.into()));
            let want = Interval { lo: Bson::String(lo.into()), lo_inc: true, hi, hi_inc: false };
            assert_eq!(b, FieldBounds::Set(vec![want]), "/{pattern}/{flags}");
        }
    }

    #[test]
    fn ranges_intersect_and_in_unions() {
        let b = bounds_for(&doc! {"a": {"$gte": 1, "$lt": 5}}, "a", CX, None);
        assert_eq!(b, FieldBounds::Set(vec![Interval { lo: Bson::Int32(1), lo_inc: true, hi: Bson::Int32(5), hi_inc: false }]));
        let b = bounds_for(&doc! {"a": {"$in": [3, 1, 3]}}, "a", CX, None);
        assert_eq!(b, FieldBounds::Set(vec![Interval::point(Bson::Int32(1)), Interval::point(Bson::Int32(3))]));
        let b = bounds_for(&doc! {"$or": [{"a": 1}, {"b": 2}]}, "a", CX, None);
        assert_eq!(b, FieldBounds::Any);
        let b = bounds_for(&doc! {"a": {"$ne": 1}}, "a", CX, None);
        assert!(matches!(&b, FieldBounds::Set(v) if v.len() == 2));
        let b = bounds_for(&doc! {"a": {"$gt": 5, "$lt": 3}}, "a", CX, None);
        assert_eq!(b, FieldBounds::Set(vec![]));
    }
}
