//! `shardkey workload`'s report: what the query logs hold, per namespace and query shape.

use super::analysis::ToolInfo;
use serde::Serialize;
use std::collections::BTreeMap;

/// `shardkey workload`: what the query logs hold, per namespace and query shape.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WorkloadReport {
    pub(crate) schema_version: u32,
    pub(crate) tool: ToolInfo,
    pub(crate) sources: Vec<String>,
    pub(crate) records_read: u64,
    /// Operations the summary reports: found in the logs inside the time window, on the
    /// namespaces it lists (not the server's own databases, nor those `--namespace` leaves out).
    pub(crate) operations_read: u64,
    pub(crate) skipped: BTreeMap<String, u64>,
    /// `--namespace` pattern, `--since`, `--until` as given.
    pub(crate) filters: BTreeMap<String, String>,
    pub(crate) namespaces: Vec<crate::metrics::workload::NamespaceWorkload>,
}
