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
        /// Exact counts of a sample: GEE, chosen over Chao1 and Haas–Stokes Duj1 by its error on
        /// skewed data (the test `gee_does_best_on_skewed_data`).
        Gee => "GEE (Charikar et al. 2000): sqrt(N/n)·f1 + (d − f1) (the upper end when no value repeats), within [d, (N/n)·f1 + (d − f1)]; the verdict uses d",
        /// Only a distinct-count sketch: `scale_distinct`.
        Sketch => "HyperLogLog over the sample, scaled to the collection at the sample's rate of new values (an upper bound; see sketch)",
        /// A unique index on the key: every document its own value.
        UniqueIndex => "unique supporting index: every document holds its own value",
        /// The sample is the whole collection.
        Exact => "counted: the sample is the whole collection",
    }
}

/// A distinct count for the collection with its range: `lower` and `upper` bound it (GEE's
/// bounds: the sample's own distinct count can only grow; at most every value seen once in the
/// sample stands for N/n values); `value` is the estimate. The verdict and the score use
/// `lower`, the pessimistic end for a key (fewer values, fewer shards it can use).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub(crate) struct DistinctRange {
    pub(crate) value: u64,
    pub(crate) lower: u64,
    pub(crate) upper: u64,
}

impl DistinctRange {
    pub(crate) fn exact(n: u64) -> DistinctRange {
        DistinctRange { value: n, lower: n, upper: n }
    }

    pub(crate) fn is_exact(&self) -> bool {
        self.lower == self.upper
    }
}

/// GEE, the Guaranteed-Error Estimator (Charikar, Chaudhuri, Motwani, Narasayya, "Towards
/// estimation error guarantees for distinct values", PODS 2000): from `d` distinct values in
/// a sample of `n` of `total` documents, `f1` of them seen once, sqrt(N/n)·f1 + Σ_{j≥2} f_j
/// (= d − f1), with its bounds [d, (N/n)·f1 + (d − f1)], each capped at the collection's size.
/// Its ratio error is at most sqrt(N/n) whatever the data; it does not assume the values
/// evenly spread, which is why it holds up on skewed data where Chao1 under-counts. On
/// near-uniform data with few repeats it can over-count by up to that factor; the range
/// still holds the truth and the verdict uses the lower end.
pub(crate) fn gee(d: u64, f1: u64, num_sampled: u64, num_total: u64) -> DistinctRange {
    if num_sampled == 0 || num_sampled >= num_total {
        return DistinctRange::exact(d);
    }
    let scale = num_total as f64 / num_sampled as f64;
    let rest = d.saturating_sub(f1) as f64;
    let cap = |x: f64| (x.round() as u64).clamp(d, num_total.max(d));
    let upper = cap(scale * f1 as f64 + rest);
    // No value seen twice: the sample shows no repetition at all, and GEE's sqrt(N/n) would
    // say a unique key holds a sqrt of its documents; the data look unique: the upper end.
    let value = if f1 == d { upper } else { cap(scale.sqrt() * f1 as f64 + rest) };
    DistinctRange { value, lower: d, upper }
}

/// Haas and Stokes' Duj1 ("Estimating the number of classes in a finite population", JASA
/// 1998): d / (1 − (1 − q)·f1/n), q = n/N. Kept for the comparison that chose GEE: it
/// assumes near-equal class sizes and under-counts skewed data badly.
#[cfg(test)]
pub(crate) fn duj1(d: u64, f1: u64, num_sampled: u64, num_total: u64) -> u64 {
    if num_sampled == 0 || num_sampled >= num_total {
        return d;
    }
    let q = num_sampled as f64 / num_total as f64;
    let denom = 1.0 - (1.0 - q) * f1 as f64 / num_sampled as f64;
    if denom <= 0.0 {
        return num_total;
    }
    ((d as f64 / denom).round() as u64).clamp(d, num_total.max(d))
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

    #[test]
    fn gee_by_hand() {
        // d = 4, f1 = 2 of n = 9 from N = 900: N/n = 100; 10 × 2 + 2 = 22, within [4, 100 × 2 + 2 = 202].
        assert_eq!(gee(4, 2, 9, 900), DistinctRange { value: 22, lower: 4, upper: 202 });
        // No singleton: nothing unseen is inferred, the range closes on d.
        assert_eq!(gee(5, 0, 100, 1_000_000), DistinctRange { value: 5, lower: 5, upper: 5 });
        // Capped at the collection's size; exact on the whole collection.
        assert_eq!(gee(100, 100, 100, 150).upper, 150);
        // Every sampled value seen once (a unique key): the collection's size, not sqrt(N/n)·n.
        assert_eq!(gee(10_000, 10_000, 10_000, 5_000_000), DistinctRange { value: 5_000_000, lower: 10_000, upper: 5_000_000 });
        assert_eq!(gee(4, 2, 9, 9), DistinctRange::exact(4));
    }

    #[test]
    fn duj1_by_hand() {
        // q = 0.01: 4 / (1 − 0.99 × 2/9) = 4 / 0.78 = 5.13 -> 5
        assert_eq!(duj1(4, 2, 9, 900), 5);
        assert_eq!(duj1(4, 2, 9, 9), 4);
    }

    /// The population of the issue's `prod.orders.customerId`: three customers with 6%, 3% and
    /// 2% of 4,017,013 documents, the rest Zipf(s) over 293,499 customers (each at least once);
    /// `q` of the documents sampled, each by a coin. Returns (true distinct, d, f1, f2, n, N).
    fn skewed(s: f64, q: f64, seed: u64) -> (u64, u64, u64, u64, u64, u64) {
        let (values, total) = (293_499u64, 4_017_013u64);
        let heavy: Vec<u64> = [0.06, 0.03, 0.02].iter().map(|h| (h * total as f64) as u64).collect();
        let rest = (total - heavy.iter().sum::<u64>()) as f64;
        let h: f64 = (1..=values).map(|v| (v as f64).powf(-s)).sum();
        let counts = heavy.into_iter().chain((1..=values).map(|v| ((rest * (v as f64).powf(-s) / h).round() as u64).max(1)));
        let mut rng = crate::util::splitmix::SplitMix64(seed);
        let (mut big_n, mut d, mut f1, mut f2, mut n, mut true_d) = (0, 0, 0, 0, 0, 0);
        for c in counts {
            true_d += 1;
            big_n += c;
            let k = (0..c).filter(|_| rng.unit() < q).count() as u64;
            n += k;
            d += (k > 0) as u64;
            f1 += (k == 1) as u64;
            f2 += (k == 2) as u64;
        }
        (true_d, d, f1, f2, n, big_n)
    }

    /// Issue 47's comparison: on skewed data (a 2.5% sample, as 100,000 of 4 million), GEE's
    /// error is the smallest of Chao1, Haas–Stokes Duj1 and the sample's own count, and its
    /// interval holds the true count. Measured here (s = 0.8, the 44% Chao1 error):
    /// GEE −12%, Chao1 −41%, Duj1 −72%, d −83% (printed with --nocapture).
    #[test]
    fn gee_does_best_on_skewed_data() {
        for (s, seed) in [(0.8, 1), (1.0, 2), (1.2, 3)] {
            let (truth, d, f1, f2, n, total) = skewed(s, 0.025, seed);
            let g = gee(d, f1, n, total);
            let err = |x: u64| (x as f64 - truth as f64).abs() / truth as f64;
            let (eg, ec, ed, ed1) = (err(g.value), err(chao1(d, f1, f2, n, total)), err(d), err(duj1(d, f1, n, total)));
            let said = format!("s = {s}: true {truth}, n {n}: GEE {eg:.3} {g:?}, Chao1 {ec:.3}, Duj1 {ed1:.3}, d {ed:.3}");
            eprintln!("{said}");
            assert!(eg < ec && eg < ed1 && eg < ed, "{said}");
            assert!(g.lower <= truth && truth <= g.upper, "{said}");
        }
    }
}
