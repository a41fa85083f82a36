//! What the score reads, as plain numbers, taken from one candidate's metrics.

use crate::metrics::cluster::ClusterReport;
use crate::metrics::insert_order::InsertOrder;
use crate::metrics::CandidateMetrics;
use crate::rules::Finding;
use serde_json::Value;

/// What the score reads, as plain numbers: built from a candidate's metrics by
/// `Facts::of`, or by hand in the tests.
#[derive(Debug, Clone)]
pub(crate) struct Facts {
    pub(crate) shards: usize,
    /// False for a queries-only run: data, insert (unless the queries' value types tell) and
    /// growth components are not measured and count 0.5.
    pub(crate) documents: bool,
    pub(crate) docs_with_arrays: u64,
    pub(crate) docs_sampled: u64,
    pub(crate) docs_missing_fields: u64,
    /// The distinct count the verdict uses: the lower end of the estimate's range (pessimistic).
    pub(crate) estimated_distinct: u64,
    /// The estimate with its range, for the words; None when counted exactly.
    pub(crate) distinct_range: Option<crate::metrics::cardinality::DistinctRange>,
    /// Top value and the share of documents the verdict uses (0..1): the upper end of its
    /// 95% interval (pessimistic) when the documents are a sample.
    pub(crate) top_value: Option<Value>,
    pub(crate) top_share: f64,
    /// The top value's share in the sample, when it differs from `top_share` (words only).
    pub(crate) top_share_in_sample: Option<f64>,
    /// The largest jumbo value: (value, documents, bytes), and how many values are at risk.
    pub(crate) jumbo: Option<(Value, u64, u64)>,
    pub(crate) jumbo_count: usize,
    pub(crate) chunk_size: u64,
    pub(crate) cost: crate::metrics::cluster::Cost,
    /// Server labels, for words beside ours.
    pub(crate) server_multi_reads: Option<f64>,
    pub(crate) data_max_share: f64,
    pub(crate) insert_max_share: f64,
    pub(crate) shards_taking_inserts: usize,
    pub(crate) insert_order: InsertOrder,
    pub(crate) server_record_id_coefficient: Option<f64>,
    pub(crate) growth: crate::metrics::cluster::Growth,
    /// The operations per shard at scale; None without sampled operations.
    pub(crate) load: Option<crate::metrics::cluster::Load>,
    /// Queries only: the first field's values the filters name (`metrics::cardinality`).
    pub(crate) query_values: Option<crate::metrics::cardinality::QueryValues>,
    /// What the validity rules found (`crate::rules`).
    pub(crate) constraints: Vec<Finding>,
    /// Operations a non-simple default collation keeps from one shard.
    pub(crate) collation_spread: Option<crate::metrics::CollationSpread>,
    /// A hashed field's values before and after hashing.
    pub(crate) hashing: Option<crate::metrics::characteristics::Hashing>,
    /// Documents that take much of the sampled writes.
    pub(crate) hot_documents: Option<crate::metrics::hot_documents::HotDocuments>,
}

impl Facts {
    pub(crate) fn of(m: &CandidateMetrics) -> Facts {
        let kc = m.key_characteristics.as_ref();
        let cl: &ClusterReport = &m.cluster;
        let max = |f: &dyn Fn(&crate::metrics::cluster::ShardLoad) -> f64| cl.at_scale.shards.iter().map(f).fold(0.0, f64::max) / 100.0;
        Facts {
            shards: cl.num_shards,
            documents: kc.is_some(),
            docs_with_arrays: kc.map_or(0, |k| k.num_docs_with_array_key_values),
            docs_sampled: kc.map_or(0, |k| k.num_docs_sampled),
            docs_missing_fields: kc.map_or(0, |k| k.num_docs_missing_key_fields),
            estimated_distinct: kc.map_or(0, |k| k.estimated_num_distinct_values.range.lower),
            distinct_range: kc.map(|k| k.estimated_num_distinct_values.range).filter(|r| !r.is_exact()),
            top_value: kc.and_then(|k| k.top_value.as_ref()).map(|v| v.value.clone()),
            top_share: kc.map_or(0.0, |k| k.top_value_percentage_range.upper / 100.0),
            top_share_in_sample: kc
                .filter(|k| k.top_value_percentage_range.upper != k.top_value_percentage)
                .map(|k| k.top_value_percentage / 100.0),
            jumbo: kc.and_then(|k| k.jumbo_chunk_risk.largest.as_ref()).map(|j| (j.value.clone(), j.estimated_docs, j.estimated_bytes)),
            jumbo_count: kc.map_or(0, |k| k.jumbo_chunk_risk.num_values),
            chunk_size: cl.chunk_size_bytes,
            cost: cl.cost.clone(),
            server_multi_reads: m.read_distribution.percentage_of_multi_shard_reads,
            data_max_share: max(&|s| s.data_percent),
            insert_max_share: max(&|s| s.inserts_percent),
            shards_taking_inserts: cl.growth.shards_taking_inserts,
            insert_order: m.insert_order.clone(),
            server_record_id_coefficient: kc.and_then(|k| k.monotonicity.record_id_correlation_coefficient),
            growth: cl.growth.clone(),
            load: cl.load.clone(),
            query_values: m.query_values.clone(),
            collation_spread: m.collation_spread.clone(),
            constraints: Vec::new(),
            hashing: kc.and_then(|k| k.hashing.clone()),
            hot_documents: m.hot_documents.clone(),
        }
    }
}
