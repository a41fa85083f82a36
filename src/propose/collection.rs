//! A collection's whole list of candidates: from the profiled fields (`from_fields.rs`), its
//! indexes, a validator's required fields when it is empty, the keys a time-series collection
//! allows; lists merged, first one wins.

use super::from_fields::{for_left_out, key, propose, propose_profiled};
use super::left_out;
use super::profile::{profile_fields, MIN_PRESENCE};
use super::proposal::{Origin, Proposal, Proposals, MAX_PROPOSALS};
use crate::model::{KeyField, KeyKind, Query, ShardKey};
use bson::Document;

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
) -> Proposals {
    match options.and_then(|o| o.time_series.as_ref()) {
        Some(ts) => Proposals { list: for_time_series(ts, prescan), over_cap: Vec::new() },
        None => {
            // A filtered field left out for a few bad documents is measured too, and said.
            let fields = profile_fields(prescan, queries);
            let left = for_left_out(&left_out::find(prescan, &fields), &fields);
            // A unique index's first field: one document a value, whatever the pre-scan shows.
            let unique: Vec<String> = indexes
                .iter()
                .filter(|ix| ix.unique && ix.partial_filter.is_none())
                .filter_map(|ix| ix.key.keys().next().filter(|k| k.as_str() != "_id").cloned())
                .collect();
            let from_fields = propose_profiled(prescan, &fields, queries, total_docs, &unique);
            let list = merge([from_fields.list, left, from_indexes(indexes)]);
            // A key the cap held back that another list put forward is not left out.
            let over_cap = from_fields.over_cap.into_iter().filter(|k| !list.iter().any(|p| &p.key == k)).collect();
            Proposals { list, over_cap }
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
