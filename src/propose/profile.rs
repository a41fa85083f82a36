//! Every field of the pre-scan profiled (`FieldProfile`): presence, cardinality, top value
//! share, type, increasing by nature, use in the sampled filters, change by updates.

use crate::bsonx::{group_bytes, lookup, Lookup};
use crate::model::{geo, Query};
use bson::{Bson, Document};
use std::collections::{BTreeMap, HashMap};

/// A field in at least this share of the pre-scanned documents counts as present in them.
pub(crate) const MIN_PRESENCE: f64 = 0.9;
/// Fields profiled at most (the first seen, nested included).
const MAX_FIELDS: usize = 200;
/// Nesting depth walked.
const MAX_DEPTH: usize = 6;

/// What the pre-scan says about one field (nested fields by their dotted path).
#[derive(Debug, Clone, Default)]
pub(crate) struct FieldProfile {
    pub(crate) path: String,
    /// Documents holding it (not as an array).
    pub(crate) present: usize,
    pub(crate) arrays: usize,
    pub(crate) distinct: usize,
    /// Share of the present documents holding the most common value.
    pub(crate) top_share: f64,
    /// The type most values hold ("string", "date", "objectId", "number", ...).
    pub(crate) main_type: ValueType,
    /// Dates, timestamps and ObjectIds only grow: new documents carry the newest.
    pub(crate) increasing_by_nature: bool,
    /// Sampled filters naming it: by equality (or `$in`), by range.
    pub(crate) eq_uses: usize,
    pub(crate) range_uses: usize,
    /// Holds GeoJSON or is read as a location (`$near`, `$geoWithin`): never a key field.
    pub(crate) geo: bool,
    /// Chao1 over the pre-scan's counts (values seen once, twice): its distinct values in
    /// the whole collection, which a pre-scan of 1,000 cannot count (2,000 accounts look
    /// unique there).
    pub(crate) estimated_distinct: f64,
    /// Distinct values the sampled filters name (equality, `$in`, range bounds): a lower bound
    /// of its cardinality that the pre-scan (the first documents in insertion order) can miss
    /// when documents were inserted grouped by another field (stock loaded item by item: the
    /// first 1,000 hold 20 items of every store).
    pub(crate) named_distinct: usize,
}

impl FieldProfile {
    pub(super) fn uses(&self) -> usize {
        self.eq_uses + self.range_uses
    }

    /// Its distinct values as far as the evidence shows: the pre-scan's or the filters', the
    /// larger (what orders fields coarse to fine).
    pub(super) fn values_at_least(&self) -> usize {
        self.distinct.max(self.named_distinct)
    }

    /// `estimated_distinct`, at least the values the filters name.
    pub(super) fn estimated_at_least(&self) -> f64 {
        self.estimated_distinct.max(self.named_distinct as f64)
    }

    /// In words, for `proposedBecause`.
    pub(super) fn describe(&self, n: usize) -> String {
        let what = format!(
            "{} distinct {}{} value{}, top value {:.0}%",
            self.distinct,
            if self.increasing_by_nature { "increasing " } else { "" },
            self.main_type.as_str(),
            if self.distinct == 1 { "" } else { "s" },
            self.top_share * 100.0
        );
        let mut s = if n == 0 {
            // No documents: the profile is of the values the filters name.
            format!("{}: in the sampled filters, {what}", self.path)
        } else {
            format!("{}: in {:.0}% of {n} pre-scanned documents, {what}", self.path, self.present as f64 * 100.0 / n as f64)
        };
        if self.uses() > 0 {
            s.push_str(&format!("; {} sampled filters by equality, {} by range", self.eq_uses, self.range_uses));
        }
        s
    }
}

/// A field's values' type, as the proposals weigh it (named as `$type` names it). Declared
/// in the alphabetical order of those names: a tie for the most frequent type goes to the
/// last of them, as it did when the names were strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) enum ValueType {
    BinData,
    Bool,
    Date,
    #[default]
    Missing,
    Null,
    Number,
    Object,
    ObjectId,
    Other,
    String,
    Timestamp,
}

impl ValueType {
    fn of(v: &Bson) -> ValueType {
        match v {
            Bson::String(_) => ValueType::String,
            Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_) => ValueType::Number,
            Bson::DateTime(_) => ValueType::Date,
            Bson::Timestamp(_) => ValueType::Timestamp,
            Bson::ObjectId(_) => ValueType::ObjectId,
            Bson::Boolean(_) => ValueType::Bool,
            Bson::Null => ValueType::Null,
            Bson::Binary(_) => ValueType::BinData,
            Bson::Document(_) => ValueType::Object,
            _ => ValueType::Other,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            ValueType::String => "string",
            ValueType::Number => "number",
            ValueType::Date => "date",
            ValueType::Timestamp => "timestamp",
            ValueType::ObjectId => "objectId",
            ValueType::Bool => "bool",
            ValueType::Null => "null",
            ValueType::BinData => "binData",
            ValueType::Object => "object",
            ValueType::Other => "other",
            ValueType::Missing => "missing",
        }
    }

    /// Values that grow with time by their nature.
    fn increases_by_nature(self) -> bool {
        matches!(self, ValueType::Date | ValueType::Timestamp | ValueType::ObjectId)
    }
}

/// Every scalar field path of the pre-scan (nested documents walked), in first-seen order.
pub(crate) fn field_paths(docs: &[Document]) -> Vec<String> {
    fn walk(d: &Document, prefix: &str, depth: usize, out: &mut Vec<String>) {
        for (k, v) in d {
            if out.len() >= MAX_FIELDS {
                return;
            }
            let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
            match v {
                Bson::Document(sub) if depth < MAX_DEPTH && !sub.keys().any(|x| x.starts_with('$')) && !geo::is_geojson(sub) => {
                    walk(sub, &path, depth + 1, out)
                }
                Bson::Array(_) => {}
                _ => {
                    if !out.contains(&path) {
                        out.push(path);
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for d in docs {
        walk(d, "", 0, &mut out);
    }
    out
}

/// Paths a filter names, with whether each is bounded by a range (`$gt`…) rather than equality.
/// Each field predicate of a filter, `$and`/`$or`/`$nor` branches included: (path, its condition).
fn for_each_predicate<'a>(filter: &'a Document, f: &mut dyn FnMut(&'a str, &'a Bson)) {
    for (k, v) in filter {
        if k == "$and" || k == "$or" || k == "$nor" {
            if let Bson::Array(items) = v {
                for d in items.iter().filter_map(|x| x.as_document()) {
                    for_each_predicate(d, f);
                }
            }
        } else if !k.starts_with('$') {
            f(k, v);
        }
    }
}

pub(super) fn filter_paths<'a>(filter: &'a Document, out: &mut Vec<(&'a str, bool)>) {
    for_each_predicate(filter, &mut |path, v| {
        // A geo condition is neither: it bounds nothing on a shard key's index.
        if geo::is_geo_predicate(v) {
            return;
        }
        let ops = v.as_document().filter(|d| d.keys().next().is_some_and(|o| o.starts_with('$')));
        let Some(ops) = ops else {
            out.push((path, false));
            return;
        };
        let has = |names: &[&str]| ops.keys().any(|o| names.contains(&o.as_str()));
        if has(&["$eq", "$in"]) {
            out.push((path, false));
        } else if has(&["$gt", "$gte", "$lt", "$lte"]) {
            out.push((path, true));
        }
        // Anything else ($ne, $nin, $exists, $type, $regex, $not, ...) fixes no value and
        // bounds no range: no key targets the operation by it.
    });
}

/// Presence, distinct values, top share, main type and increasing-by-nature of a field from its values.
fn profile_values<'a>(f: &mut FieldProfile, values: impl Iterator<Item = &'a Bson>) {
    let mut counts: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut types: BTreeMap<ValueType, usize> = BTreeMap::new();
    for v in values {
        f.present += 1;
        let mut b = Vec::new();
        group_bytes(v, &mut b);
        *counts.entry(b).or_default() += 1;
        *types.entry(ValueType::of(v)).or_default() += 1;
        f.geo |= v.as_document().is_some_and(geo::is_geojson);
    }
    f.distinct = counts.len();
    let (f1, f2) = counts.values().fold((0.0, 0.0), |(a, b), &c| (a + (c == 1) as u8 as f64, b + (c == 2) as u8 as f64));
    // Chao1, bias-corrected when no value was seen twice.
    f.estimated_distinct = f.distinct as f64 + if f2 > 0.0 { f1 * f1 / (2.0 * f2) } else { f1 * (f1 - 1.0) / 2.0 };
    f.top_share = counts.values().copied().max().unwrap_or(0) as f64 / f.present.max(1) as f64;
    f.main_type = types.iter().max_by_key(|x| x.1).map(|x| *x.0).unwrap_or_default();
    let main = types.get(&f.main_type).copied().unwrap_or(0);
    f.increasing_by_nature = f.main_type.increases_by_nature() && main as f64 >= MIN_PRESENCE * f.present.max(1) as f64;
}

/// The values each filter path names: equality values, `$in` elements and range bounds
/// (borrowed: a path and a value copied for every predicate of every query were most of
/// this profile's time in `plan`'s).
fn filter_values<'a>(queries: &[&'a Query]) -> BTreeMap<&'a str, Vec<&'a Bson>> {
    let mut out: BTreeMap<&str, Vec<&Bson>> = BTreeMap::new();
    for q in queries {
        for_each_predicate(&q.filter, &mut |path, v| {
            let e = out.entry(path).or_default();
            match v.as_document().filter(|d| d.keys().next().is_some_and(|o| o.starts_with('$'))) {
                Some(ops) => {
                    for (op, x) in ops {
                        match (op.as_str(), x) {
                            ("$in", Bson::Array(xs)) => e.extend(xs.iter()),
                            ("$eq" | "$gt" | "$gte" | "$lt" | "$lte", x) => e.push(x),
                            _ => {}
                        }
                    }
                }
                None => e.push(v),
            }
        });
    }
    out
}

/// Profile every field of the pre-scan and count its uses in the filters.
pub(crate) fn profile_fields(prescan: &[Document], queries: &[&Query]) -> Vec<FieldProfile> {
    let mut uses: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let located: std::collections::BTreeSet<&str> = queries.iter().flat_map(|q| geo::geo_paths(&q.filter)).collect();
    for q in queries {
        let mut paths = Vec::new();
        filter_paths(&q.filter, &mut paths);
        paths.sort();
        paths.dedup();
        for (p, range) in paths {
            let e = uses.entry(p).or_default();
            if range {
                e.1 += 1;
            } else {
                e.0 += 1;
            }
        }
    }
    let mut paths = field_paths(prescan);
    // Filter fields the pre-scan never showed (nested under arrays, rare) still get a profile.
    for p in uses.keys().copied().chain(located.iter().copied()) {
        if !paths.iter().any(|x| x == p) {
            paths.push(p.to_string());
        }
    }
    // Without documents, the values the filters name stand in for the profile; with them,
    // how many they name bounds each field's cardinality from below.
    let named = filter_values(queries);
    paths
        .into_iter()
        .map(|path| {
            let mut f = FieldProfile { path: path.clone(), ..Default::default() };
            if let Some(values) = named.get(path.as_str()) {
                profile_values(&mut f, values.iter().copied());
                f.named_distinct = f.distinct;
                if !prescan.is_empty() {
                    f = FieldProfile { path: path.clone(), named_distinct: f.named_distinct, ..Default::default() };
                }
            }
            let mut values = Vec::new();
            for d in prescan {
                match lookup(d, &path) {
                    Lookup::Value(v) => values.push(v),
                    Lookup::Array => f.arrays += 1,
                    Lookup::Missing => {}
                }
            }
            if !prescan.is_empty() {
                profile_values(&mut f, values.into_iter());
                // An ObjectId other than `_id` is most often a reference (`customerId`): it carries
                // when the referenced document was created, not the insert. Measured not to follow
                // the `_id`s' creation times, it does not grow with inserts.
                if f.increasing_by_nature && f.main_type == ValueType::ObjectId && path != "_id" {
                    f.increasing_by_nature = !crate::util::stats::measured_not_to_follow(&creation_time_pairs(prescan, &path));
                }
            }
            let (e, r) = uses.get(path.as_str()).copied().unwrap_or((0, 0));
            f.geo |= located.contains(path.as_str());
            f.eq_uses = e;
            f.range_uses = r;
            f
        })
        .collect()
}

/// (the time a field's value carries, its document's ObjectId `_id` creation time), in
/// seconds, over the pre-scanned documents holding both.
pub(super) fn creation_time_pairs(prescan: &[Document], path: &str) -> Vec<(f64, f64)> {
    prescan
        .iter()
        .filter_map(|d| {
            let Some(Bson::ObjectId(o)) = d.get("_id") else { return None };
            let Lookup::Value(v) = lookup(d, path) else { return None };
            Some((crate::bsonx::time_seconds(v)?, o.timestamp().timestamp_millis() as f64 / 1000.0))
        })
        .collect()
}

/// The fields sampled updates change with operators (`$inc`, `$set`, …; `$setOnInsert` aside).
pub(super) fn changed_fields(queries: &[&Query]) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for q in queries {
        if let Some(crate::model::UpdateSpec::Modifiers(m)) = &q.update {
            for (_, fields) in m.iter().filter(|(op, _)| op.as_str() != "$setOnInsert") {
                out.extend(fields.as_document().into_iter().flat_map(|d| d.keys().cloned()));
            }
        }
    }
    out
}
