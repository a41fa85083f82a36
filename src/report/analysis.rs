//! `shardkey analyze`'s report: the candidates ranked with their figures, the inputs read and
//! the recommendation; `ToolInfo` and `SCHEMA_VERSION` head every report.

use crate::metrics::audit::AuditReport;
use crate::metrics::CandidateMetrics;
use crate::model::ShardKey;
use crate::score::Verdict;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

pub(crate) const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Report {
    pub(crate) schema_version: u32,
    pub(crate) tool: ToolInfo,
    pub(crate) namespace: Option<String>,
    pub(crate) inputs: Inputs,
    pub(crate) settings: ReportSettings,
    pub(crate) candidates: Vec<CandidateReport>,
    /// How to apply the first-ranked key: the commands and their requirements.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) recommendation: Option<crate::score::apply::Recommendation>,
    /// What the analysis rested on; in the JSON only when too thin for an answer (then no
    /// `recommendation`: `evidence.shortfalls` say what is missing and what to run).
    #[serde(skip_serializing_if = "crate::metrics::evidence::Evidence::is_sufficient")]
    pub(crate) evidence: crate::metrics::evidence::Evidence,
    /// The collection is already sharded: its real chunks (live only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) audit: Option<AuditReport>,
    pub(crate) notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ToolInfo {
    pub(crate) name: &'static str,
    pub(crate) version: &'static str,
}

impl ToolInfo {
    pub(crate) fn this() -> ToolInfo {
        ToolInfo { name: "shardkey", version: env!("CARGO_PKG_VERSION") }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Inputs {
    pub(crate) documents: DocumentInput,
    pub(crate) queries: QueryInput,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DocumentInput {
    pub(crate) source: String,
    pub(crate) num_docs_read: u64,
    /// Live: the member each read of the documents ran on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) read_on: Vec<crate::model::member::ReadOn>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QueryInput {
    pub(crate) sources: Vec<String>,
    /// Lines or documents read from the query sources.
    pub(crate) records_read: u64,
    /// Operations found, on every namespace.
    pub(crate) queries_read: u64,
    /// Operations on the analysed namespace.
    pub(crate) queries_used: u64,
    /// Of those, how many were classified (all, or a uniform sample of 100,000).
    pub(crate) queries_classified: u64,
    /// Operations on other namespaces.
    pub(crate) queries_other_namespaces: u64,
    /// Records that held no operation, by reason.
    pub(crate) skipped: BTreeMap<String, u64>,
    pub(crate) shard_key_update_diffs: u64,
    /// Per member (each profiler read) or per log file: what it held.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) members: Vec<crate::model::member::MemberRead>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReportSettings {
    pub(crate) chunk_size_bytes: u64,
    pub(crate) num_most_common_values: usize,
    pub(crate) default_collation: Option<Value>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CandidateReport {
    pub(crate) key: ShardKey,
    pub(crate) rank: usize,
    pub(crate) score: u32,
    pub(crate) verdict: Verdict,
    pub(crate) reasons: Vec<crate::score::reasons::Reason>,
    /// Why this candidate ranks above the next one, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) compared_with_next: Option<String>,
    /// The score's components (docs/reference.md "Score").
    pub(crate) score_breakdown: crate::score::Breakdown,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) proposed_because: Option<String>,
    /// keyCharacteristics, readDistribution, writeDistribution, queryShapes, cluster, supportingIndex.
    #[serde(flatten)]
    pub(crate) metrics: CandidateMetrics,
    /// What the validity rules found: why the server would refuse the key, or which writes would fail (docs/reference.md "Rules").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) constraints: Vec<crate::rules::Finding>,
    /// `--compare-server` on 7.0+: the server's own analyzeShardKey numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) server_analyze_shard_key: Option<Value>,
}
