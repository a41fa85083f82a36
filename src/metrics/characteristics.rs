//! `keyCharacteristics`: what the sample says about a key's values, with the
//! server's names (numDocsTotal … monotonicity) and ours beside them
//! (estimatedNumDistinctValues, topValuePercentage, jumboChunkRisk, sketch).
//! The pieces are computed in `cardinality`, `frequency` and `monotonicity`;
//! this module assembles them and owns the output type.

use super::settings::Settings;
use super::{cardinality, frequency, monotonicity};
use crate::sample::{HashedGroups, KeySample, Sample, ValueCount};
use cardinality::Estimator;
use monotonicity::Monotonicity;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct KeyCharacteristics {
    pub(crate) num_docs_total: u64,
    pub(crate) num_docs_sampled: u64,
    pub(crate) avg_doc_size_bytes: u64,
    pub(crate) num_distinct_values: u64,
    pub(crate) most_common_values: Vec<MostCommonValue>,
    /// The most common value whatever `--top` shows (0 shows none): what the score reads.
    #[serde(skip)]
    pub(crate) top_value: Option<MostCommonValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) is_unique: Option<bool>,
    pub(crate) monotonicity: Monotonicity,
    // Beyond the server:
    pub(crate) estimated_num_distinct_values: Estimate,
    /// Percentage of sampled documents holding the most common value.
    pub(crate) top_value_percentage: f64,
    /// Its 95% Wilson interval for the collection (both ends equal when the sample is the
    /// whole collection); the verdict uses `upper`, the pessimistic end.
    pub(crate) top_value_percentage_range: frequency::ShareRange,
    pub(crate) num_docs_missing_key_fields: u64,
    /// Documents with an array in a key field (the server refuses the key: BadValue).
    pub(crate) num_docs_with_array_key_values: u64,
    pub(crate) jumbo_chunk_risk: JumboRisk,
    /// A key with a hashed field: what hashing did to its values (`numDistinctValues`,
    /// `mostCommonValues` and the jumbo risk count hashed values, as the server groups the
    /// hashed index's keys).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) hashing: Option<Hashing>,
    /// Present when the sample had too many distinct values to count exactly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sketch: Option<SketchReport>,
    /// Documents that lack a key field or hold null there (the policy's
    /// `max_missing_key_percent`); not in the JSON, whose `numDocsMissingKeyFields` is the server's
    /// count of absent fields only.
    #[serde(skip)]
    pub(crate) null_or_missing: NullOrMissing,
}

/// Counted documents whose key value is null somewhere: absent, or null.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct NullOrMissing {
    /// Documents with at least one key field missing or null.
    pub(crate) docs: u64,
    /// Documents counted (arrays excluded): the share's denominator.
    pub(crate) of: u64,
    /// Per key field, in key order.
    pub(crate) by_field: Vec<FieldCount>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FieldCount {
    pub(crate) field: String,
    pub(crate) docs: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Hashing {
    /// The hashed field's path.
    pub(crate) field: String,
    pub(crate) num_distinct_values_before_hashing: u64,
    pub(crate) num_distinct_hashed_values: u64,
    /// Distinct doubles with a fraction in the hashed field: truncated to 64-bit integers
    /// before hashing, so those in one integer interval share one hashed value.
    pub(crate) num_distinct_fractional_doubles: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MostCommonValue {
    pub(crate) value: Value,
    pub(crate) frequency: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Estimate {
    /// `value` the estimate, `lower`..`upper` its range; the verdict uses `lower`.
    #[serde(flatten)]
    pub(crate) range: cardinality::DistinctRange,
    pub(crate) estimator: Estimator,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JumboRisk {
    pub(crate) chunk_size_bytes: u64,
    /// The first `--top` of them, largest first.
    pub(crate) values: Vec<JumboValueReport>,
    /// All of them, and the largest, whatever `--top` shows: what the score reads.
    #[serde(skip)]
    pub(crate) num_values: usize,
    #[serde(skip)]
    pub(crate) largest: Option<JumboValueReport>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JumboValueReport {
    pub(crate) value: Value,
    pub(crate) estimated_docs: u64,
    pub(crate) estimated_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SketchReport {
    pub(crate) distinct_values: String,
    pub(crate) most_common_values: String,
    pub(crate) frequency_error_bound: u64,
}

/// `keyCharacteristics` of a candidate, or `{"notMeasured": why}` without documents.
pub(crate) fn serialize_optional<S: serde::Serializer>(kc: &Option<KeyCharacteristics>, s: S) -> Result<S::Ok, S::Error> {
    match kc {
        Some(k) => k.serialize(s),
        None => serde_json::json!({"notMeasured": NOT_MEASURED}).serialize(s),
    }
}

/// Why `keyCharacteristics` is absent from a queries-only report.
pub(crate) const NOT_MEASURED: &str =
    "no documents were given (query logs only): cardinality, frequency, monotonicity and data size need --docs or --uri";

/// What the collection is known to hold beyond the sample.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CollectionSize {
    /// Documents in the collection (at least the sample's).
    pub(crate) num_docs_total: u64,
    /// The source's average document size, when it knows it (a live source
    /// projects key fields only, so the sample cannot measure it).
    pub(crate) avg_doc_size_bytes: Option<u64>,
}

/// The characteristics of one key. `order` is a separate insertion-ordered
/// sample when the main one is not in insertion order (live `$sample`);
/// `ks_positions` gives `ks`'s insertion positions in key order (computed once per key).
#[allow(clippy::too_many_arguments)]
pub(crate) fn measure<'p>(
    ks: &KeySample,
    order: Option<&KeySample>,
    ks_positions: &dyn Fn() -> &'p [u64],
    sample: &Sample,
    size: CollectionSize,
    settings: &Settings,
    is_unique: Option<bool>,
    hashed: Option<&HashedGroups>,
) -> KeyCharacteristics {
    let total = size.num_docs_total;
    let sampled = sample.num_docs;
    let avg = size.avg_doc_size_bytes.unwrap_or(sample.total_bytes.checked_div(sampled).unwrap_or(0));
    let counted = ks.docs_counted();
    // A hashed key is counted on its hashed values, as analyzeShardKey groups the hashed
    // index's keys (mongodb/mongo 3e76161 src/mongo/db/s/analyze_shard_key_cmd_util.cpp
    // makeAggregateRequestForCardinalityAndFrequency: $group on {$meta: "indexKey"}).
    let groups = hashed.and_then(|h| h.groups.as_deref());
    let freqs: &[ValueCount] = groups.unwrap_or(ks.frequencies());
    // At least the top value, which the score reads whatever `--top` lists.
    let mut mcv: Vec<MostCommonValue> = frequency::most_common(freqs, settings.num_most_common.max(1))
        .into_iter()
        .map(|v| MostCommonValue { value: ks.key.value_json(&v.value, settings.redact), frequency: v.count })
        .collect();
    let top_value = mcv.first().cloned();
    mcv.truncate(settings.num_most_common);
    let mono = match monotonicity::by_key_shape(&ks.key) {
        Some(m) => m,
        None => match order {
            Some(o) => monotonicity::measure(&ks.key, &o.insertion_positions_in_key_order(), o.order_sample_has_one_value()),
            None => monotonicity::measure(&ks.key, ks_positions(), ks.order_sample_has_one_value()),
        },
    };
    let all_jumbo = frequency::jumbo_values(freqs, counted.max(1), total, avg, settings.chunk_size_bytes);
    let num_jumbo = all_jumbo.len();
    let mut jumbo: Vec<JumboValueReport> = all_jumbo
        .into_iter()
        .take(settings.num_most_common.max(1))
        .map(|j| JumboValueReport {
            value: ks.key.value_json(&j.value, settings.redact),
            estimated_docs: j.estimated_docs,
            estimated_bytes: j.estimated_bytes,
        })
        .collect();
    let largest_jumbo = jumbo.first().cloned();
    jumbo.truncate(settings.num_most_common);
    // A sketch never counts more values than documents; a unique supporting index
    // makes every value distinct (the server then skips grouping).
    let num_distinct = groups.map_or(ks.num_distinct(), |g| g.len() as u64);
    let distinct = if is_unique == Some(true) { counted } else { num_distinct.min(counted) };
    let profile = match groups {
        Some(g) => Some(g.iter().fold((0, 0, 0), |(d, f1, f2), g| (d + 1, f1 + (g.count == 1) as u64, f2 + (g.count == 2) as u64))),
        None => ks.count_profile(),
    };
    let estimated = if is_unique == Some(true) {
        Estimate { range: cardinality::DistinctRange::exact(total), estimator: Estimator::UniqueIndex }
    } else if let Some((d, f1, _)) = profile {
        let range = cardinality::gee(d, f1, counted, total);
        Estimate { range, estimator: if counted >= total { Estimator::Exact } else { Estimator::Gee } }
    } else {
        // The sketch's count is itself an estimate (its standard error in `sketch`); scaled, an upper bound.
        let upper = cardinality::scale_distinct(distinct, counted, total);
        Estimate { range: cardinality::DistinctRange { value: upper, lower: distinct, upper }, estimator: Estimator::Sketch }
    };
    KeyCharacteristics {
        num_docs_total: total,
        num_docs_sampled: sampled,
        avg_doc_size_bytes: avg,
        num_distinct_values: distinct,
        most_common_values: mcv,
        top_value,
        is_unique,
        monotonicity: mono,
        estimated_num_distinct_values: estimated,
        top_value_percentage: frequency::top_share(freqs, counted) * 100.0,
        top_value_percentage_range: frequency::top_share_range(freqs, counted, total),
        hashing: hashed.map(|h| Hashing {
            field: ks.key.hashed_position().map(|i| ks.key.fields[i].path.clone()).unwrap_or_default(),
            num_distinct_values_before_hashing: h.raw_distinct,
            num_distinct_hashed_values: h.hashed_distinct,
            num_distinct_fractional_doubles: h.fractional_doubles,
        }),
        sketch: ks.sketch_info().map(|i| SketchReport {
            distinct_values: format!(
                "HyperLogLog, 2^{} registers: standard error {:.2}%",
                i.hll_precision,
                i.distinct_standard_error * 100.0
            ),
            most_common_values: format!(
                "Misra-Gries, {} counters: each frequency is a lower bound, at most {} below the true count",
                i.heavy_hitter_counters, i.frequency_error_bound
            ),
            frequency_error_bound: i.frequency_error_bound,
        }),
        num_docs_missing_key_fields: ks.docs_missing_fields,
        null_or_missing: NullOrMissing {
            docs: ks.docs_null_or_missing,
            of: counted,
            by_field: ks
                .key
                .fields
                .iter()
                .enumerate()
                .map(|(i, f)| FieldCount { field: f.path.clone(), docs: ks.null_or_missing_by_field.get(i).copied().unwrap_or(0) })
                .collect(),
        },
        num_docs_with_array_key_values: ks.docs_with_arrays,
        jumbo_chunk_risk: JumboRisk {
            chunk_size_bytes: settings.chunk_size_bytes,
            values: jumbo,
            num_values: num_jumbo,
            largest: largest_jumbo,
        },
    }
}
