//! The one place that turns metrics into a 0–100 score, a verdict and reasons.
//!
//! score = 100 × (0.25·cardinality + 0.25·frequency + 0.20·monotonicity + 0.30·targeting)
//! - cardinality: log10(estimated distinct values) / 4, capped at 1 (10,000+ values = 1)
//! - frequency: 1 when the top value holds ≤ 2% of documents, 0 at ≥ 25%, linear between
//! - monotonicity: not monotonic 1, unknown 0.7, monotonic 0
//! - targeting: (single-shard + ½·multi-shard) / all sampled reads and writes; 0.5 with no queries
//!
//! Caps: an array in a key field → 0 (invalid); jumbo-chunk risk → ≤ 40; top value ≥ 25% → ≤ 45;
//! fewer than 100 distinct values → ≤ 35; monotonic → ≤ 50.

use crate::metrics::distribution::{ReadDistribution, WriteDistribution};
use crate::metrics::monotonicity::MonotonicityType;
use crate::report::{short_value, KeyCharacteristics, Verdict};

#[derive(Debug, Clone)]
pub struct Score {
    pub score: u32,
    pub verdict: Verdict,
    pub reasons: Vec<String>,
}

fn fmt_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1024.0 * 1024.0))
}

pub fn score(kc: &KeyCharacteristics, reads: &ReadDistribution, writes: &WriteDistribution) -> Score {
    let mut problems: Vec<String> = Vec::new();
    let mut strengths: Vec<String> = Vec::new();

    if kc.num_docs_with_array_key_values > 0 {
        return Score {
            score: 0,
            verdict: Verdict::Invalid,
            reasons: vec![format!(
                "{} sampled documents hold an array in a key field: MongoDB refuses such a shard key (BadValue)",
                fmt_count(kc.num_docs_with_array_key_values)
            )],
        };
    }
    let mut cap = 100.0f64;

    // Cardinality.
    let est = kc.estimated_num_distinct_values.value.max(1);
    let card = ((est as f64).log10() / 4.0).clamp(0.0, 1.0);
    if est < 100 {
        cap = cap.min(35.0);
        problems.push(format!(
            "low cardinality: only {} distinct values, so the collection can never be split into more than {} chunks and at most {} shards can hold data",
            fmt_count(est), fmt_count(est), fmt_count(est)
        ));
    } else if est < 1000 {
        problems.push(format!(
            "limited cardinality: about {} distinct values caps the collection at {} chunks",
            fmt_count(est),
            fmt_count(est)
        ));
    } else {
        strengths.push(format!("high cardinality: about {} distinct values", fmt_count(est)));
    }

    // Frequency.
    let share = kc.top_value_percentage / 100.0;
    let freq = 1.0 - ((share - 0.02) / 0.23).clamp(0.0, 1.0);
    if let Some(top) = kc.most_common_values.first() {
        if share >= 0.25 {
            cap = cap.min(45.0);
        }
        if share >= 0.10 {
            problems.push(format!(
                "hot value: {} holds {:.1}% of documents; all of them stay in one chunk on one shard",
                short_value(&top.value),
                kc.top_value_percentage
            ));
        }
    }
    if let Some(j) = kc.jumbo_chunk_risk.values.first() {
        cap = cap.min(40.0);
        problems.push(format!(
            "jumbo-chunk risk: value {} would hold about {} documents ({}), more than the {} chunk size; such a chunk cannot be split or moved{}",
            short_value(&j.value),
            fmt_count(j.estimated_docs),
            mib(j.estimated_bytes),
            mib(kc.jumbo_chunk_risk.chunk_size_bytes),
            if kc.jumbo_chunk_risk.values.len() > 1 {
                format!(" ({} values at risk)", kc.jumbo_chunk_risk.values.len())
            } else {
                String::new()
            }
        ));
    }
    if kc.num_docs_missing_key_fields > 0 && kc.num_docs_sampled > 0 {
        let p = kc.num_docs_missing_key_fields as f64 * 100.0 / kc.num_docs_sampled as f64;
        problems.push(format!(
            "{} sampled documents ({:.1}%) lack a key field; MongoDB files them all under null",
            fmt_count(kc.num_docs_missing_key_fields),
            p
        ));
    }

    // Monotonicity.
    let r = kc.monotonicity.record_id_correlation_coefficient;
    let mono = match kc.monotonicity.kind {
        MonotonicityType::Monotonic => {
            cap = cap.min(50.0);
            let dir = if r.unwrap_or(1.0) < 0.0 { "decreasing" } else { "increasing" };
            let end = if r.unwrap_or(1.0) < 0.0 { "lowest (MinKey)" } else { "highest (MaxKey)" };
            problems.push(format!(
                "monotonic ({dir}, correlation {:.2} with insertion order): every insert lands in the {end} chunk, so one shard takes all inserts",
                r.unwrap_or(0.0)
            ));
            0.0
        }
        MonotonicityType::NotMonotonic => {
            strengths.push(match r {
                Some(r) if r != 0.0 => format!("not monotonic (correlation {r:.2}): inserts spread across chunks"),
                _ => "hashed: inserts spread evenly across chunks".to_string(),
            });
            1.0
        }
        MonotonicityType::Unknown => 0.7,
    };

    // Targeting.
    let nr = reads.sample_size.total;
    let nw = writes.sample_size.total;
    let targeting = if nr + nw == 0 {
        problems.push("no query sample for this collection: targeting was not measured (score assumes 50%)".into());
        0.5
    } else {
        let pr = |x: Option<f64>| x.unwrap_or(0.0) / 100.0;
        let single = pr(reads.percentage_of_single_shard_reads) * nr as f64
            + pr(writes.percentage_of_single_shard_writes) * nw as f64;
        let multi = pr(reads.percentage_of_multi_shard_reads) * nr as f64
            + pr(writes.percentage_of_multi_shard_writes) * nw as f64;
        if nr > 0 {
            let sg = reads.percentage_of_scatter_gather_reads.unwrap_or(0.0);
            let s = reads.percentage_of_single_shard_reads.unwrap_or(0.0);
            if sg >= 20.0 {
                problems.push(format!("{sg:.1}% of {} sampled reads are scatter-gather (sent to every shard)", fmt_count(nr)));
            }
            if s >= 50.0 {
                strengths.push(format!("{s:.1}% of {} sampled reads target a single shard", fmt_count(nr)));
            }
        }
        if nw > 0 {
            let wo = writes.percentage_of_single_writes_without_shard_key.unwrap_or(0.0)
                + writes.percentage_of_multi_writes_without_shard_key.unwrap_or(0.0);
            if wo >= 20.0 {
                problems.push(format!(
                    "{wo:.1}% of {} sampled writes do not carry the shard key (broadcast or two-phase)",
                    fmt_count(nw)
                ));
            }
            let sku = writes.percentage_of_shard_key_updates.unwrap_or(0.0);
            if sku > 0.0 {
                problems.push(format!("{sku:.1}% of sampled writes change the shard key (documents move between shards)"));
            }
        }
        (single + 0.5 * multi) / (nr + nw) as f64
    };

    let raw = 100.0 * (0.25 * card + 0.25 * freq + 0.20 * mono + 0.30 * targeting);
    let s = raw.min(cap).round().clamp(0.0, 100.0) as u32;
    let verdict = match s {
        75..=100 => Verdict::Good,
        50..=74 => Verdict::Acceptable,
        25..=49 => Verdict::Poor,
        _ => Verdict::Bad,
    };
    let mut reasons = problems;
    reasons.extend(strengths);
    Score { score: s, verdict, reasons }
}
