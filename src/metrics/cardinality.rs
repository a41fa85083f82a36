//! Cardinality: distinct values in the sample, and an estimate for the whole collection.

/// What the filters of a queries-only run say of a key's most varied field: how many
/// distinct values they name, and Chao1 over how many operations name each, a lower bound of
/// the field's cardinality (the key's is at least as large). JSON `queryValues`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QueryValues {
    pub(crate) num_distinct_named: u64,
    pub(crate) estimated_num_distinct_values: u64,
}

/// `QueryValues` from how many operations name each value (each value once per operation).
pub(crate) fn from_query_values(times_named: impl Iterator<Item = u64>) -> QueryValues {
    let (mut d, mut f1, mut f2) = (0u64, 0u64, 0u64);
    for c in times_named {
        d += 1;
        f1 += (c == 1) as u64;
        f2 += (c == 2) as u64;
    }
    // The collection's size is unknown: the estimate is not capped by it.
    QueryValues { num_distinct_named: d, estimated_num_distinct_values: chao1(d, f1, f2, 0, u64::MAX) }
}

/// Chao1 (bias-corrected) estimate of the number of distinct values in the collection:
/// `d` distinct values in the sample, `f1` seen once, `f2` seen twice. Exact when the
/// sample is the whole collection; never above the number of documents.
pub(crate) fn chao1(d: u64, f1: u64, f2: u64, num_sampled: u64, num_total: u64) -> u64 {
    if num_sampled >= num_total {
        return d;
    }
    let (f1, f2) = (f1 as f64, f2 as f64);
    let est = d as f64 + f1 * (f1 - 1.0).max(0.0) / (2.0 * (f2 + 1.0));
    (est.round() as u64).clamp(d, num_total.max(d))
}

crate::labels! {
    /// How `estimatedNumDistinctValues` was estimated.
    pub(crate) enum Estimator {
        /// Exact counts of a sample: the unseen values estimated from the singletons and doubletons.
        Chao1 => "Chao1 (bias-corrected): d + f1(f1-1)/(2(f2+1)), capped at numDocsTotal",
        /// Only a distinct-count sketch: `scale_distinct`.
        Sketch => "HyperLogLog over the sample, scaled to the collection at the sample's rate of new values (an upper bound; see sketch)",
        /// A unique index on the key: every document its own value.
        UniqueIndex => "unique supporting index: every document holds its own value",
    }
}

/// With only a distinct-count sketch (no frequency counts), the unseen documents
/// are taken to bring new values at the sample's own rate: d + (N − n)·d/n,
/// between d and numDocsTotal. Exact for a unique key; an upper bound when values repeat.
pub(crate) fn scale_distinct(distinct: u64, num_sampled: u64, num_total: u64) -> u64 {
    if num_sampled == 0 || num_sampled >= num_total {
        return distinct;
    }
    let rate = distinct as f64 / num_sampled as f64;
    let est = distinct as f64 + (num_total - num_sampled) as f64 * rate;
    (est.round() as u64).clamp(distinct, num_total)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The estimate from each value's count: `counts`: how many sampled documents hold each distinct value.
    fn estimate_distinct(counts: impl Iterator<Item = u64>, num_sampled: u64, num_total: u64) -> u64 {
        let (mut d, mut f1, mut f2) = (0u64, 0u64, 0u64);
        for c in counts {
            d += 1;
            match c {
                1 => f1 += 1,
                2 => f2 += 1,
                _ => {}
            }
        }
        chao1(d, f1, f2, num_sampled, num_total)
    }

    #[test]
    fn a_sketch_scales_to_the_collection_and_never_past_it() {
        // 99,960 distinct among 100,000 sampled of 336,776: 99,960 + 236,776 × 0.9996 = 336,641
        assert_eq!(scale_distinct(99_960, 100_000, 336_776), 336_641);
        assert_eq!(scale_distinct(100_000, 100_000, 336_776), 336_776, "a unique key: the collection size");
        assert_eq!(scale_distinct(50_000, 50_000, 50_000), 50_000, "the whole collection: as counted");
        assert!(scale_distinct(60_000, 50_000, 70_000) <= 70_000);
    }

    #[test]
    fn values_named_by_queries() {
        // 5 statuses each named by many operations: f1 = f2 = 0 -> 5 (a low-cardinality field).
        assert_eq!(from_query_values([40, 12, 7, 3, 90].into_iter()).estimated_num_distinct_values, 5);
        // 50 customers, 45 named once and 5 twice: 50 + 45 × 44 / (2 × 6) = 215.
        let q = from_query_values(std::iter::repeat_n(1, 45).chain(std::iter::repeat_n(2, 5)));
        assert_eq!((q.num_distinct_named, q.estimated_num_distinct_values), (50, 215));
    }

    #[test]
    fn exact_when_the_sample_is_everything() {
        assert_eq!(estimate_distinct([1, 1, 2, 5].into_iter(), 9, 9), 4);
    }

    #[test]
    fn chao1_by_hand() {
        // d = 4, f1 = 2, f2 = 1: 4 + 2*1/(2*2) = 4.5 -> 5 (rounded)
        assert_eq!(estimate_distinct([1, 1, 2, 5].into_iter(), 9, 1000), 5);
        // all singletons: grows toward the collection size but never past it
        assert_eq!(estimate_distinct(std::iter::repeat_n(1, 100), 100, 150), 150);
        assert_eq!(chao1(4, 2, 1, 9, 1000), 5, "the same from the profile");
    }
}
