//! What a key's counts are made of and how far they may grow: one value's count, the exact
//! and sketch limits, the seeded hasher. Apart from `mod.rs` so `key.rs` and `dense.rs`
//! import them without importing the sample back.

use bson::Bson;

pub(super) type HashMap<K, V> = std::collections::HashMap<K, V, ahash::RandomState>;

/// Fixed seeds: the same sample gives the same sketches on every run.
pub(super) fn hasher() -> ahash::RandomState {
    ahash::RandomState::with_seeds(0x5eed, 0xcafe, 0xf00d, 0xbeef)
}

/// One distinct key value and how many sampled documents hold it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ValueCount {
    pub(crate) value: Vec<Bson>,
    pub(crate) count: u64,
}

/// A hashed key's values grouped by hashed value (`KeySample::hashed_groups`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HashedGroups {
    /// One per distinct hashed value, under its smallest value, in key-space order; None
    /// when no two values can hash alike (no number or object in the hashed field): the
    /// sample's own counts stand.
    pub(crate) groups: Option<Vec<ValueCount>>,
    /// Distinct hashed values.
    pub(crate) hashed_distinct: u64,
    /// Distinct values before hashing.
    pub(crate) raw_distinct: u64,
    /// Of those, the ones whose hashed field is a double with a fraction (truncated before hashing).
    pub(crate) fractional_doubles: u64,
}

/// Distinct values counted exactly per key (past the dense pass) before switching to
/// sketches: a key with more distinct values in the sample is high-cardinality anyway.
pub(crate) const EXACT_LIMIT: usize = 20_000;
/// Documents kept per key for order-based metrics (monotonicity, ranges, cluster).
pub const RESERVOIR: usize = 20_000;

/// The default memory budget for the sample (`--memory-limit`).
pub(crate) const DEFAULT_MEMORY_LIMIT: u64 = 1 << 30;
/// Conservative heap cost of one exactly counted distinct value (hash entry, its
/// normalised bytes, the value and its count) and of one reservoir entry.
pub(super) const EXACT_ENTRY_BYTES: u64 = 256;
pub(super) const RESERVOIR_ENTRY_BYTES: u64 = 128;

/// Per-key limits from a memory budget: half for exact counts, half for the
/// insertion-order reservoir, shared by the keys; never below the fixed defaults.
pub(crate) fn limits_for(budget_bytes: u64, num_keys: usize) -> (usize, usize) {
    let per_key = budget_bytes / 2 / num_keys.max(1) as u64;
    let exact = (per_key / EXACT_ENTRY_BYTES) as usize;
    let reservoir = (per_key / RESERVOIR_ENTRY_BYTES) as usize;
    (exact.max(EXACT_LIMIT), reservoir.max(RESERVOIR))
}
/// HyperLogLog precision (2^16 registers: 0.41% standard error).
pub(crate) const HLL_PRECISION: u32 = 16;
/// Misra-Gries counters.
pub(crate) const HEAVY_HITTERS: usize = 1024;

/// How the value counts of a key were kept, for the report.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SketchInfo {
    pub(crate) distinct_standard_error: f64,
    pub(crate) hll_precision: u32,
    pub(crate) heavy_hitter_counters: usize,
    /// Reported most-common-value counts are at most this much below the truth.
    pub(crate) frequency_error_bound: u64,
}

pub(super) fn hash_bytes(b: &[u8]) -> u64 {
    hasher().hash_one(b)
}
