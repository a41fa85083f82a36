//! What the plan reads: each collection with the candidates its own analysis ranked, the
//! choices the DBA gave, and the settings (shards, version, sizes); and what the plan does
//! with a collection (`Choice`).

use crate::model::ShardKey;
use serde::Serialize;

/// One candidate key of a collection, as its own analysis measured it.
#[derive(Debug, Clone)]
pub(crate) struct CandidateInput {
    pub(crate) key: ShardKey,
    pub(crate) score: u32,
    /// The server accepts it (not invalid, not blocked).
    pub(crate) valid: bool,
    /// Data and operations per shard at scale (shares, summing to 1 for data).
    pub(crate) data_share: Vec<f64>,
    pub(crate) ops_share: Vec<f64>,
    pub(crate) zone_splits: Vec<bson::Bson>,
    /// First-field values above one zone's fair share: a zone pins each to one shard.
    pub(crate) pinned: Vec<crate::model::pinned::Pinned>,
    /// No index supports it yet (createIndex first); None when not known.
    pub(crate) needs_index: Option<bool>,
    /// The most shards that can ever share its data evenly (cluster growth).
    pub(crate) max_useful_shards: u64,
    /// Shards a sampled operation reaches on average under the key, at scale (reads and
    /// writes); None without sampled operations. Unsharded, every operation reaches one.
    pub(crate) mean_shards_per_op: Option<f64>,
    /// What its own analysis warns of, and what refuses it.
    pub(crate) notes: CandidateNotes,
}

/// What a candidate's own analysis says beyond its figures: the plan carries it per collection.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CandidateNotes {
    /// The most important warning (analyze's: the recommendation's caveat, else the key's
    /// first warning reason).
    pub(crate) warning: Option<String>,
    /// The unique indexes that keep `shardCollection` from taking it while they exist.
    pub(crate) blocked_by: Vec<UniqueIndex>,
    /// Why the server refuses it whatever is changed (capped, arrays in a key field, ...).
    pub(crate) invalid: Option<String>,
    /// The application's writes the plan's version refuses under it (`rules::write_targeting`).
    pub(crate) refused_writes: Vec<RefusedWrites>,
}

/// Sampled writes the plan's version refuses under a key: its analysis's finding, with the
/// first version that runs them, for the script to check against the version it meets.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RefusedWrites {
    /// The finding's sentence: which writes, the error, the fix.
    pub(crate) message: String,
    pub(crate) percentage_of_writes: f64,
    /// "7.1"; None: no version runs them as they are.
    pub(crate) accepted_from: Option<String>,
    /// The key's fields their filters must name by equality.
    pub(crate) filter_fix: Vec<String>,
}

/// A unique index, as the plan names it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UniqueIndex {
    pub(crate) name: String,
    /// `{slug: 1}`.
    pub(crate) pattern: String,
    pub(crate) fields: Vec<String>,
}

/// What kind of namespace it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum CollectionKind {
    Collection,
    TimeSeries,
    View,
    Capped,
}

#[derive(Debug, Clone)]
pub(crate) struct CollectionInput {
    pub(crate) namespace: String,
    pub(crate) kind: CollectionKind,
    pub(crate) data_bytes: u64,
    /// Operations on it in the query logs.
    pub(crate) num_operations: u64,
    /// The share of them that write (inserts, updates, deletes), from the logs' sample.
    pub(crate) write_share: f64,
    /// Ranked, best first; empty when it was not analysed (`not_analysed` says why).
    pub(crate) candidates: Vec<CandidateInput>,
    pub(crate) not_analysed: Option<String>,
    pub(crate) current_key: Option<ShardKey>,
}

/// Each collection's own analysis, as the plan reads it, and the choices the DBA gave.
#[derive(Debug, Clone, Default)]
pub(crate) struct Analyses {
    /// One per collection of the database, in the order the database lists them.
    pub(crate) collections: Vec<CollectionInput>,
    /// Per collection given (`--key`, `--unsharded`): its index, and its key measured (None:
    /// kept unsharded). Empty: no what if.
    pub(crate) given: Vec<(usize, Option<CandidateInput>)>,
    /// The collections not analysed, one line each (`ns: not analysed: why`).
    pub(crate) notes: Vec<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) shards: usize,
    /// Where the number of shards comes from, in words.
    pub(crate) shards_from: String,
    /// The server version the plan is for: moveCollection needs 8.0, a sharded `$lookup`
    /// target 5.1. None: not known (both assumed unavailable).
    pub(crate) target_version: Option<(u32, u32)>,
    /// `--shard-size`: the data one shard should hold.
    pub(crate) shard_size_bytes: Option<u64>,
    /// `--shard-ops`: operations per second one shard sustains.
    pub(crate) shard_ops_per_second: Option<f64>,
    /// The logs' operations per second at their busiest, when they say.
    pub(crate) load: Option<super::rate::LoadRate>,
    /// The range (chunk) size: the balancer moves nothing of a collection under three of them.
    pub(crate) range_bytes: u64,
}

/// What the plan does with one collection.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Choice {
    Unsharded,
    /// Index into the collection's candidates.
    Key(usize),
}
