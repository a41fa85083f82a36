//! The load the logs show, in operations per second: at their busiest, not averaged over
//! the whole span. A log of a 50 s burst followed by a few queries an hour later averages to
//! a fraction of the rate the shards must sustain; sizing needs the busy part.

use serde::Serialize;

/// Windows tried, shortest first: the first holding enough sampled operations gives the rate.
const WINDOWS_MS: [i64; 2] = [10_000, 60_000];
/// Sampled operations a window must hold for its rate to speak (about 10% relative error).
const ENOUGH: usize = 100;

/// Operations per second at the logs' busiest window, and on average over their span.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LoadRate {
    pub(crate) per_second: f64,
    /// The busiest window's length (the whole span when no window held enough operations).
    pub(crate) window_seconds: f64,
    pub(crate) average_per_second: f64,
}

/// `times_ms`: the sampled operations' times (any order); `found`: the operations they stand
/// for (the sample's scale). None without two distinct times.
pub(crate) fn busiest(times_ms: &[i64], found: u64) -> Option<LoadRate> {
    let mut t = times_ms.to_vec();
    t.sort_unstable();
    let (first, last) = (*t.first()?, *t.last()?);
    let span = last - first;
    if span <= 0 {
        return None;
    }
    let scale = found as f64 / t.len() as f64;
    let average_per_second = found as f64 * 1000.0 / span as f64;
    let (count, window) =
        WINDOWS_MS.iter().filter(|w| **w < span).map(|&w| (most_within(&t, w), w)).find(|(n, _)| *n >= ENOUGH).unwrap_or((t.len(), span));
    Some(LoadRate {
        per_second: (count as f64 * scale * 1000.0 / window as f64).max(average_per_second),
        window_seconds: window as f64 / 1000.0,
        average_per_second,
    })
}

/// The most sorted times within any half-open window of `w` ms (two pointers).
fn most_within(sorted: &[i64], w: i64) -> usize {
    let (mut best, mut i) = (0, 0);
    for (j, &tj) in sorted.iter().enumerate() {
        while tj - sorted[i] >= w {
            i += 1;
        }
        best = best.max(j + 1 - i);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_quiet_is_rated_at_the_burst() {
        // Hand count: 1,770 operations in 10 s (177/s), then 3 more 200 s later.
        let mut t: Vec<i64> = (0..1770).map(|i| i * 10_000 / 1770).collect();
        t.extend([210_000, 220_000, 230_000]);
        let r = busiest(&t, 1773).unwrap();
        assert_eq!(r.window_seconds, 10.0);
        assert!((r.per_second - 177.0).abs() < 0.5, "{r:?}");
        assert!((r.average_per_second - 1773.0 / 230.0).abs() < 0.01, "{r:?}");
    }

    #[test]
    fn a_sample_scales_to_the_operations_found() {
        // 200 kept of 2,000 found, evenly over 100 s: 20/s in every window.
        let t: Vec<i64> = (0..200).map(|i| i * 500).collect();
        let r = busiest(&t, 2000).unwrap();
        assert_eq!(r.window_seconds, 60.0, "10 s windows hold 20 kept operations, under {ENOUGH}");
        assert!((r.per_second - 20.0).abs() < 0.5, "{r:?}");
    }

    #[test]
    fn few_operations_use_the_span() {
        let r = busiest(&[0, 1_000, 30_000], 3).unwrap();
        assert_eq!(r.window_seconds, 30.0);
        assert!((r.per_second - 0.1).abs() < 1e-9);
        assert_eq!(busiest(&[5, 5], 2), None);
        assert_eq!(busiest(&[], 0), None);
    }
}
