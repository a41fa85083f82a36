//! Pearson's correlation coefficient, the one implementation (monotonicity, and the
//! proposals' "a time field that follows the `_id`'s creation time").

/// r of the points (x(i), y(i)) for i in 0..n; None with fewer than two points or when
/// either coordinate is constant (r is undefined there).
pub(crate) fn pearson(n: usize, x: impl Fn(usize) -> f64, y: impl Fn(usize) -> f64) -> Option<f64> {
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mean_x = (0..n).map(&x).sum::<f64>() / nf;
    let mean_y = (0..n).map(&y).sum::<f64>() / nf;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (dx, dy) = (x(i) - mean_x, y(i) - mean_y);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    Some(sxy / (sxx * syy).sqrt())
}

/// `pearson` of (x, y) pairs, except that an x that never changes while y does is no
/// correlation (0), not undefined: a reference whose documents were all created in one
/// second does not grow with the documents that name it.
pub(crate) fn follows(pairs: &[(f64, f64)]) -> Option<f64> {
    let varies = |f: fn(&(f64, f64)) -> f64| pairs.iter().map(f).any(|v| pairs.first().is_some_and(|p| f(p) != v));
    if pairs.len() >= 2 && !varies(|p| p.0) && varies(|p| p.1) {
        return Some(0.0);
    }
    pearson(pairs.len(), |i| pairs[i].0, |i| pairs[i].1)
}

/// Pairs at least for a time to be judged not to follow another (fewer say nothing).
const MIN_JUDGED_PAIRS: usize = 30;
/// The server's monotonicity threshold (`analyzeShardKey`'s 0.7).
const FOLLOWS_AT: f64 = 0.7;

/// Is x measured not to follow y: at least 30 pairs, and `follows` defined and below 0.7?
/// (A reference's time against the documents' creation times, in the proposals and the
/// insert order alike: one that does not follow them does not grow with inserts.)
pub(crate) fn measured_not_to_follow(pairs: &[(f64, f64)]) -> bool {
    pairs.len() >= MIN_JUDGED_PAIRS && follows(pairs).is_some_and(|r| r < FOLLOWS_AT)
}

#[cfg(test)]
mod tests {
    use super::pearson;

    #[test]
    fn by_hand() {
        // (0,1) (1,0) (2,3) (3,2): means 1.5; sxy = 3, sxx = syy = 5 -> 0.6
        let y = [1.0, 0.0, 3.0, 2.0];
        assert_eq!(pearson(4, |i| i as f64, |i| y[i]), Some(0.6));
        assert_eq!(pearson(3, |i| i as f64, |i| -2.0 * i as f64), Some(-1.0));
        assert_eq!(pearson(3, |i| i as f64, |_| 7.0), None, "constant y");
        assert_eq!(pearson(1, |i| i as f64, |i| i as f64), None);
    }

    /// 30 pairs at least: the same constant x (r = 0 against a varying y) is judged from 30.
    #[test]
    fn judged_not_to_follow_from_thirty_pairs() {
        let pairs = |n: usize| (0..n).map(|i| (1.0, i as f64)).collect::<Vec<_>>();
        assert!(!super::measured_not_to_follow(&pairs(29)) && super::measured_not_to_follow(&pairs(30)));
        let following: Vec<(f64, f64)> = (0..40).map(|i| (i as f64, i as f64)).collect();
        assert!(!super::measured_not_to_follow(&following));
    }

    #[test]
    fn a_constant_x_follows_nothing() {
        assert_eq!(super::follows(&[(5.0, 1.0), (5.0, 2.0), (5.0, 3.0)]), Some(0.0));
        assert_eq!(super::follows(&[(5.0, 1.0), (5.0, 1.0)]), None, "neither varies");
        assert_eq!(super::follows(&[(1.0, 7.0), (2.0, 7.0)]), None, "constant y");
        assert_eq!(super::follows(&[(0.0, 1.0), (1.0, 0.0), (2.0, 3.0), (3.0, 2.0)]), Some(0.6));
    }
}
