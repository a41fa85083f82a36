//! What a pipeline run is asked: which keys, which namespace, how to measure. Apart from
//! `pipeline.rs` so its steps import these without importing the pipeline back.

use crate::metrics::Settings;
use crate::model::ShardKey;
use crate::propose::Proposal;

/// Which keys to measure.
#[derive(Debug, Clone)]
pub(crate) enum Candidates {
    /// Keys the user named; they must be valid on the data (no arrays).
    Named(Vec<ShardKey>),
    /// Candidates a caller already proposed (live: from indexes and the current key too).
    Proposed(Vec<Proposal>),
    /// Propose from the source's pre-scan and the query filters.
    FromPrescan,
    /// Propose, and measure these too (`plan`: keys on fields other collections share).
    FromPrescanAnd(Vec<Proposal>),
}

#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) candidates: Candidates,
    /// The analysed namespace; when None, the only one in the query logs.
    pub(crate) namespace: Option<String>,
    pub(crate) settings: Settings,
    /// The collection's size when the documents are a sample of it (`--total-docs`).
    pub(crate) total_docs: Option<u64>,
    /// `--memory-limit`: how much the sample may hold (exact counts, insertion order).
    pub(crate) memory_limit: u64,
    /// A version the documents' source states (a mongodump's prelude.json); a log's
    /// build-info line wins over it, the deployment's own over both.
    pub(crate) server_version: Option<crate::model::version::ServerVersion>,
    /// The version the rules follow over every other (a plan's target version).
    pub(crate) rules_version: Option<crate::model::version::ServerVersion>,
    /// A residency rule: only keys led by its field are recommended, with its zones.
    pub(crate) residency: Option<crate::model::residency::Residency>,
    /// Why no operation was read when the query sources were looked for on our own and could
    /// not be read ("system.profile could not be read"): the caveat says it, not "none found".
    pub(crate) queries_unread: Option<String>,
}

/// Documents read to propose candidates.
pub(crate) const PRESCAN_DOCS: usize = 1000;
