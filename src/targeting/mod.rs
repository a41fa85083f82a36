//! Query targeting: the label MongoDB's analyzeShardKey gives a query for a
//! candidate key (single shard, multi shard, scatter-gather), from the shape of
//! the query's bounds on the key, not from how many chunks it touches.
//!
//! 1. Equality on every key field (the server's `extractShardKeyFromQuery`
//!    fast path) is single-shard, unless a non-simple collation meets a
//!    string/object/array value (then multi-shard).
//! 2. Otherwise the bounds on the key are planned as for an index on the key:
//!    one MinKey..MaxKey range on every field is scatter-gather; anything else multi-shard.

pub(crate) mod bounds;
pub mod shapes;

use self::bounds::{bounds_for, expr_equalities, FieldBounds, FieldContext};
use crate::bsonx::is_collatable;
use crate::model::{KeyKind, KeyRange, Query, ShardKey, UpdateSpec};
use bson::{Bson, Document};
use serde::Serialize;
use std::borrow::Cow;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "camelCase")]
pub enum Label {
    SingleShard,
    MultiShard,
    ScatterGather,
}

impl Label {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Label::SingleShard => "single-shard",
            Label::MultiShard => "multi-shard",
            Label::ScatterGather => "scatter-gather",
        }
    }
}

/// A part of the key space a query reads, as inclusive (min, max) tuples over
/// the key's fields; hashed fields carry hash values.

#[derive(Debug, Clone, PartialEq)]
pub struct Targeting {
    pub label: Label,
    pub(crate) touched: Vec<KeyRange>,
}

/// Whether a collation spec is the simple (binary) one.
pub(crate) fn collation_is_simple(c: Option<&Document>) -> Option<bool> {
    let c = c?;
    if c.is_empty() {
        return None;
    }
    Some(c.get_str("locale").map(|l| l == "simple").unwrap_or(false))
}

/// The query's collation if it has one, else the collection default.
pub(crate) fn effective_simple(query: Option<&Document>, default: Option<&Document>) -> bool {
    collation_is_simple(query).or_else(|| collation_is_simple(default)).unwrap_or(true)
}

/// One equality the fast path sees: a path and its value, borrowed from the filter (owned
/// only for `$expr`'s, which may come from `let`). Borrowed, not cloned: this runs for every
/// sampled write under every candidate key (a tenth of `plan`'s profile when it cloned).
type Equality<'a> = (Cow<'a, str>, Cow<'a, Bson>);

/// Equalities the fast path can see: top-level fields, `$and`, a one-branch `$or`, `$expr` `$eq`.
fn collect_equalities<'a>(filter: &'a Document, let_vars: Option<&Document>, out: &mut Vec<Equality<'a>>) {
    for (k, v) in filter {
        match k.as_str() {
            "$and" => {
                if let Bson::Array(items) = v {
                    for d in items.iter().filter_map(|x| x.as_document()) {
                        collect_equalities(d, let_vars, out);
                    }
                }
            }
            "$or" => {
                if let Bson::Array(items) = v {
                    if items.len() == 1 {
                        if let Some(d) = items[0].as_document() {
                            collect_equalities(d, let_vars, out);
                        }
                    }
                }
            }
            "$expr" => out.extend(expr_equalities(v, let_vars).into_iter().map(|(p, x)| (Cow::Owned(p), Cow::Owned(x)))),
            _ if k.starts_with('$') => {}
            _ => match v {
                Bson::Document(d) if d.keys().next().is_some_and(|x| x.starts_with('$')) => {
                    for (op, arg) in d {
                        match (op.as_str(), arg) {
                            ("$eq", x) => out.push((Cow::Borrowed(k), Cow::Borrowed(x))),
                            ("$in" | "$all", Bson::Array(a)) if a.len() == 1 => out.push((Cow::Borrowed(k), Cow::Borrowed(&a[0]))),
                            _ => {}
                        }
                    }
                }
                Bson::RegularExpression(_) => {}
                other => out.push((Cow::Borrowed(k), Cow::Borrowed(other))),
            },
        }
    }
}

fn valid_key_value(v: &Bson) -> bool {
    match v {
        Bson::Array(_) | Bson::RegularExpression(_) | Bson::Undefined => false,
        Bson::Document(d) => !d.keys().next().is_some_and(|k| k.starts_with('$')),
        _ => true,
    }
}

/// `inner` is `outer` or a path inside it (`a.b` inside `a`), compared without building `outer.`.
pub(crate) fn is_within(inner: &str, outer: &str) -> bool {
    inner.len() >= outer.len() && inner.starts_with(outer) && (inner.len() == outer.len() || inner.as_bytes()[outer.len()] == b'.')
}

/// The value an equality in `eqs` fixes for `path`: exactly one equality on it, or on a parent
/// of it (`{a: {b: 10}}` fixes `a.b`), none on a child; None when absent or conflicting.
fn fixed_value<'e>(eqs: &'e [Equality<'_>], path: &str) -> Option<&'e Bson> {
    let mut related = eqs.iter().filter(|(p, _)| is_within(path, p) || is_within(p, path));
    let (p, v) = related.next()?;
    if related.next().is_some() || p.len() > path.len() {
        return None; // conflicting equalities, or only a child of the field fixed
    }
    let mut cur: &Bson = v;
    if p.len() != path.len() {
        // Equality on a parent object: `{a: {b: 10}}` fixes `a.b`.
        for part in path[p.len() + 1..].split('.') {
            cur = match cur {
                Bson::Document(d) if !d.keys().next().is_some_and(|k| k.starts_with('$')) => d.get(part)?,
                _ => return None,
            };
        }
    }
    valid_key_value(cur).then_some(cur)
}

/// The key's value when the filter fixes every key field by equality (unhashed).
pub(crate) fn extract_key_by_equality(key: &ShardKey, filter: &Document, let_vars: Option<&Document>) -> Option<Vec<Bson>> {
    Equalities::of(filter, let_vars).key_values(key)
}

/// A filter's equalities, gathered once for the questions a write's verdict asks of them
/// (the whole key fixed? `_id` fixed?) without cloning a value; and once per query for every
/// candidate key measured (`metrics::Workload::equalities`): walking each filter again per
/// key was a sixth of the candidates' measuring in `plan`'s profile (cache misses, 100,000
/// filters read again for each of 20-25 keys).
pub(crate) struct Equalities<'a>(Vec<Equality<'a>>);

impl<'a> Equalities<'a> {
    pub(crate) fn of(filter: &'a Document, let_vars: Option<&Document>) -> Self {
        let mut eqs = Vec::new();
        collect_equalities(filter, let_vars, &mut eqs);
        Equalities(eqs)
    }

    /// `extract_key_by_equality(key, ..).is_some()`.
    pub(crate) fn fix_key(&self, key: &ShardKey) -> bool {
        key.fields.iter().all(|f| fixed_value(&self.0, &f.path).is_some())
    }

    /// The same under `{_id: 1}`, without building that key.
    pub(crate) fn fix_id(&self) -> bool {
        fixed_value(&self.0, "_id").is_some()
    }

    /// `extract_key_by_equality`: the key's values when every field is fixed.
    pub(crate) fn key_values(&self, key: &ShardKey) -> Option<Vec<Bson>> {
        key.fields.iter().map(|f| fixed_value(&self.0, &f.path).cloned()).collect()
    }

    /// The server's `isExactIdQuery`: the filter fixes `_id` by equality (other predicates may
    /// stand beside it: `{_id: 1, x: {$gt: 0}}`); with an explicit collation that is not the
    /// collection's default, a collatable `_id` does not count.
    pub(crate) fn exact_id(&self, collation: Option<&Document>, default: Option<&Document>) -> bool {
        let Some(id) = fixed_value(&self.0, "_id") else { return false };
        let explicit_other = collation.is_some_and(|c| !c.is_empty() && Some(c) != default);
        !(explicit_other && is_collatable(id))
    }
}

/// Flatten per-field bounds into key ranges, as the server's `flattenBounds`.
fn flatten(per_field: &[FieldBounds]) -> Vec<KeyRange> {
    const MAX_POINTS: usize = 4096;
    let n = per_field.len();
    let mut ranges: Vec<KeyRange> = vec![KeyRange { min: Vec::with_capacity(n), max: Vec::with_capacity(n) }];
    for (i, fb) in per_field.iter().enumerate() {
        let ints = match fb {
            FieldBounds::Any => {
                for r in &mut ranges {
                    r.min.extend(std::iter::repeat_n(Bson::MinKey, n - i));
                    r.max.extend(std::iter::repeat_n(Bson::MaxKey, n - i));
                }
                return ranges;
            }
            FieldBounds::Set(ints) => ints,
        };
        let all_points = ints.iter().all(|x| x.is_point());
        let mut next = Vec::with_capacity(ranges.len() * ints.len().max(1));
        for r in &ranges {
            for iv in ints {
                let mut lo = r.min.clone();
                let mut hi = r.max.clone();
                lo.push(iv.lo.clone());
                hi.push(iv.hi.clone());
                next.push(KeyRange { min: lo, max: hi });
            }
        }
        ranges = next;
        if ranges.is_empty() {
            return ranges;
        }
        if !all_points || ranges.len() > MAX_POINTS {
            for r in &mut ranges {
                r.min.extend(std::iter::repeat_n(Bson::MinKey, n - i - 1));
                r.max.extend(std::iter::repeat_n(Bson::MaxKey, n - i - 1));
            }
            return ranges;
        }
    }
    ranges
}

fn bounds_ranges(key: &ShardKey, filter: &Document, simple: bool, let_vars: Option<&Document>) -> Vec<KeyRange> {
    if has_text(filter) {
        return flatten(&vec![FieldBounds::Any; key.fields.len()]);
    }
    let per_field: Vec<FieldBounds> = key
        .fields
        .iter()
        .map(|f| {
            let cx = FieldContext { hashed: f.kind == KeyKind::Hashed, simple_collation: simple };
            bounds_for(filter, &f.path, cx, let_vars)
        })
        .collect();
    flatten(&per_field)
}

fn has_text(filter: &Document) -> bool {
    filter.iter().any(|(k, v)| {
        k == "$text"
            || (matches!(k.as_str(), "$and" | "$or" | "$nor")
                && v.as_array().is_some_and(|a| a.iter().filter_map(|x| x.as_document()).any(has_text)))
    })
}

/// Label a filter for a key.
pub fn target_filter(key: &ShardKey, filter: &Document, simple: bool, let_vars: Option<&Document>) -> Targeting {
    target_filter_with(key, filter, simple, let_vars, &Equalities::of(filter, let_vars))
}

/// `target_filter`, with the filter's equalities gathered already.
fn target_filter_with(key: &ShardKey, filter: &Document, simple: bool, let_vars: Option<&Document>, eqs: &Equalities) -> Targeting {
    if let Some(values) = eqs.key_values(key) {
        if simple || !values.iter().any(is_collatable) {
            // The copies taken into key space (hashed in place): one copy of each value.
            let p = key.moved_to_key_space(values);
            return Targeting { label: Label::SingleShard, touched: vec![KeyRange::point(p)] };
        }
        // Under a non-simple collation an equality on a string, object or array bounds
        // nothing (the index is in binary order): the bounds below decide, and a field
        // with no other predicate spans its whole range.
    }
    let touched = bounds_ranges(key, filter, simple, let_vars);
    let label = if touched.len() == 1 && touched[0].is_full() { Label::ScatterGather } else { Label::MultiShard };
    Targeting { label, touched }
}

/// Label a sampled query (read or write) for a key under the collection's default collation.
pub fn target_query(key: &ShardKey, q: &Query, default_collation: Option<&Document>) -> Targeting {
    target_query_with(key, q, default_collation, &Equalities::of(&q.filter, q.let_vars.as_ref()))
}

/// `target_query`, with `eqs` the query's filter's equalities (`Equalities::of`).
pub(crate) fn target_query_with(key: &ShardKey, q: &Query, default_collation: Option<&Document>, eqs: &Equalities) -> Targeting {
    let simple = effective_simple(q.collation.as_ref(), default_collation);
    let t = target_filter_with(key, &q.filter, simple, q.let_vars.as_ref(), eqs);
    if t.label != Label::SingleShard && !q.upsert && eqs.exact_id(q.collation.as_ref(), default_collation) {
        if let Some(UpdateSpec::Replacement(doc)) = &q.update {
            // The new document carries the full shard key (a missing field is null).
            let values: Option<Vec<Bson>> = key
                .fields
                .iter()
                .map(|f| match crate::bsonx::lookup(doc, &f.path) {
                    crate::bsonx::Lookup::Value(v) => Some(v.clone()),
                    crate::bsonx::Lookup::Missing => Some(Bson::Null),
                    crate::bsonx::Lookup::Array => None,
                })
                .collect();
            if let Some(values) = values {
                if simple || !values.iter().any(is_collatable) {
                    let p = key.to_key_space(&values);
                    return Targeting { label: Label::SingleShard, touched: vec![KeyRange::point(p)] };
                }
                // The server targets by the key taken from the document, under the collation.
                let key_doc: Document = key.fields.iter().zip(values).map(|(f, v)| (f.path.clone(), v)).collect();
                return target_filter(key, &key_doc, simple, None);
            }
        }
    }
    t
}
