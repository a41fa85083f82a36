//! How to measure: the settings shared by every metric, apart from `mod.rs` so the metrics
//! import them without importing their own registry back.

use bson::Document;

/// How to measure, the same for every candidate.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) chunk_size_bytes: u64,
    pub(crate) num_most_common: usize,
    /// The collection's default collation, used when a query names none.
    pub(crate) default_collation: Option<Document>,
    /// `--shards N`: model the cluster with N shards (else the cluster's own, else `cluster::DEFAULT_SHARDS`).
    pub(crate) shards: Option<usize>,
    /// `--redact`: show values as type and hash.
    pub(crate) redact: bool,
}
