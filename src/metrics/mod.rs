//! Metrics: values in, numbers out, no I/O. One module per number (or group of
//! numbers) in the report, each owning its output type and its unit tests.
//! `measure` is the registry: it runs every metric for one candidate, in report order.
//!
//! JSON field of a candidate → where it is computed (docs/maintainers.md "Code map" has the full table):
//!
//! | JSON field | module |
//! |---|---|
//! | `keyCharacteristics.numDocsTotal`, `numDocsSampled`, `avgDocSizeBytes`, `numDistinctValues`, `mostCommonValues`, `isUnique` | `characteristics` |
//! | `keyCharacteristics.estimatedNumDistinctValues` | `cardinality` (exact counts) or the sample's HyperLogLog (`sample::sketch`) |
//! | `keyCharacteristics.topValuePercentage`, `jumboChunkRisk` | `frequency` |
//! | `keyCharacteristics.monotonicity` | `monotonicity` |
//! | `readDistribution`, `writeDistribution` (labels, `num*ByRange`, shard key updates) | `distribution` (with `targeting`, `ranges`, `key_updates`) |
//! | `queryShapes` | `query_shapes` |
//! | `cluster` | `cluster` (placements, balancer and scale rules in `cluster/layout.rs`) |
//! | `insertOrder` | `insert_order` |
//! | `supportingIndex` | `supporting_index` |
//! | `audit` (report level) | `audit` |

pub(crate) mod audit;
pub(crate) mod cardinality;
pub(crate) mod characteristics;
pub(crate) mod cluster;
pub mod distribution;
pub(crate) mod evidence;
pub(crate) mod frequency;
pub(crate) mod hot_documents;
pub(crate) mod insert_order;
pub(crate) mod key_updates;
pub(crate) mod monotonicity;
pub(crate) mod query_shapes;
pub mod ranges;
pub(crate) mod settings;
pub(crate) mod supporting_index;
pub(crate) mod workload;

use crate::model::{KeySpace, Query};
use crate::sample::{KeySample, Sample};
use bson::{Bson, Document};
use characteristics::{CollectionSize, KeyCharacteristics};
use cluster::{ActualChunks, ClusterReport};
use distribution::{DistributionCounter, ReadDistribution, WriteDistribution};
use insert_order::{InsertKind, InsertOrder};
use query_shapes::{QueryShapeReport, ShapeCounter};
use ranges::{Ranges, NUM_RANGES};
use serde::Serialize;
pub(crate) use settings::Settings;
use supporting_index::SupportingIndexReport;

/// Every metric of one candidate, in report order.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CandidateMetrics {
    /// None when no documents were given (query logs only): serialized as
    /// `{"notMeasured": "..."}`, never invented.
    #[serde(serialize_with = "characteristics::serialize_optional")]
    pub(crate) key_characteristics: Option<KeyCharacteristics>,
    pub(crate) read_distribution: ReadDistribution,
    pub(crate) write_distribution: WriteDistribution,
    pub(crate) query_shapes: Vec<QueryShapeReport>,
    /// Where new documents land, as created in production (beside the server's monotonicity).
    pub(crate) insert_order: InsertOrder,
    /// The cluster model: data, reads, writes and inserts per shard, cost, growth, scale.
    pub(crate) cluster: ClusterReport,
    /// Live sources only: the index that would support this key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) supporting_index: Option<SupportingIndexReport>,
    /// Queries only (no documents): the first field's values the filters name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) query_values: Option<cardinality::QueryValues>,
    /// Under a non-simple default collation: the sampled operations it keeps from one shard
    /// (said in the reasons).
    #[serde(skip)]
    pub(crate) collation_spread: Option<CollationSpread>,
    /// The workload's hot documents, the same for every key (said by the score).
    #[serde(skip)]
    pub(crate) hot_documents: Option<hot_documents::HotDocuments>,
}

/// Sampled operations that reach one shard under the simple collation but not under the
/// collection's default one: a string equality does not target under a non-simple
/// collation (`crate::targeting`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CollationSpread {
    /// The default collation's locale.
    pub(crate) locale: String,
    pub(crate) operations: u64,
    /// Sampled operations (inserts aside).
    pub(crate) of: u64,
}

/// What every candidate's measurement shares.
pub(crate) struct Workload<'a> {
    pub(crate) sample: &'a Sample,
    pub(crate) size: CollectionSize,
    pub(crate) settings: &'a Settings,
    pub(crate) queries: &'a [&'a Query],
    /// Each query's normalised shape (`targeting::shapes`), computed once.
    pub(crate) shapes: &'a [String],
    /// Each query's filter's equalities (`targeting::Equalities`), gathered once for every key.
    pub(crate) equalities: &'a [crate::targeting::Equalities<'a>],
    /// `config.sampledQueriesDiff` diffs, for shard key updates.
    pub(crate) diffs: &'a [&'a Document],
    /// `insert_order::newest_by_creation` of the sample, the same for every key (computed once).
    pub(crate) newest_created: Option<Vec<u64>>,
    /// A clustered collection (`clusteredIndex`): its record order is `_id` order, never
    /// the order documents were created in.
    pub(crate) clustered: bool,
    /// `hot_documents::measure` of the queries (computed once).
    pub(crate) hot_documents: Option<hot_documents::HotDocuments>,
    /// Whether the queries show inserts (`InsertEvidence::of` the queries, computed once;
    /// refined once every candidate is measured: `InsertEvidence::with_keys`).
    pub(crate) inserts: insert_order::InsertEvidence,
    /// The sampled insert commands by their documents (`cluster::InsertBatches::of` the
    /// queries, computed once).
    pub(crate) insert_batches: cluster::InsertBatches,
}

/// Every metric for one key. `order` is a separate insertion-ordered sample when
/// the main one is not in insertion order; `support` and `actual` come from the source.
pub(crate) fn measure(
    w: &Workload,
    ks: &KeySample,
    order: Option<&KeySample>,
    support: Option<SupportingIndexReport>,
    actual: Option<&ActualChunks>,
) -> CandidateMetrics {
    let settings = w.settings;
    let documents = w.sample.num_docs > 0;
    let is_unique = support.as_ref().map(|s| s.is_unique);
    // Monotonicity and the insert order both read the insertion positions in key order:
    // built at most once per key (a vector as long as the sample).
    let positions = std::cell::OnceCell::new();
    let ks_positions = || positions.get_or_init(|| ks.insertion_positions_in_key_order()).as_slice();
    let hashed = ks.hashed_groups();
    let mut kc = characteristics::measure(ks, order, &ks_positions, w.sample, w.size, settings, is_unique, hashed.as_ref());
    if w.clustered {
        // Record order is the clustered key's order: the server says unknown (mongodb/mongo
        // 3e76161 src/mongo/db/s/analyze_shard_key_cmd_util.cpp calculateMonotonicity), and
        // the insert order then rests on creation times or value types alone.
        kc.monotonicity =
            monotonicity::Monotonicity { record_id_correlation_coefficient: None, kind: monotonicity::MonotonicityType::Unknown };
    }
    // No documents: the server's ranges need sampled split points, so there are none.
    let key_space = if documents { ks.key_space_values() } else { KeySpace::default() };
    let ranges = Ranges::cut(&key_space, NUM_RANGES);
    let mut dist = DistributionCounter::new(&ranges);
    let mut shapes = ShapeCounter::default();
    let mut touches = Vec::new();
    let mut spread = settings.default_collation.as_ref().map(|c| CollationSpread {
        locale: c.get_str("locale").unwrap_or("?").to_string(),
        operations: 0,
        of: 0,
    });
    for ((q, shape), eqs) in w.queries.iter().zip(w.shapes).zip(w.equalities) {
        if let Some(t) = dist.add_with(&ks.key, q, eqs, settings.default_collation.as_ref(), &ranges) {
            if let Some(s) = spread.as_mut() {
                s.of += 1;
                let single = crate::targeting::Label::SingleShard;
                if t.label != single && crate::targeting::target_query_with(&ks.key, q, None, eqs).label == single {
                    s.operations += 1;
                }
            }
            shapes.add(shape, t.label, q.op.name(), q.op.is_read(), || example(q, settings.redact));
            touches.push(cluster::QueryTouch { is_read: q.op.is_read(), retention: q.is_retention_delete(), touched: t.touched });
        }
    }
    for d in w.diffs {
        dist.add_diff(&ks.key, d);
    }
    let (mut read_distribution, mut write_distribution) = (dist.read_distribution(), dist.write_distribution());
    let without_key = dist.writes_without_key();
    if !documents {
        read_distribution.num_reads_by_range.clear();
        write_distribution.num_writes_by_range.clear();
        // The key space as the queries name it: their points and range bounds.
        let named = cluster::query_key_space(&touches);
        let insert_order = insert_order::InsertOrder { inserts_in_workload: w.inserts, ..insert_order::from_query_values(&ks.key, &named) };
        let cluster = predict_cluster(
            ks,
            order.unwrap_or(ks),
            &kc,
            &insert_order,
            (&write_distribution, without_key),
            &named,
            w,
            &touches,
            actual,
            hashed.as_ref(),
        );
        return CandidateMetrics {
            read_distribution,
            write_distribution,
            key_characteristics: None,
            insert_order,
            query_shapes: shapes.finish(),
            cluster,
            supporting_index: support,
            query_values: Some(key_field_values(&touches)),
            collation_spread: spread,
            hot_documents: w.hot_documents.clone(),
        };
    }
    let insert_order = insert_order::InsertOrder {
        inserts_in_workload: w.inserts,
        ..insert_order::measure(ks, &ks_positions, &w.sample.created, &kc.monotonicity, &key_space)
    };
    let cluster = predict_cluster(
        ks,
        order.unwrap_or(ks),
        &kc,
        &insert_order,
        (&write_distribution, without_key),
        &key_space,
        w,
        &touches,
        actual,
        hashed.as_ref(),
    );
    CandidateMetrics {
        read_distribution,
        write_distribution,
        key_characteristics: Some(kc),
        insert_order,
        query_shapes: shapes.finish(),
        cluster,
        supporting_index: support,
        query_values: None,
        collation_spread: spread,
        hot_documents: w.hot_documents.clone(),
    }
}

/// The key's first-field values the sampled operations fix (a point on that field), each
/// counted once per operation that names it.
/// A query as `check` names it: the command and its filter (values redacted with `--redact`),
/// cut at 120 characters.
fn example(q: &Query, redact: bool) -> String {
    let filter = if redact { crate::bsonx::redact::redact(&Bson::Document(q.filter.clone())) } else { Bson::Document(q.filter.clone()) };
    let text = format!("{} {}", q.op.name(), filter.into_relaxed_extjson());
    match text.char_indices().nth(120) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// What the filters say of the key's cardinality: for each key field, the values the filters
/// fix it to (Chao1 over how many operations name each); the key's cardinality is at least
/// that of any of its fields, so the field with the largest estimate is the bound (a suffix
/// such as `_id` in `{tenantId: 1, _id: 1}` is what makes such a key fine-grained).
fn key_field_values(touches: &[cluster::QueryTouch]) -> cardinality::QueryValues {
    use crate::bsonx::cmp_bson;
    let fields = touches.iter().flat_map(|t| t.touched.iter()).map(|r| r.min.len().min(r.max.len())).max().unwrap_or(0);
    let mut best: Option<cardinality::QueryValues> = None;
    for i in 0..fields.max(1) {
        let mut named: Vec<&Bson> = Vec::new();
        for t in touches {
            let mut mine: Vec<&Bson> = t
                .touched
                .iter()
                .filter_map(|r| Some((r.min.get(i)?, r.max.get(i)?)))
                .filter(|(lo, hi)| !matches!(lo, Bson::MinKey | Bson::MaxKey) && cmp_bson(lo, hi).is_eq())
                .map(|(lo, _)| lo)
                .collect();
            mine.sort_by(|a, b| cmp_bson(a, b));
            mine.dedup_by(|a, b| cmp_bson(a, b).is_eq());
            named.extend(mine);
        }
        named.sort_by(|a, b| cmp_bson(a, b));
        let mut counts: Vec<u64> = Vec::new();
        for (j, v) in named.iter().enumerate() {
            match counts.last_mut() {
                Some(c) if cmp_bson(named[j - 1], v).is_eq() => *c += 1,
                _ => counts.push(1),
            }
        }
        let q = cardinality::from_query_values(counts.into_iter());
        if best.as_ref().is_none_or(|b| q.estimated_num_distinct_values > b.estimated_num_distinct_values) {
            best = Some(q);
        }
    }
    best.unwrap_or_else(|| cardinality::from_query_values(std::iter::empty()))
}

#[allow(clippy::too_many_arguments)]
fn predict_cluster(
    ks: &KeySample,
    order: &KeySample,
    kc: &KeyCharacteristics,
    io: &InsertOrder,
    (writes, without_key): (&WriteDistribution, Option<distribution::WritesWithoutKey>),
    key_space: &KeySpace,
    w: &Workload,
    touches: &[cluster::QueryTouch],
    actual: Option<&ActualChunks>,
    hashed: Option<&crate::sample::HashedGroups>,
) -> ClusterReport {
    let inserts = match io.kind {
        InsertKind::Increasing => cluster::layout::InsertPattern::Increasing,
        InsertKind::Decreasing => cluster::layout::InsertPattern::Decreasing,
        InsertKind::TopOfEachGroup => cluster::layout::InsertPattern::TopOfGroup(io.group_fields.unwrap_or(1)),
        // No documents to look like: a hashed first field still spreads them evenly.
        InsertKind::Spread if w.sample.num_docs == 0 && io.basis == insert_order::InsertBasis::HashedFirstField => {
            cluster::layout::InsertPattern::Even
        }
        InsertKind::Spread | InsertKind::Unknown => cluster::layout::InsertPattern::LikeRecent,
    };
    // The newest documents by creation time when `_id`s carry it, else by load order.
    let recent = match &w.newest_created {
        Some(p) if ks.docs_with_arrays == 0 => ks.key_space_values_at(p),
        // The newest by load order would be the highest `_id`s: without creation times,
        // new documents are taken to land as the sampled ones lie.
        _ if w.clustered => order.recent_key_space_values(1.0),
        _ => order.recent_key_space_values(0.1),
    };
    let documents = w.sample.num_docs > 0;
    let counted = ks.docs_counted().max(1);
    let mut jumbo_values: Vec<usize> = if !documents {
        Vec::new()
    } else {
        let freqs = hashed.and_then(|h| h.groups.as_deref()).unwrap_or(ks.frequencies());
        frequency::jumbo_values(freqs, counted, w.size.num_docs_total, kc.avg_doc_size_bytes, w.settings.chunk_size_bytes)
            .iter()
            .filter_map(|j| key_space.search(&ks.key.to_key_space(&j.value)).ok())
            .collect()
    };
    jumbo_values.sort_unstable();
    jumbo_values.dedup();
    let pct = |x: Option<f64>| x.unwrap_or(0.0);
    let inp = cluster::Inputs {
        key: &ks.key,
        values: key_space,
        jumbo_values,
        docs_per_sampled: if documents { w.size.num_docs_total as f64 / counted as f64 } else { 1.0 },
        avg_doc_size: if documents { kc.avg_doc_size_bytes } else { 1 },
        documents,
        chunk_size: w.settings.chunk_size_bytes,
        shards: w.settings.shards.unwrap_or(cluster::DEFAULT_SHARDS),
        shards_from: if w.settings.shards.is_some() { cluster::ShardsFrom::Flag } else { cluster::ShardsFrom::Default },
        queries: touches,
        inserts,
        recent: &recent,
        // The pessimistic ends: the fewest distinct values and the largest top share the sample allows.
        estimated_distinct: if documents { kc.estimated_num_distinct_values.range.lower } else { key_space.len() as u64 },
        // No value seen twice: the interval's upper end reflects the sample's size alone, not a
        // hot value ("beyond 88 shards the top value's shard stays the busiest" of a unique key
        // sampled at 500 documents, a DBA's trial): no top-value limit is drawn from it.
        top_share: if documents && kc.top_value.as_ref().is_some_and(|v| v.frequency > 1) {
            kc.top_value_percentage_range.upper / 100.0
        } else {
            0.0
        },
        writes_without_shard_key_percent: Some(
            ((pct(writes.percentage_of_single_writes_without_shard_key) + pct(writes.percentage_of_multi_writes_without_shard_key)) * 1e6)
                .round()
                / 1e6,
        ),
        writes_without_key: without_key,
        shard_key_updates_percent: writes.percentage_of_shard_key_updates,
        inserts_sampled: &w.insert_batches,
        insert_evidence: io.inserts_in_workload,
        redact: w.settings.redact,
    };
    cluster::predict(&inp, actual)
}

#[cfg(test)]
mod key_values_tests {
    use super::*;
    use crate::model::KeyRange;

    fn touch(r: KeyRange) -> cluster::QueryTouch {
        cluster::QueryTouch { is_read: true, retention: false, touched: vec![r] }
    }

    /// Under {tenantId: 1, _id: 1}, 200 operations name 5 tenants (40 times each) and 200
    /// different _ids (once each): the tenants alone say 5 (Chao1 5: no value seen once or
    /// twice); the _ids say 200 + 200·199/2 = 20,100 by Chao1 (all seen once, none twice),
    /// the key's lower bound. The same operations fixing only the tenant say 5.
    #[test]
    fn the_most_varied_key_field_bounds_the_keys_cardinality() {
        let both: Vec<_> = (0..200i64).map(|i| touch(KeyRange::point(vec![Bson::Int64(i % 5), Bson::Int64(1000 + i)]))).collect();
        let q = key_field_values(&both);
        assert_eq!((q.num_distinct_named, q.estimated_num_distinct_values), (200, 20_100));
        let tenant_only: Vec<_> = (0..200i64)
            .map(|i| touch(KeyRange { min: vec![Bson::Int64(i % 5), Bson::MinKey], max: vec![Bson::Int64(i % 5), Bson::MaxKey] }))
            .collect();
        let q = key_field_values(&tenant_only);
        assert_eq!((q.num_distinct_named, q.estimated_num_distinct_values), (5, 5));
    }
}
