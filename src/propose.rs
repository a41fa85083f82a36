//! Candidate proposal when the user names no key: every field of the pre-scan
//! (nested included) is profiled (`FieldProfile`: presence, cardinality, top
//! value share, type, increasing by nature, use in filters), then `propose` puts
//! forward what a DBA would: filtered fields, hashed `_id` and a hashed
//! high-cardinality field, and compounds of a grouping field with the time field
//! or `_id`; live, the existing indexes too.

use crate::bsonx::{group_bytes, lookup, Lookup};
use crate::model::{geo, KeyField, KeyKind, Query, ShardKey};
use bson::{Bson, Document};
use std::collections::{BTreeMap, HashMap};

pub(crate) mod left_out;
pub(crate) mod residency;
pub(crate) mod type_mix;

/// A candidate and where it comes from.
#[derive(Debug, Clone)]
pub(crate) struct Proposal {
    pub(crate) key: ShardKey,
    pub(crate) origin: Origin,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The user named it (`--key`, a policy's `key`).
    Named,
    /// The collection is already sharded on it.
    CurrentShardKey,
    /// Proposed, and why.
    Proposed(String),
    /// A filtered field the other proposals leave out for a few bad documents: measured so
    /// the report can say how it ranks once they are fixed (`left_out`).
    LeftOut(Box<left_out::LeftOut>),
}

impl Origin {
    /// The report's `proposedBecause`.
    pub(crate) fn proposed_because(&self) -> Option<String> {
        match self {
            Origin::Named => None,
            Origin::CurrentShardKey => Some("current shard key".into()),
            Origin::Proposed(why) => Some(why.clone()),
            Origin::LeftOut(l) => Some(l.because()),
        }
    }
}

impl Proposal {
    pub(crate) fn named(key: ShardKey) -> Proposal {
        Proposal { key, origin: Origin::Named }
    }
}

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
}

impl FieldProfile {
    fn uses(&self) -> usize {
        self.eq_uses + self.range_uses
    }

    /// In words, for `proposedBecause`.
    fn describe(&self, n: usize) -> String {
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

const MIN_PRESENCE: f64 = 0.9;
/// At most this many proposals (besides existing indexes and the current key). Each is
/// measured on the whole sample (its key values, chunks, every sampled operation's targets),
/// so the run's time grows with the count: 24 holds the shapes below for the six most
/// filtered fields with the compounds before them (see `MAX_FIELDS_PROPOSED`).
pub(crate) const MAX_PROPOSALS: usize = 24;
/// The most filtered fields each proposed in every shape (ranged, hashed, then `_id`, then
/// the field named beside it): an operation naming a seventh field is rare enough in a
/// workload that a key on it serves few of its operations.
const MAX_FIELDS_PROPOSED: usize = 6;
/// Fields profiled at most (the first seen, nested included).
const MAX_FIELDS: usize = 200;
/// Nesting depth walked.
const MAX_DEPTH: usize = 6;

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

fn filter_paths(filter: &Document, out: &mut Vec<(String, bool)>) {
    for_each_predicate(filter, &mut |path, v| {
        // A geo condition is neither: it bounds nothing on a shard key's index.
        if geo::is_geo_predicate(v) {
            return;
        }
        let ops = v.as_document().filter(|d| d.keys().next().is_some_and(|o| o.starts_with('$')));
        let Some(ops) = ops else {
            out.push((path.to_string(), false));
            return;
        };
        let has = |names: &[&str]| ops.keys().any(|o| names.contains(&o.as_str()));
        if has(&["$eq", "$in"]) {
            out.push((path.to_string(), false));
        } else if has(&["$gt", "$gte", "$lt", "$lte"]) {
            out.push((path.to_string(), true));
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

/// The values each filter path names: equality values, `$in` elements and range bounds.
fn filter_values(queries: &[&Query]) -> BTreeMap<String, Vec<Bson>> {
    let mut out: BTreeMap<String, Vec<Bson>> = BTreeMap::new();
    for q in queries {
        for_each_predicate(&q.filter, &mut |path, v| {
            let e = out.entry(path.to_string()).or_default();
            match v.as_document().filter(|d| d.keys().next().is_some_and(|o| o.starts_with('$'))) {
                Some(ops) => {
                    for (op, x) in ops {
                        match (op.as_str(), x) {
                            ("$in", Bson::Array(xs)) => e.extend(xs.iter().cloned()),
                            ("$eq" | "$gt" | "$gte" | "$lt" | "$lte", x) => e.push(x.clone()),
                            _ => {}
                        }
                    }
                }
                None => e.push(v.clone()),
            }
        });
    }
    out
}

/// Profile every field of the pre-scan and count its uses in the filters.
pub(crate) fn profile_fields(prescan: &[Document], queries: &[&Query]) -> Vec<FieldProfile> {
    let mut uses: BTreeMap<String, (usize, usize)> = BTreeMap::new();
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
    for p in uses.keys().map(String::as_str).chain(located.iter().copied()) {
        if !paths.iter().any(|x| x == p) {
            paths.push(p.to_string());
        }
    }
    // Without documents, the values the filters name stand in for the profile.
    let named = if prescan.is_empty() { filter_values(queries) } else { BTreeMap::new() };
    paths
        .into_iter()
        .map(|path| {
            let mut f = FieldProfile { path: path.clone(), ..Default::default() };
            if let Some(values) = named.get(&path) {
                profile_values(&mut f, values.iter());
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
            }
            let (e, r) = uses.get(&path).copied().unwrap_or((0, 0));
            f.geo |= located.contains(path.as_str());
            f.eq_uses = e;
            f.range_uses = r;
            f
        })
        .collect()
}

/// The fields sampled updates change with operators (`$inc`, `$set`, …; `$setOnInsert` aside).
fn changed_fields(queries: &[&Query]) -> std::collections::BTreeSet<String> {
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

fn key(spec: &[(&str, KeyKind)]) -> Option<ShardKey> {
    ShardKey::new(spec.iter().map(|(p, k)| crate::model::KeyField { path: p.to_string(), kind: *k }).collect()).ok()
}

/// The candidates a DBA would put on the table: the fields the filters use, hashed
/// `_id` and a hashed high-cardinality field, high-cardinality fields when there
/// are no queries, and compounds of a grouping field followed by the time field or
/// by `_id` (`{tenant: 1, ts: 1}`, `{projectId: 1, _id: 1}`); at most `MAX_PROPOSALS`.
pub(crate) fn propose(prescan: &[Document], queries: &[&Query]) -> Vec<Proposal> {
    propose_in(prescan, queries, None)
}

/// A value holding this many documents or more on average (estimated over the collection)
/// makes a grouping field, not an identifier.
const GROUP_DOCS_PER_VALUE: f64 = 5.0;

/// `propose`, knowing how many documents the pre-scan is drawn from (`total_docs`): a field
/// whose values repeat in the pre-scan enough that each holds `GROUP_DOCS_PER_VALUE`
/// documents or more over them is a grouping field, however unique the pre-scan makes it look.
pub(crate) fn propose_in(prescan: &[Document], queries: &[&Query], total_docs: Option<u64>) -> Vec<Proposal> {
    let n = prescan.len();
    let fields = profile_fields(prescan, queries);
    // Without documents presence is unknown: every filtered field is usable.
    let usable = |f: &&FieldProfile| !f.geo && f.arrays == 0 && (n == 0 || f.present as f64 >= MIN_PRESENCE * n as f64);
    // Dates, timestamps and ObjectIds repeat within a second, never as groups.
    let groups_over_all = |f: &FieldProfile| {
        !f.increasing_by_nature
            && total_docs.is_some_and(|t| {
                t as f64 > 2.0 * n as f64 && t as f64 * f.present as f64 / n.max(1) as f64 >= GROUP_DOCS_PER_VALUE * f.estimated_distinct
            })
    };
    // High cardinality in the pre-scan: most documents hold their own value, none is common,
    // and the collection's size does not show its values as groups.
    let high = |f: &FieldProfile| {
        f.distinct as f64 >= 0.5 * f.present.max(1) as f64 && f.distinct > 1 && f.top_share <= 0.05 && !groups_over_all(f)
    };
    let mut out: Vec<Proposal> = Vec::new();
    let mut push = |key: Option<ShardKey>, why: String| {
        if let Some(key) = key {
            if out.len() < MAX_PROPOSALS && !out.iter().any(|p| p.key == key) {
                out.push(Proposal { key, origin: Origin::Proposed(why) });
            }
        }
    };
    push(key(&[("_id", KeyKind::Hashed)]), "hashed _id: spreads data and inserts evenly; only queries by _id target one shard".into());
    let mut used: Vec<&FieldProfile> = fields.iter().filter(|f| f.uses() > 0).filter(usable).collect();
    used.sort_by(|a, b| b.uses().cmp(&a.uses()).then(a.path.cmp(&b.path)));
    // The time field: increasing by nature, high cardinality (the most used, else the first seen).
    let time = fields
        .iter()
        .filter(usable)
        .filter(|f| f.increasing_by_nature && f.path != "_id" && high(f))
        .max_by_key(|f| (f.uses(), std::cmp::Reverse(f.path.clone())));
    let id_is_oid = fields.iter().find(|f| f.path == "_id").is_some_and(|f| f.main_type == ValueType::ObjectId);
    // Grouping fields: filtered by equality and repeating (a tenant, a device), or with no
    // queries, moderately many values each held by several documents.
    let mut groups: Vec<&FieldProfile> = if used.is_empty() {
        fields
            .iter()
            .filter(usable)
            .filter(|f| f.path != "_id" && !f.increasing_by_nature && f.distinct >= 10 && !high(f) && f.top_share < 0.5)
            .collect()
    } else {
        used.iter().copied().filter(|f| f.eq_uses > 0 && f.path != "_id" && !f.increasing_by_nature && !high(f)).collect()
    };
    if used.is_empty() {
        // Identifiers (strings, ObjectIds, binary) name tenants and devices; small numbers are
        // more often parts of a date or codes.
        let ident = |f: &FieldProfile| matches!(f.main_type, ValueType::String | ValueType::ObjectId | ValueType::BinData);
        groups.sort_by(|a, b| ident(b).cmp(&ident(a)).then(b.distinct.cmp(&a.distinct)).then(a.path.cmp(&b.path)));
    }
    groups.truncate(2);

    let uses_words = |f: &FieldProfile| f.describe(n);
    for f in used.iter().take(4) {
        push(key(&[(&f.path, KeyKind::Range)]), uses_words(f));
    }
    // An ObjectId `_id` that orders documents like the time field stands for it: the same
    // insert pattern, and unique, so every group stays splittable; `{g: 1, t: 1}` is
    // then not proposed beside `{g: 1, _id: 1}`.
    let id_follows_time = id_is_oid && time.is_some_and(|t| follows_creation_time(prescan, &t.path));
    // Pairs of fields filtered by equality in the same query: a grouping field and the
    // high-cardinality field its queries name beside it (`{region: 1, customerId: 1}`).
    let mut together: BTreeMap<(String, String), usize> = BTreeMap::new();
    // An entity filtered by equality beside a time range (`{deviceId: d, ts: {$gte, $lt}}`):
    // the entity-then-time key serves it, whatever the entity's cardinality.
    let mut entity_time: BTreeMap<(String, String), usize> = BTreeMap::new();
    // Every set of two to four usable fields one filter fixes by equality, sorted by path:
    // a key of all of them sends each such query to one shard (`{region: 1, district: 1}`).
    let mut eq_sets: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for q in queries {
        let mut paths = Vec::new();
        filter_paths(&q.filter, &mut paths);
        for (g, _) in paths.iter().filter(|p| !p.1) {
            for (t, _) in paths.iter().filter(|p| p.1) {
                if fields.iter().any(|f| &f.path == t && f.increasing_by_nature) && g != "_id" {
                    *entity_time.entry((g.clone(), t.clone())).or_default() += 1;
                }
            }
        }
        let eq: Vec<String> = paths.into_iter().filter(|p| !p.1).map(|p| p.0).collect();
        let mut set: Vec<String> =
            eq.iter().filter(|p| *p != "_id" && fields.iter().any(|f| &&f.path == p && usable(&f))).cloned().collect();
        set.sort();
        set.dedup();
        if (2..=4).contains(&set.len()) {
            *eq_sets.entry(set).or_default() += 1;
        }
        for a in &eq {
            for b in &eq {
                if a != b {
                    *together.entry((a.clone(), b.clone())).or_default() += 1;
                }
            }
        }
    }
    let mut sets: Vec<(&Vec<String>, &usize)> = eq_sets.iter().collect();
    sets.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (set, c) in sets.into_iter().take(2) {
        // Coarse to fine: the field with the fewest values first, as a region before its districts.
        let mut ordered: Vec<&FieldProfile> = set.iter().filter_map(|p| fields.iter().find(|f| &f.path == p)).collect();
        ordered.sort_by(|a, b| a.distinct.cmp(&b.distinct).then(a.path.cmp(&b.path)));
        let spec: Vec<(&str, KeyKind)> = ordered.iter().map(|f| (f.path.as_str(), KeyKind::Range)).collect();
        let names: Vec<&str> = ordered.iter().map(|f| f.path.as_str()).collect();
        push(
            key(&spec),
            format!(
                "{c} sampled filters fix {} together by equality: a key of all of them sends each to one shard (fewest values first: {})",
                names.join(", "),
                ordered.iter().map(|f| format!("{} {}", f.path, f.distinct)).collect::<Vec<_>>().join(", ")
            ),
        );
    }
    let mut pairs: Vec<(&(String, String), &usize)> = entity_time.iter().collect();
    pairs.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for ((g, t), c) in pairs.into_iter().take(2) {
        let Some(gp) = fields.iter().find(|f| &f.path == g).filter(|f| usable(f)) else { continue };
        if id_follows_time && time.is_some_and(|x| &x.path == t) {
            push(
                key(&[(g, KeyKind::Range), ("_id", KeyKind::Range)]),
                format!("{c} sampled filters name {g} by equality beside a range on {t}; the ObjectId _id orders each {g} by creation time as {t} does, and is unique ({})", uses_words(gp)),
            );
        } else {
            push(
                key(&[(g, KeyKind::Range), (t, KeyKind::Range)]),
                format!("{c} sampled filters name {g} by equality beside a range on {t}: each {g}'s range reads and inserts stay on its own chunks ({})", uses_words(gp)),
            );
        }
    }
    for g in &groups {
        let partner = together
            .iter()
            .filter(|((a, b), _)| a == &g.path && fields.iter().any(|f| &f.path == b && usable(&f) && high(f) && !f.increasing_by_nature))
            .max_by_key(|(_, c)| **c);
        if let Some(((_, h), c)) = partner {
            push(
                key(&[(&g.path, KeyKind::Range), (h, KeyKind::Range)]),
                format!(
                    "{c} sampled filters name {} and {h} together by equality; {h} splits each {} group ({})",
                    g.path,
                    g.path,
                    uses_words(g)
                ),
            );
        }
        if let Some(t) = time.filter(|_| !id_follows_time) {
            push(
                key(&[(&g.path, KeyKind::Range), (&t.path, KeyKind::Range)]),
                format!(
                    "{} groups documents and {} grows with time: each group's inserts go to its own top chunk ({}; {})",
                    g.path,
                    t.path,
                    uses_words(g),
                    uses_words(t)
                ),
            );
        }
        if id_is_oid || time.is_none() {
            let stands_for = match time.filter(|_| id_follows_time) {
                Some(t) => format!("; the ObjectId _id orders each group by creation time as {} does, and is unique", t.path),
                None => String::new(),
            };
            push(
                key(&[(&g.path, KeyKind::Range), ("_id", KeyKind::Range)]),
                format!("{} groups documents; _id after it splits a large group into chunks{stands_for} ({})", g.path, uses_words(g)),
            );
        }
    }
    // A hashed high-cardinality field: even data and inserts, targeted equality. Not one the
    // updates change (a counter): each change would move its document to another shard.
    let changed = changed_fields(queries);
    if let Some(h) = used
        .iter()
        .chain(fields.iter().filter(usable).collect::<Vec<_>>().iter())
        .find(|f| f.path != "_id" && high(f) && !f.increasing_by_nature && f.range_uses == 0 && !changed.contains(&f.path))
    {
        push(
            key(&[(&h.path, KeyKind::Hashed)]),
            format!("hashed {}: even data and inserts, and its equality filters still reach one shard ({})", h.path, uses_words(h)),
        );
    }
    // Every field the filters name, as an expert tries it (issue 49): alone ranged, hashed, and
    // followed by `_id` (unique, so each of its values' groups stays splittable), and by the
    // field most often named beside it by equality with more values, when there is one. The
    // proposals above come first (their compounds are the likelier answers); these make the
    // answer independent of which of them were thought of.
    for f in used.iter().take(MAX_FIELDS_PROPOSED) {
        let p = f.path.as_str();
        push(key(&[(p, KeyKind::Range)]), uses_words(f));
        // Hashed serves equality only: a field read by ranges alone is not tried hashed.
        if p != "_id" && f.eq_uses > 0 {
            push(
                key(&[(p, KeyKind::Hashed)]),
                format!("hashed {p}: even data and inserts; its equality filters reach one shard ({})", uses_words(f)),
            );
        }
        // `_id` after a field whose values repeat; an identifier (high cardinality) needs none.
        if p != "_id" && !high(f) {
            push(
                key(&[(p, KeyKind::Range), ("_id", KeyKind::Range)]),
                format!("{p} then _id: _id is unique, so a large {p} value still splits into chunks ({})", uses_words(f)),
            );
        }
        let beside = together
            .iter()
            .filter(|((a, b), _)| a == p && b != "_id")
            .filter_map(|((_, b), c)| fields.iter().find(|g| &g.path == b && usable(g) && g.distinct > f.distinct).map(|g| (g, *c)))
            .max_by(|x, y| x.1.cmp(&y.1).then(y.0.path.cmp(&x.0.path)));
        if let Some((g, c)) = beside {
            push(
                key(&[(p, KeyKind::Range), (&g.path, KeyKind::Range)]),
                format!(
                    "{c} sampled filters name {p} and {} together by equality; {} has more values and splits {p}'s ({})",
                    g.path,
                    g.path,
                    uses_words(f)
                ),
            );
        }
    }
    // With no filters to go by: the high-cardinality fields that do not grow with time, and the time field.
    if used.is_empty() {
        let mut hc: Vec<&FieldProfile> =
            fields.iter().filter(usable).filter(|f| f.path != "_id" && high(f) && !f.increasing_by_nature).collect();
        hc.sort_by(|a, b| b.distinct.cmp(&a.distinct).then(a.path.cmp(&b.path)));
        for f in hc.iter().take(3) {
            push(key(&[(&f.path, KeyKind::Range)]), uses_words(f));
        }
        if let Some(t) = time {
            push(key(&[(&t.path, KeyKind::Range)]), uses_words(t));
        }
    }
    out
}

/// Does the field's value order the pre-scanned documents as their ObjectId `_id`s'
/// creation times do (Pearson correlation of the two at least 0.9)?
fn follows_creation_time(prescan: &[Document], path: &str) -> bool {
    let pairs: Vec<(f64, f64)> = prescan
        .iter()
        .filter_map(|d| {
            let Some(Bson::ObjectId(o)) = d.get("_id") else { return None };
            let t = match lookup(d, path) {
                Lookup::Value(Bson::DateTime(t)) => t.timestamp_millis() as f64 / 1000.0,
                Lookup::Value(Bson::Timestamp(t)) => t.time as f64,
                Lookup::Value(Bson::ObjectId(x)) => x.timestamp().timestamp_millis() as f64 / 1000.0,
                _ => return None,
            };
            Some((t, o.timestamp().timestamp_millis() as f64 / 1000.0))
        })
        .collect();
    if pairs.len() < 10 {
        return false;
    }
    crate::util::stats::pearson(pairs.len(), |i| pairs[i].0, |i| pairs[i].1).is_some_and(|r| r >= 0.9)
}

/// Candidates from a collection's existing indexes: each index key that is a valid shard
/// key, and every prefix of each unique index (the only keys that keep it unique:
/// `rules::unique_index`).
pub(crate) fn from_indexes(indexes: &[crate::model::index::IndexSpec]) -> Vec<Proposal> {
    let mut out: Vec<Proposal> = indexes
        .iter()
        .filter(|ix| ix.name != "_id_")
        .filter_map(|ix| ix.as_shard_key().map(|k| Proposal { key: k, origin: Origin::Proposed(format!("existing index {}", ix.name)) }))
        .collect();
    for ix in indexes.iter().filter(|ix| ix.unique && ix.key.keys().next().is_some_and(|k| k != "_id")) {
        let fields: Vec<&String> = ix.key.keys().collect();
        for n in 1..fields.len() {
            let key = ShardKey::new(fields[..n].iter().map(|p| KeyField { path: (*p).clone(), kind: KeyKind::Range }).collect());
            if let Ok(key) = key {
                out.push(Proposal {
                    key,
                    origin: Origin::Proposed(format!("a prefix of unique index {}: keys its fields start with keep it unique", ix.name)),
                });
            }
        }
        // Hashed on its first field: the field names are a prefix, which is what keeps it
        // unique (`rules::unique_index`: mongodb/mongo 49802bc src/mongo/s/shard_key_pattern.cpp).
        if let Some(first) = fields.first().filter(|f| f.as_str() != "_id") {
            out.push(Proposal {
                key: ShardKey::single(first, KeyKind::Hashed),
                origin: Origin::Proposed(format!("hashed {first}: unique index {} starts with it, so it stays unique", ix.name)),
            });
        }
    }
    merge([out])
}

/// Every proposal for a collection: from the filters and the pre-scan (`propose`) and its
/// indexes (`from_indexes`); a time-series collection gets only the keys its rules allow
/// (`for_time_series`).
pub(crate) fn for_collection(
    prescan: &[Document],
    queries: &[&Query],
    indexes: &[crate::model::index::IndexSpec],
    options: Option<&crate::model::collection::CollectionOptions>,
    total_docs: Option<u64>,
) -> Vec<Proposal> {
    match options.and_then(|o| o.time_series.as_ref()) {
        Some(ts) => for_time_series(ts, prescan),
        None => {
            // A filtered field left out for a few bad documents is measured too, and said.
            let fields = profile_fields(prescan, queries);
            let left = left_out::proposals(&left_out::find(prescan, &fields), &fields);
            merge([propose_in(prescan, queries, total_docs), left, from_indexes(indexes)])
        }
    }
}

/// An empty collection: what the workload and the schema can say. The query filters' and
/// the indexes' proposals, each field the validator requires, and hashed `_id` (the manual's
/// advice for an empty collection: a hashed key is pre-split on every shard at once).
pub(crate) fn for_empty_collection(
    queries: &[&Query],
    indexes: &[crate::model::index::IndexSpec],
    options: Option<&crate::model::collection::CollectionOptions>,
) -> Vec<Proposal> {
    let required: Vec<Proposal> = options
        .map(|o| o.validator_required.iter().filter(|f| f.as_str() != "_id").collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|f| {
            let key = ShardKey::new(vec![KeyField { path: f.clone(), kind: KeyKind::Range }]).ok()?;
            Some(Proposal { key, origin: Origin::Proposed(format!("{f}: required by the collection's validator")) })
        })
        .collect();
    let hashed_id = ShardKey::new(vec![KeyField { path: "_id".into(), kind: KeyKind::Hashed }]).ok().map(|key| Proposal {
        key,
        origin: Origin::Proposed("hashed _id: an empty collection sharded on a hashed key starts with chunks on every shard".into()),
    });
    merge([propose(&[], queries), from_indexes(indexes), required, hashed_id.into_iter().collect()])
}

/// A time-series key holds only the metaField (or its subfields) and the timeField, ranged
/// and last (`rules::time_series`): the metaField then the timeField (the manual's example),
/// each subfield of the metaField the pre-scan shows in most documents then the timeField,
/// the metaField hashed, and the timeField alone only without a metaField.
pub(crate) fn for_time_series(ts: &crate::model::collection::TimeSeries, prescan: &[Document]) -> Vec<Proposal> {
    let time = ts.time_field.as_str();
    let p = |spec: &[(&str, KeyKind)], why: String| key(spec).map(|key| Proposal { key, origin: Origin::Proposed(why) });
    let Some(meta) = ts.meta_field.as_deref() else {
        return p(
            &[(time, KeyKind::Range)],
            format!("time-series collection without a metaField: the timeField {time} is the only key allowed"),
        )
        .into_iter()
        .collect();
    };
    let mut out: Vec<Proposal> = Vec::new();
    out.extend(p(
        &[(meta, KeyKind::Range), (time, KeyKind::Range)],
        format!("time-series collection: the metaField {meta} then the timeField {time}, as the manual shards one"),
    ));
    let n = prescan.len().max(1);
    for f in profile_fields(prescan, &[]).iter().filter(|f| f.path.strip_prefix(meta).is_some_and(|r| r.starts_with('.'))) {
        if f.present as f64 >= MIN_PRESENCE * n as f64 {
            out.extend(p(
                &[(&f.path, KeyKind::Range), (time, KeyKind::Range)],
                format!(
                    "time-series collection: the metaField's {} (in {:.0}% of {n} pre-scanned measurements) then the timeField {time}",
                    f.path,
                    f.present as f64 * 100.0 / n as f64
                ),
            ));
        }
        if out.len() >= MAX_PROPOSALS {
            break;
        }
    }
    out.extend(p(&[(meta, KeyKind::Hashed)], format!("time-series collection: the metaField {meta} hashed spreads the series evenly")));
    merge([out])
}

/// Merge proposal lists, first one wins for a key already proposed.
pub(crate) fn merge(lists: impl IntoIterator<Item = Vec<Proposal>>) -> Vec<Proposal> {
    let mut out: Vec<Proposal> = Vec::new();
    for p in lists.into_iter().flatten() {
        if !out.iter().any(|q| q.key == p.key) {
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
mod tests;
