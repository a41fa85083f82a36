//! The keys a DBA would put forward from the profiled fields: filtered fields, hashed `_id`
//! and a hashed high-cardinality field, compounds of a grouping field with the time field or
//! `_id`.

use super::left_out::LeftOut;
use super::profile::{changed_fields, filter_paths, profile_fields, FieldProfile, ValueType, MIN_PRESENCE};
use super::proposal::{Origin, Proposal, Proposals, MAX_PROPOSALS};
use crate::model::{KeyField, KeyKind, Query, ShardKey};
use bson::Document;
use std::collections::BTreeMap;

/// The most filtered fields each proposed in every shape (ranged, hashed, then `_id`, then
/// the field named beside it): an operation naming a seventh field is rare enough in a
/// workload that a key on it serves few of its operations.
const MAX_FIELDS_PROPOSED: usize = 6;
pub(super) fn key(spec: &[(&str, KeyKind)]) -> Option<ShardKey> {
    ShardKey::new(spec.iter().map(|(p, k)| crate::model::KeyField { path: p.to_string(), kind: *k }).collect()).ok()
}

/// The candidates a DBA would put on the table: the fields the filters use, hashed
/// `_id` and a hashed high-cardinality field, high-cardinality fields when there
/// are no queries, and compounds of a grouping field followed by the time field or
/// by `_id` (`{tenant: 1, ts: 1}`, `{projectId: 1, _id: 1}`); at most `MAX_PROPOSALS`.
pub(crate) fn propose(prescan: &[Document], queries: &[&Query]) -> Vec<Proposal> {
    propose_in(prescan, queries, None, &[]).list
}

/// A value holding this many documents or more on average (estimated over the collection)
/// makes a grouping field, not an identifier.
const GROUP_DOCS_PER_VALUE: f64 = 5.0;

/// `propose`, knowing how many documents the pre-scan is drawn from (`total_docs`): a field
/// whose values repeat in the pre-scan enough that each holds `GROUP_DOCS_PER_VALUE`
/// documents or more over them is a grouping field, however unique the pre-scan makes it look.
/// `unique`: the first fields of the collection's unique indexes (not `_id`), each value one
/// document: the most selective field a filtered field can be followed by.
///
/// When `MAX_PROPOSALS` bites, the keys pushed last go: the order below is the priority
/// (hashed `_id`, the four most filtered fields, the equality sets, entity-then-time pairs,
/// the grouping compounds, a hashed identifier, then per filtered field, most filtered first:
/// ranged, hashed, then `_id`, the field named beside it, the most selective field). So the
/// least filtered fields' compounds go first; the indexes' keys are added after (`merge`).
pub(crate) fn propose_in(prescan: &[Document], queries: &[&Query], total_docs: Option<u64>, unique: &[String]) -> Proposals {
    propose_profiled(prescan, &profile_fields(prescan, queries), queries, total_docs, unique)
}

/// `propose_in` with the fields already profiled (`profile_fields` of the same pre-scan and
/// queries: it walks every filter, and `collection::for_collection` needs it too).
pub(crate) fn propose_profiled(
    prescan: &[Document],
    fields: &[FieldProfile],
    queries: &[&Query],
    total_docs: Option<u64>,
    unique: &[String],
) -> Proposals {
    let n = prescan.len();
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
    let mut over_cap: Vec<ShardKey> = Vec::new();
    let mut push = |key: Option<ShardKey>, why: String| {
        if let Some(key) = key {
            if out.iter().any(|p| p.key == key) || over_cap.contains(&key) {
                return;
            }
            if out.len() < MAX_PROPOSALS {
                out.push(Proposal { key, origin: Origin::Proposed(why) });
            } else {
                over_cap.push(key);
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
    let mut together: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    // An entity filtered by equality beside a time range (`{deviceId: d, ts: {$gte, $lt}}`):
    // the entity-then-time key serves it, whatever the entity's cardinality.
    let mut entity_time: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    // Every set of two to four usable fields one filter fixes by equality, sorted by path:
    // a key of all of them sends each such query to one shard (`{region: 1, district: 1}`).
    // (Paths borrowed from the filters: copied per query, they were a tenth of `plan`'s analyses.)
    let mut eq_sets: BTreeMap<Vec<&str>, usize> = BTreeMap::new();
    for q in queries {
        let mut paths = Vec::new();
        filter_paths(&q.filter, &mut paths);
        for (g, _) in paths.iter().filter(|p| !p.1) {
            for (t, _) in paths.iter().filter(|p| p.1) {
                if fields.iter().any(|f| f.path == *t && f.increasing_by_nature) && *g != "_id" {
                    *entity_time.entry((g, t)).or_default() += 1;
                }
            }
        }
        let eq: Vec<&str> = paths.into_iter().filter(|p| !p.1).map(|p| p.0).collect();
        let mut set: Vec<&str> =
            eq.iter().filter(|p| **p != "_id" && fields.iter().any(|f| f.path == **p && usable(&f))).copied().collect();
        set.sort();
        set.dedup();
        if (2..=4).contains(&set.len()) {
            *eq_sets.entry(set).or_default() += 1;
        }
        for a in &eq {
            for b in &eq {
                if a != b {
                    *together.entry((a, b)).or_default() += 1;
                }
            }
        }
    }
    let mut sets: Vec<(&Vec<&str>, &usize)> = eq_sets.iter().collect();
    sets.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (set, c) in sets.into_iter().take(2) {
        // Coarse to fine: the field with the fewest values first, as a region before its districts.
        let mut ordered: Vec<&FieldProfile> = set.iter().filter_map(|p| fields.iter().find(|f| f.path == *p)).collect();
        ordered.sort_by(|a, b| a.values_at_least().cmp(&b.values_at_least()).then(a.path.cmp(&b.path)));
        let spec: Vec<(&str, KeyKind)> = ordered.iter().map(|f| (f.path.as_str(), KeyKind::Range)).collect();
        let names: Vec<&str> = ordered.iter().map(|f| f.path.as_str()).collect();
        push(
            key(&spec),
            format!(
                "{c} sampled filters fix {} together by equality: a key of all of them sends each to one shard (fewest values first: {})",
                names.join(", "),
                ordered.iter().map(|f| format!("{} {}", f.path, f.values_at_least())).collect::<Vec<_>>().join(", ")
            ),
        );
    }
    let mut pairs: Vec<(&(&str, &str), &usize)> = entity_time.iter().collect();
    pairs.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (&(g, t), c) in pairs.into_iter().take(2) {
        let Some(gp) = fields.iter().find(|f| f.path == g).filter(|f| usable(f)) else { continue };
        if id_follows_time && time.is_some_and(|x| x.path == t) {
            push(
                key(&[(g, KeyKind::Range), ("_id", KeyKind::Range)]),
                format!("{c} sampled filters name {g} by equality beside a range on {t}; the ObjectId _id orders each {g} by creation time as {t} does, and is unique ({})", uses_words(gp)),
            );
        } else {
            push(
                key(&[(g, KeyKind::Range), (t, KeyKind::Range)]),
                format!("{c} sampled filters name {g} by equality beside a range on {t}: each {g}'s range reads and inserts stay on its own chunks ({})", uses_words(gp)),
            );
            // The same reads with the groups spread by hash: neighbouring groups (devices
            // numbered in order, registered together) no longer share a chunk (4.4+).
            push(
                key(&[(g, KeyKind::Hashed), (t, KeyKind::Range)]),
                format!("{c} sampled filters name {g} by equality beside a range on {t}: hashed {g} spreads the groups evenly and each one's range reads still reach one shard (compound hashed, 4.4+; {})", uses_words(gp)),
            );
        }
    }
    for g in &groups {
        let partner = together
            .iter()
            .filter(|((a, b), _)| *a == g.path && fields.iter().any(|f| f.path == *b && usable(&f) && high(f) && !f.increasing_by_nature))
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
            .filter(|((a, b), _)| *a == p && *b != "_id")
            .filter_map(|((_, b), c)| {
                fields.iter().find(|g| g.path == *b && usable(g) && g.values_at_least() > f.values_at_least()).map(|g| (g, *c))
            })
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
        // The expert's compound (issue 49): a field read by equality whose values repeat,
        // then the most selective other field, whether or not one filter names both.
        if p != "_id" && f.eq_uses > 0 && !high(f) {
            if let Some((g, why)) = most_selective(fields, f, unique, &usable) {
                push(
                    key(&[(p, KeyKind::Range), (&g.path, KeyKind::Range)]),
                    format!("{p} then {}, {why}: each {p} value's documents split into chunks by it ({})", g.path, uses_words(f)),
                );
            }
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
    Proposals { list: out, over_cap }
}

/// The most selective field to follow `f` in a compound key, with why it is chosen: the first
/// field of a unique index (one document a value), else the field equality filters name with
/// the most distinct values (Chao1 over the pre-scan, at least as many as the filters name),
/// more than `f` has: a lookup's field, as an order number is (a field read by ranges follows
/// a group in the entity-then-time compounds above); never `_id` (proposed after `f` already)
/// nor `f`. Ties: more filters, then the path.
fn most_selective<'a>(
    fields: &'a [FieldProfile],
    f: &FieldProfile,
    unique: &[String],
    usable: &dyn Fn(&&FieldProfile) -> bool,
) -> Option<(&'a FieldProfile, String)> {
    let is_unique = |g: &FieldProfile| unique.contains(&g.path);
    fields
        .iter()
        .filter(|g| g.path != f.path && g.path != "_id" && usable(g) && (g.eq_uses > 0 || is_unique(g)))
        .filter(|g| is_unique(g) || g.values_at_least() > f.values_at_least())
        .max_by(|a, b| {
            (is_unique(a), a.estimated_at_least(), a.uses())
                .partial_cmp(&(is_unique(b), b.estimated_at_least(), b.uses()))
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(b.path.cmp(&a.path))
        })
        .map(|g| {
            let why = if is_unique(g) {
                "unique by an index".to_string()
            } else {
                format!("the most selective field equality filters name ({} distinct values)", g.values_at_least())
            };
            (g, why)
        })
}

/// The keys measured for a left-out field: it then `_id` (the ranking of it), and
/// hashed when an equality names it.
pub(crate) fn for_left_out(left: &[LeftOut], fields: &[FieldProfile]) -> Vec<Proposal> {
    let mut out = Vec::new();
    for l in left {
        let eq = fields.iter().any(|f| f.path == l.path && f.eq_uses > 0);
        let mut keys = vec![vec![(l.path.as_str(), KeyKind::Range), ("_id", KeyKind::Range)]];
        if eq {
            keys.push(vec![(l.path.as_str(), KeyKind::Hashed)]);
        }
        for spec in keys {
            let key = ShardKey::new(spec.iter().map(|(p, k)| KeyField { path: p.to_string(), kind: *k }).collect());
            if let Ok(key) = key {
                out.push(Proposal { key, origin: Origin::LeftOut(Box::new(l.clone())) });
            }
        }
    }
    out
}

/// Does the field's value order the pre-scanned documents as their ObjectId `_id`s'
/// creation times do (Pearson correlation of the two at least 0.9)?
fn follows_creation_time(prescan: &[Document], path: &str) -> bool {
    let pairs = super::profile::creation_time_pairs(prescan, path);
    pairs.len() >= 10 && crate::util::stats::follows(&pairs).is_some_and(|r| r >= 0.9)
}
