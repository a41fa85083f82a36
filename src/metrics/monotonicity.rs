//! Monotonicity: Pearson correlation between a document's position in key order
//! and its insertion position (the server uses recordIds), |r| >= 0.7 is monotonic.

use crate::model::{KeyKind, ShardKey};
use serde::Serialize;

pub(crate) const THRESHOLD: f64 = 0.7;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum MonotonicityType {
    #[serde(rename = "monotonic")]
    Monotonic,
    #[serde(rename = "not monotonic")]
    NotMonotonic,
    #[serde(rename = "unknown")]
    Unknown,
}

impl MonotonicityType {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            MonotonicityType::Monotonic => "monotonic",
            MonotonicityType::NotMonotonic => "not monotonic",
            MonotonicityType::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Monotonicity {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) record_id_correlation_coefficient: Option<f64>,
    #[serde(rename = "type")]
    pub(crate) kind: MonotonicityType,
}

/// What the key's shape alone decides: hashed first field → not monotonic (0);
/// hashed later field → unknown; otherwise it must be measured.
pub(crate) fn by_key_shape(key: &ShardKey) -> Option<Monotonicity> {
    match key.hashed_position() {
        Some(0) => Some(Monotonicity { record_id_correlation_coefficient: Some(0.0), kind: MonotonicityType::NotMonotonic }),
        Some(_) => Some(Monotonicity { record_id_correlation_coefficient: None, kind: MonotonicityType::Unknown }),
        None => None,
    }
}

/// Pearson correlation of (i, insertion_positions[i]), where the positions are
/// listed in key order (equal keys in insertion order, as in an index). Also of
/// (i, creation time) (`u32`s: half the memory of the gathered times).
pub(crate) fn pearson_with_index<T: Copy + Into<u64>>(insertion_positions_in_key_order: &[T]) -> Option<f64> {
    let p = insertion_positions_in_key_order;
    crate::util::stats::pearson(p.len(), |i| i as f64, |i| p[i].into() as f64)
}

/// The server rounds the coefficient to 10 decimals.
pub(crate) fn round10(r: f64) -> f64 {
    (r * 1e10).round() / 1e10
}

pub(crate) fn classify(r: Option<f64>) -> Monotonicity {
    match r.map(round10) {
        Some(r) => Monotonicity {
            record_id_correlation_coefficient: Some(r),
            kind: if r.abs() >= THRESHOLD { MonotonicityType::Monotonic } else { MonotonicityType::NotMonotonic },
        },
        None => Monotonicity { record_id_correlation_coefficient: None, kind: MonotonicityType::Unknown },
    }
}

/// Monotonicity of a key given its documents' insertion positions in key order
/// (`calculateMonotonicity`): when every scanned document holds one and the same
/// value, "not monotonic" with coefficient 0 (equal keys sit in insertion order,
/// which alone would read as a perfect correlation).
pub(crate) fn measure(key: &ShardKey, insertion_positions_in_key_order: &[u64], one_value: bool) -> Monotonicity {
    if let Some(m) = by_key_shape(key) {
        return m;
    }
    debug_assert!(key.fields.iter().all(|f| f.kind == KeyKind::Range));
    if one_value && !insertion_positions_in_key_order.is_empty() {
        return Monotonicity { record_id_correlation_coefficient: Some(0.0), kind: MonotonicityType::NotMonotonic };
    }
    classify(pearson_with_index(insertion_positions_in_key_order))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn increasing_decreasing_and_shuffled() {
        let inc: Vec<u64> = (0..100).collect();
        assert!((pearson_with_index(&inc).unwrap() - 1.0).abs() < 1e-12);
        let dec: Vec<u64> = (0..100).rev().collect();
        let r = pearson_with_index(&dec).unwrap();
        assert!((r + 1.0).abs() < 1e-12);
        assert_eq!(classify(Some(r)).kind, MonotonicityType::Monotonic);
        // by hand: positions [1, 0, 3, 2]: x mean 1.5, y mean 1.5, sxy = 3, sxx = syy = 5 -> 0.6
        let r = pearson_with_index(&[1u64, 0, 3, 2]).unwrap();
        assert!((r - 0.6).abs() < 1e-12);
        assert_eq!(classify(Some(r)).kind, MonotonicityType::NotMonotonic);
        assert_eq!(classify(None).kind, MonotonicityType::Unknown);
    }

    #[test]
    fn hashed_keys_by_shape() {
        let k = ShardKey::parse("{a: \"hashed\"}").unwrap();
        let m = measure(&k, &[0, 1, 2], false);
        assert_eq!(m.kind, MonotonicityType::NotMonotonic);
        assert_eq!(m.record_id_correlation_coefficient, Some(0.0));
        let k = ShardKey::parse("{a: 1, b: \"hashed\"}").unwrap();
        assert_eq!(measure(&k, &[0, 1, 2], false).kind, MonotonicityType::Unknown);
    }

    #[test]
    fn one_value_is_not_monotonic_and_coefficients_have_10_decimals() {
        let k = ShardKey::parse("{a: 1}").unwrap();
        let m = measure(&k, &[0, 1, 2, 3], true);
        assert_eq!(m, Monotonicity { record_id_correlation_coefficient: Some(0.0), kind: MonotonicityType::NotMonotonic });
        assert_eq!(measure(&k, &[0, 1, 2, 3], false).kind, MonotonicityType::Monotonic);
        // [0, 2, 1, 3]: sxy = 4, sxx = syy = 5 → 0.8 exactly
        assert_eq!(classify(pearson_with_index(&[0u64, 2, 1, 3])).record_id_correlation_coefficient, Some(0.8));
        // 1/3 rounds to 0.3333333333
        assert_eq!(round10(1.0 / 3.0), 0.3333333333);
    }
}

#[cfg(test)]
#[path = "monotonicity_jstests.rs"]
mod jstests;
