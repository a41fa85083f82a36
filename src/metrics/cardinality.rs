//! Cardinality: distinct values in the sample, and an estimate for the whole collection.

/// Chao1 (bias-corrected) estimate of the number of distinct values in the
/// collection, from the sample's frequency counts. Exact when the sample is the
/// whole collection; never above the number of documents.
///
/// `counts`: how many sampled documents hold each distinct value.
pub fn estimate_distinct(counts: impl Iterator<Item = u64>, num_sampled: u64, num_total: u64) -> u64 {
    let (mut d, mut f1, mut f2) = (0u64, 0u64, 0u64);
    for c in counts {
        d += 1;
        match c {
            1 => f1 += 1,
            2 => f2 += 1,
            _ => {}
        }
    }
    if num_sampled >= num_total {
        return d;
    }
    let (f1, f2) = (f1 as f64, f2 as f64);
    let est = d as f64 + f1 * (f1 - 1.0).max(0.0) / (2.0 * (f2 + 1.0));
    (est.round() as u64).clamp(d, num_total.max(d))
}

pub const ESTIMATOR: &str = "Chao1 (bias-corrected): d + f1(f1-1)/(2(f2+1)), capped at numDocsTotal";

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
