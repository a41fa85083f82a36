//! The report: what every writer formats. Its JSON form is the documented,
//! versioned schema (README "JSON schema").

use crate::metrics::distribution::{ReadDistribution, WriteDistribution};
use crate::metrics::monotonicity::Monotonicity;
use crate::metrics::targeting::Label;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub namespace: Option<String>,
    pub inputs: Inputs,
    pub settings: Settings,
    pub candidates: Vec<CandidateReport>,
    /// The collection is already sharded: its real chunks (live only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<AuditReport>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditReport {
    pub shard_key: Value,
    /// "uuid" (5.0+) or "ns" (before 5.0): how config.chunks names the collection.
    pub chunk_format: String,
    pub num_chunks: usize,
    pub shards: Vec<AuditShard>,
    pub jumbo_flagged_chunks: Vec<AuditChunk>,
    /// Most over fewest chunks per shard; null when a shard holds none.
    pub chunk_count_imbalance: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditShard {
    pub shard: String,
    pub num_chunks: usize,
    pub num_jumbo_chunks: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditChunk {
    pub min: Value,
    pub max: Value,
    pub shard: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ToolInfo {
    pub name: &'static str,
    pub version: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Inputs {
    pub documents: DocumentInput,
    pub queries: QueryInput,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentInput {
    pub source: String,
    pub num_docs_read: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryInput {
    pub sources: Vec<String>,
    /// Lines or documents read from the query sources.
    pub records_read: u64,
    /// Operations found, on every namespace.
    pub queries_read: u64,
    /// Operations on the analysed namespace.
    pub queries_used: u64,
    /// Of those, how many were classified (all, or a uniform sample of 100,000).
    pub queries_classified: u64,
    /// Operations on other namespaces.
    pub queries_other_namespaces: u64,
    /// Records that held no operation, by reason.
    pub skipped: BTreeMap<String, u64>,
    pub shard_key_update_diffs: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    pub chunk_size_bytes: u64,
    pub num_most_common_values: usize,
    pub default_collation: Option<Value>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CandidateReport {
    pub key: Value,
    pub rank: usize,
    pub score: u32,
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposed_because: Option<String>,
    pub key_characteristics: KeyCharacteristics,
    pub read_distribution: ReadDistribution,
    pub write_distribution: WriteDistribution,
    pub query_shapes: Vec<QueryShapeReport>,
    /// `--shards N`: where data, reads, writes and inserts would go.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterReport>,
    /// Live sources only: the index that would support this key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supporting_index: Option<SupportingIndexReport>,
    /// `--compare-server` on 7.0+: the server's own analyzeShardKey numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_analyze_shard_key: Option<Value>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SupportingIndexReport {
    /// The supporting index's name, or null when the collection has none.
    pub name: Option<String>,
    pub is_unique: bool,
    /// The command that would create one, when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub create_index: Option<String>,
    /// Indexes with the right fields that cannot support the key, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unusable: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Good,
    Acceptable,
    Poor,
    Bad,
    Invalid,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Good => "good",
            Verdict::Acceptable => "acceptable",
            Verdict::Poor => "poor",
            Verdict::Bad => "bad",
            Verdict::Invalid => "invalid",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MostCommonValue {
    pub value: Value,
    pub frequency: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Estimate {
    pub value: u64,
    pub estimator: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JumboRisk {
    pub chunk_size_bytes: u64,
    pub values: Vec<JumboValueReport>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JumboValueReport {
    pub value: Value,
    pub estimated_docs: u64,
    pub estimated_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyCharacteristics {
    pub num_docs_total: u64,
    pub num_docs_sampled: u64,
    pub avg_doc_size_bytes: u64,
    pub num_distinct_values: u64,
    pub most_common_values: Vec<MostCommonValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_unique: Option<bool>,
    pub monotonicity: Monotonicity,
    // Beyond the server:
    pub estimated_num_distinct_values: Estimate,
    /// Percentage of sampled documents holding the most common value.
    pub top_value_percentage: f64,
    pub num_docs_missing_key_fields: u64,
    /// Documents with an array in a key field (the server refuses the key: BadValue).
    pub num_docs_with_array_key_values: u64,
    pub jumbo_chunk_risk: JumboRisk,
    /// Present when the sample had too many distinct values to count exactly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sketch: Option<SketchReport>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SketchReport {
    pub distinct_values: String,
    pub most_common_values: String,
    pub frequency_error_bound: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryShapeReport {
    pub shape: String,
    pub ops: BTreeMap<String, u64>,
    pub count: u64,
    pub label: Label,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterReport {
    /// "simulated" (our layout and balancer model) or "actual chunks" (config.chunks).
    pub basis: String,
    pub num_shards: usize,
    pub chunk_size_bytes: u64,
    pub num_chunks: usize,
    pub shards: Vec<ShardLoad>,
    pub jumbo_chunks: Vec<JumboChunkReport>,
    /// Largest over smallest shard; null when a shard gets none.
    pub imbalance: Imbalance,
    pub verdict: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShardLoad {
    pub shard: String,
    pub num_chunks: usize,
    pub data_bytes: u64,
    pub data_percent: f64,
    /// Percentage of sampled reads (writes) sent to this shard; a query sent to several shards counts on each.
    pub reads_percent: f64,
    pub writes_percent: f64,
    pub inserts_percent: f64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JumboChunkReport {
    pub min: Value,
    pub max: Value,
    pub shard: String,
    pub estimated_bytes: u64,
    pub estimated_docs: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Imbalance {
    pub data: Option<f64>,
    pub reads: Option<f64>,
    pub writes: Option<f64>,
    pub inserts: Option<f64>,
}

/// `shardkey check`: the policy's verdict per collection (JSON schema in README).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckReport {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub policy: String,
    pub passed: bool,
    pub collections: Vec<CollectionCheck>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CollectionCheck {
    pub namespace: String,
    pub key: Value,
    pub score: u32,
    pub verdict: Verdict,
    pub passed: bool,
    pub rules: Vec<crate::policy::RuleResult>,
    pub reasons: Vec<String>,
}
