//! Lines and cells more than one writer prints.

use super::{CandidateReport, Report};

/// An invalid key (the server refuses it) shows why, and no performance figures: what it
/// would cost on a cluster is moot.
pub(super) fn figures_shown(c: &CandidateReport) -> bool {
    c.verdict != crate::score::Verdict::Invalid
}
use serde_json::Value;
use std::fmt::Write;

/// One line saying what was analysed.
pub(crate) fn summary_line(r: &Report) -> String {
    let q = &r.inputs.queries;
    let ns = r.namespace.as_deref().unwrap_or("(collection)");
    let mut s = if r.inputs.documents.num_docs_read == 0 {
        format!("{ns}: {}", r.inputs.documents.source)
    } else {
        format!("{ns}: {} documents sampled from {}", r.inputs.documents.num_docs_read, r.inputs.documents.source)
    };
    if !q.sources.is_empty() {
        let skipped: u64 = q.skipped.values().sum();
        let _ = write!(
            s,
            "; {} queries used of {} read ({} on other collections, {} records skipped)",
            q.queries_used, q.queries_read, q.queries_other_namespaces, skipped
        );
    }
    s
}

/// The first line of a workload summary.
pub(crate) fn workload_summary(r: &super::WorkloadReport) -> String {
    let skipped: u64 = r.skipped.values().sum();
    let filters: Vec<String> = r.filters.iter().map(|(k, v)| format!("{k} {v}")).collect();
    format!(
        "{} operations in {} namespaces from {} records of {} ({} records skipped){}",
        r.operations_read,
        r.namespaces.len(),
        r.records_read,
        r.sources.join(", "),
        skipped,
        if filters.is_empty() { String::new() } else { format!("; {}", filters.join(", ")) }
    )
}

/// The "top value" cell: the most common value and its share, or that no value repeats.
pub(crate) fn top_value(c: &crate::metrics::characteristics::KeyCharacteristics) -> String {
    c.most_common_values
        .first()
        .map(|m| {
            if m.frequency <= 1 {
                "no value repeats".to_string()
            } else {
                format!("{} ({:.1}%)", crate::util::text::short_value(&m.value), c.top_value_percentage)
            }
        })
        .unwrap_or_else(|| "-".into())
}

/// The server's headline numbers from `--compare-server` (`serverAnalyzeShardKey`).
pub(crate) fn server_headline(v: &Value) -> String {
    let kc = &v["keyCharacteristics"];
    let mut parts = Vec::new();
    if let Some(n) = kc["numDistinctValues"].as_i64().or_else(|| kc["numDistinctValues"].as_f64().map(|f| f as i64)) {
        parts.push(format!("distinct {n}"));
    }
    if let Some(t) = kc["monotonicity"]["type"].as_str() {
        parts.push(t.to_string());
    }
    if let Some(p) = v["readDistribution"]["percentageOfSingleShardReads"].as_f64() {
        parts.push(format!("single-shard reads {p:.1}%"));
    }
    if let Some(p) = v["writeDistribution"]["percentageOfSingleShardWrites"].as_f64() {
        parts.push(format!("single-shard writes {p:.1}%"));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_headline_from_a_7_0_reply_summary() {
        let v = json!({
            "keyCharacteristics": {"numDistinctValues": 8939, "monotonicity": {"type": "not monotonic"}},
            "readDistribution": {"percentageOfSingleShardReads": 50.0},
            "writeDistribution": {"percentageOfSingleShardWrites": 100.0},
        });
        assert_eq!(server_headline(&v), "distinct 8939, not monotonic, single-shard reads 50.0%, single-shard writes 100.0%");
        assert_eq!(server_headline(&json!({})), "");
    }
}
