//! Evidence: whether the sample and the operations are large enough to support a verdict.
//! Below these thresholds the report says so on its first screen and gives no commands.

use serde::Serialize;

/// Sampled documents a verdict needs (when the sample is not the whole collection).
/// The verdict's cardinality rule caps a key with fewer than 100 distinct values, so a key
/// of 100 equal values (1% of the documents each) must show all of them: a given value is
/// missed by n documents with probability 0.99^n, and by the union bound some one of the
/// 100 is missed with probability at most 100 × 0.99^n: 0.43% at n = 1,000 (at n = 10, every one
/// of the 100 is likely unseen). The same 1,000 documents give the top value's share a 95%
/// Wilson interval at most ±3.1 points wide.
pub(crate) const MIN_DOCS: u64 = 1_000;

/// Sampled operations on the collection a verdict on targeting needs. A query shape that
/// takes a tenth of the operations is missed by n operations with probability 0.9^n: under
/// 5% from n = 29 (0.9^29 = 4.7%), so 30 operations show every such shape with 95%
/// probability; the single-shard share from 30 operations is then within ±18 points
/// (95% Wilson interval at 50%). With no operation at all, targeting is not scored
/// (the recommendation says it rests on the data alone) rather than judged from too few.
pub(crate) const MIN_OPERATIONS: u64 = 30;

/// What the analysis rested on, and whether that is enough for an answer. JSON `evidence`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Evidence {
    /// false: the report gives no recommendation, only the ranking so far.
    pub(crate) sufficient: bool,
    pub(crate) num_docs_sampled: u64,
    pub(crate) num_docs_total: u64,
    /// `MIN_DOCS`, or the collection's size when it is smaller (then it is read whole).
    pub(crate) min_docs: u64,
    pub(crate) num_operations: u64,
    pub(crate) min_operations: u64,
    /// Why the evidence is too thin and what to run for enough; empty when sufficient.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) shortfalls: Vec<String>,
}

impl Evidence {
    pub(crate) fn is_sufficient(&self) -> bool {
        self.sufficient
    }

    /// `documents`: the source holds documents (false for a queries-only run, which
    /// reads none and is judged on its operations). `sampled`: documents read;
    /// `total`: the collection's documents; `operations`: operations on the collection.
    /// `given_sample`: the documents are a file said to be a sample of the collection
    /// (`--total-docs`), so more come from a larger file rather than `--sample-size`.
    pub(crate) fn of(documents: bool, given_sample: bool, sampled: u64, total: u64, operations: u64) -> Evidence {
        let mut shortfalls = Vec::new();
        // A sample that is the whole collection has no sampling error, however small.
        let min_docs = MIN_DOCS.min(total);
        if documents && sampled < min_docs {
            let more = if given_sample {
                format!("give a file of {MIN_DOCS} or more of its documents")
            } else {
                format!("run again with --sample-size {MIN_DOCS} or more (the default is 100000)")
            };
            shortfalls.push(format!(
                "{} of {} documents sampled, fewer than the {} a verdict needs (a value holding 1% of the documents can go unseen): {more}",
                fmt(sampled),
                fmt(total),
                fmt(MIN_DOCS),
            ));
        }
        if operations > 0 && operations < MIN_OPERATIONS {
            shortfalls.push(format!(
                "{} sampled {} on the collection, fewer than the {MIN_OPERATIONS} a verdict on targeting needs (a query shape taking a tenth of the operations can go unseen): give a longer slow-query log or profiler window, or record the workload with `shardkey sample` (README \"Sampling queries\")",
                operations,
                if operations == 1 { "operation" } else { "operations" }
            ));
        }
        Evidence {
            sufficient: shortfalls.is_empty(),
            num_docs_sampled: sampled,
            num_docs_total: total,
            min_docs,
            num_operations: operations,
            min_operations: MIN_OPERATIONS,
            shortfalls,
        }
    }

    /// The first screen's words when the evidence is too thin: what is missing, what to run,
    /// and which key leads so far.
    pub(crate) fn words(&self, leading: Option<&str>) -> Option<String> {
        if self.sufficient {
            return None;
        }
        let lead = leading.map(|k| format!(" {k} leads so far, on this evidence;")).unwrap_or_default();
        Some(format!("not enough evidence for an answer, so no commands:{lead} {}", self.shortfalls.join("; ")))
    }
}

fn fmt(n: u64) -> String {
    crate::util::text::fmt_count(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thresholds_hold_their_stated_probabilities() {
        // 100 values of 1% each: some one unseen by 1,000 documents with probability ≤ 0.5%.
        assert!(100.0 * 0.99f64.powi(MIN_DOCS as i32) < 0.005);
        // A shape of 10% of the operations: unseen by 30 operations with probability < 5%, by 28 not.
        assert!(0.9f64.powi(MIN_OPERATIONS as i32 - 1) < 0.05);
        assert!(0.9f64.powi(28) > 0.05);
    }

    #[test]
    fn ten_documents_of_four_million_are_not_enough() {
        let e = Evidence::of(true, false, 10, 4_017_013, 0);
        assert!(!e.sufficient);
        let w = e.words(Some("{orderNumber: 1}")).unwrap();
        assert!(w.starts_with("not enough evidence for an answer, so no commands: {orderNumber: 1} leads so far"), "{w}");
        assert!(w.contains("10 of 4,017,013 documents sampled, fewer than the 1,000"), "{w}");
        assert!(w.contains("--sample-size 1000 or more"), "{w}");
        let file = Evidence::of(true, true, 10, 5_000_000, 0);
        assert!(file.shortfalls[0].ends_with("give a file of 1000 or more of its documents"), "{:?}", file.shortfalls);
    }

    #[test]
    fn a_small_collection_read_whole_is_enough() {
        assert!(Evidence::of(true, false, 10, 10, 0).sufficient);
        assert_eq!(Evidence::of(true, false, 10, 10, 0).min_docs, 10);
        assert!(Evidence::of(true, false, 1_000, 5_000_000, 30).sufficient);
        assert!(Evidence::of(false, false, 0, 0, 30).sufficient, "queries only: judged on the operations");
    }

    #[test]
    fn few_operations_are_not_enough_and_none_is_not_judged() {
        let e = Evidence::of(false, false, 0, 0, 29);
        assert!(!e.sufficient);
        assert!(e.shortfalls[0].starts_with("29 sampled operations on the collection, fewer than the 30"), "{:?}", e.shortfalls);
        assert!(Evidence::of(true, false, 10_000, 10_000, 0).sufficient, "no operation: targeting is not scored, the caveat says so");
        assert_eq!(Evidence::of(true, false, 5, 100_000, 3).shortfalls.len(), 2);
    }
}
