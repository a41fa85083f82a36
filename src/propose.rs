//! Candidate proposal when the user names no key: fields the queries filter on
//! that most documents hold, `{_id: "hashed"}`, and `{g: 1, _id: 1}` for a
//! grouping field g whose values are too frequent to stand alone.

use crate::bsonx::{group_bytes, lookup, Lookup};
use crate::model::{KeyKind, Query, ShardKey};
use bson::{Bson, Document};
use std::collections::{BTreeMap, HashMap};

/// A candidate and where it comes from.
#[derive(Debug, Clone)]
pub struct Proposal {
    pub key: ShardKey,
    pub origin: Origin,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The user named it (`--key`, a policy's `key`).
    Named,
    /// The collection is already sharded on it.
    CurrentShardKey,
    /// Proposed, and why.
    Proposed(String),
}

impl Origin {
    /// The report's `proposedBecause`.
    pub fn proposed_because(&self) -> Option<String> {
        match self {
            Origin::Named => None,
            Origin::CurrentShardKey => Some("current shard key".into()),
            Origin::Proposed(why) => Some(why.clone()),
        }
    }
}

impl Proposal {
    pub fn named(key: ShardKey) -> Proposal {
        Proposal { key, origin: Origin::Named }
    }
}

/// Presence, arrays and value spread of one field in the pre-scan.
#[derive(Debug, Default)]
struct FieldStats {
    present: usize,
    arrays: usize,
    counts: HashMap<Vec<u8>, usize>,
}

const MIN_PRESENCE: f64 = 0.9;
const MAX_FILTER_FIELDS: usize = 5;

fn filter_paths(filter: &Document, out: &mut Vec<String>) {
    for (k, v) in filter {
        if k == "$and" || k == "$or" {
            if let Bson::Array(items) = v {
                for d in items.iter().filter_map(|x| x.as_document()) {
                    filter_paths(d, out);
                }
            }
        } else if !k.starts_with('$') {
            out.push(k.clone());
        }
    }
}

fn stats_for(docs: &[Document], path: &str) -> FieldStats {
    let mut s = FieldStats::default();
    for d in docs {
        match lookup(d, path) {
            Lookup::Value(v) => {
                s.present += 1;
                let mut b = Vec::new();
                group_bytes(v, &mut b);
                *s.counts.entry(b).or_default() += 1;
            }
            Lookup::Array => s.arrays += 1,
            Lookup::Missing => {}
        }
    }
    s
}

/// Top-level scalar fields of the pre-scanned documents, in first-seen order.
fn scalar_fields(docs: &[Document]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for d in docs {
        for (k, v) in d {
            if !matches!(v, Bson::Array(_) | Bson::Document(_)) && !seen.contains(k) {
                seen.push(k.clone());
            }
        }
    }
    seen
}

pub fn propose(prescan: &[Document], queries: &[&Query]) -> Vec<Proposal> {
    let n = prescan.len().max(1) as f64;
    let mut out: Vec<Proposal> = Vec::new();
    let mut push = |key: ShardKey, why: String| {
        if !out.iter().any(|p| p.key == key) {
            out.push(Proposal { key, origin: Origin::Proposed(why) });
        }
    };
    push(
        ShardKey::single("_id", KeyKind::Hashed),
        "hashed _id: spreads data and inserts evenly; only queries by _id target one shard".into(),
    );

    let mut uses: BTreeMap<String, usize> = BTreeMap::new();
    let filtered = queries.iter().filter(|q| !q.filter.is_empty()).count().max(1);
    for q in queries {
        let mut paths = Vec::new();
        filter_paths(&q.filter, &mut paths);
        paths.sort();
        paths.dedup();
        for p in paths {
            *uses.entry(p).or_default() += 1;
        }
    }
    let mut fields: Vec<(String, usize)> = uses.into_iter().collect();
    fields.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let from_queries = !fields.is_empty();
    if !from_queries {
        fields = scalar_fields(prescan).into_iter().map(|f| (f, 0)).collect();
    }
    let mut taken = 0;
    for (path, used) in fields {
        if taken >= MAX_FILTER_FIELDS {
            break;
        }
        let s = stats_for(prescan, &path);
        if s.arrays > 0 || (s.present as f64) < MIN_PRESENCE * n {
            continue;
        }
        let Ok(key) = ShardKey::new(vec![crate::model::KeyField { path: path.clone(), kind: KeyKind::Range }]) else {
            continue;
        };
        taken += 1;
        let why = if from_queries {
            format!("{} of {} sampled filters use {path}", used, filtered)
        } else {
            format!("{path} is in {:.0}% of sampled documents", s.present as f64 * 100.0 / n)
        };
        push(key, why);
        if path != "_id" {
            let top = s.counts.values().copied().max().unwrap_or(0) as f64 / n;
            let distinct = s.counts.len();
            if top > 0.05 || distinct < 1000.min(prescan.len() / 2) {
                if let Ok(k) = ShardKey::parse(&format!("{{\"{path}\": 1, _id: 1}}")) {
                    push(
                        k,
                        format!(
                            "{path} groups documents (top value {:.0}% of the pre-scan); adding _id splits its large groups",
                            top * 100.0
                        ),
                    );
                }
            }
        }
    }
    out
}

/// Candidates from a collection's existing indexes (each index key that is a valid shard key).
pub fn from_indexes(indexes: &[crate::model::index::IndexSpec]) -> Vec<Proposal> {
    indexes
        .iter()
        .filter(|ix| ix.name != "_id_")
        .filter_map(|ix| ix.as_shard_key().map(|k| Proposal { key: k, origin: Origin::Proposed(format!("existing index {}", ix.name)) }))
        .collect()
}

/// Merge proposal lists, first one wins for a key already proposed.
pub fn merge(lists: impl IntoIterator<Item = Vec<Proposal>>) -> Vec<Proposal> {
    let mut out: Vec<Proposal> = Vec::new();
    for p in lists.into_iter().flatten() {
        if !out.iter().any(|q| q.key == p.key) {
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Op, QueryOrigin};
    use bson::doc;

    #[test]
    fn proposes_filter_fields_hashed_id_and_compound_for_hot_groups() {
        let docs: Vec<Document> = (0..100)
            .map(|i| doc! {"_id": i, "g": if i < 50 { 0 } else { i }, "u": i, "rare": if i < 10 { 1 } else { 0 }})
            .collect();
        let qs = [
            Query::new(Op::Find, "d.c", doc! {"g": 1}, QueryOrigin::Profiler),
            Query::new(Op::Find, "d.c", doc! {"u": 1}, QueryOrigin::Profiler),
            Query::new(Op::Find, "d.c", doc! {"missing": 1}, QueryOrigin::Profiler),
        ];
        let refs: Vec<&Query> = qs.iter().collect();
        let keys: Vec<String> = propose(&docs, &refs).iter().map(|p| p.key.to_string()).collect();
        assert!(keys.contains(&"{_id: \"hashed\"}".to_string()));
        assert!(keys.contains(&"{g: 1}".to_string()));
        assert!(keys.contains(&"{g: 1, _id: 1}".to_string()), "{keys:?}");
        assert!(keys.contains(&"{u: 1}".to_string()));
        assert!(!keys.iter().any(|k| k.contains("missing")));
    }
}
