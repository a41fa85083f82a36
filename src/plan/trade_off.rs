//! The sentence a collection's choice gets when it differs from the collection's own best:
//! what the plan gains by it, and what that costs. A choice that gains nothing that shows
//! (shares that round alike, a share that falls, a score given up for nothing) gets no
//! sentence: "5% of transactions stay on one shard instead of 5%" is no trade-off.

use crate::model::ShardKey;

/// One side of the choice: a key and its score, or unsharded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Side<'a> {
    pub(crate) key: Option<&'a ShardKey>,
    pub(crate) score: Option<u32>,
}

/// A share of transactions or joins on one shard with the plan's choice and with the
/// collection's own best (the others kept), when there are any.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shares {
    pub(crate) chosen: Option<f64>,
    pub(crate) alone: Option<f64>,
}

impl Shares {
    /// Whole percents, as printed: (chosen, alone), when both are known.
    fn percents(self) -> Option<(i64, i64)> {
        Some(((self.chosen? * 100.0).round() as i64, (self.alone? * 100.0).round() as i64))
    }
}

/// The sentence; None when the choice gains nothing that shows.
pub(crate) fn sentence(alone: Side, chosen: Side, transactions: Shares, joins: Shares) -> Option<String> {
    let (mut gains, mut costs) = (Vec::new(), Vec::new());
    if let Some((c, a)) = transactions.percents() {
        let words = format!("{c}% of transactions stay on one shard instead of {a}%");
        match c.cmp(&a) {
            std::cmp::Ordering::Greater => gains.push(words),
            std::cmp::Ordering::Less => costs.push(words),
            std::cmp::Ordering::Equal => {}
        }
    }
    if let Some((c, a)) = joins.percents() {
        let words = format!("{c}% of joins on one shard instead of {a}%");
        match c.cmp(&a) {
            std::cmp::Ordering::Greater => gains.push(words),
            std::cmp::Ordering::Less => costs.push(words),
            std::cmp::Ordering::Equal => {}
        }
    }
    if let (Some(c), Some(a)) = (chosen.score, alone.score) {
        match c.cmp(&a) {
            std::cmp::Ordering::Greater => gains.push(format!("its own score is {c} instead of {a}")),
            std::cmp::Ordering::Less => costs.push(format!("{} points of its own score ({c} instead of {a})", a - c)),
            std::cmp::Ordering::Equal => {}
        }
    }
    if gains.is_empty() {
        return None;
    }
    let alone_words = match (alone.key, alone.score) {
        (Some(k), Some(s)) => format!("alone it would be sharded on {k} (score {s})"),
        _ => "alone it would stay unsharded".to_string(),
    };
    let here = match (chosen.key, chosen.score) {
        (Some(k), Some(s)) => format!("on {k} (score {s})"),
        _ => "left unsharded".to_string(),
    };
    let mut s = format!("{alone_words}; {here}, {}", gains.join(", and "));
    if !costs.is_empty() {
        s.push_str(&format!(", at the cost of {}", costs.join(" and ")));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> ShardKey {
        ShardKey::parse(s).unwrap()
    }

    #[test]
    fn a_trade_off_states_a_gain_or_is_not_said() {
        let (order, customer) = (k("{orderId: \"hashed\"}"), k("{customerId: \"hashed\"}"));
        let alone = Side { key: Some(&order), score: Some(100) };
        let chosen = Side { key: Some(&customer), score: Some(59) };
        let no_joins = Shares { chosen: None, alone: None };
        // 85% against 25%: the gain, and the 41 points it costs.
        assert_eq!(
            sentence(alone, chosen, Shares { chosen: Some(0.85), alone: Some(0.25) }, no_joins).as_deref(),
            Some("alone it would be sharded on {orderId: \"hashed\"} (score 100); on {customerId: \"hashed\"} (score 59), 85% of transactions stay on one shard instead of 25%, at the cost of 41 points of its own score (59 instead of 100)")
        );
        // 5% and 5.4%: the same as printed; 5% against 7%: a loss. Neither is a trade-off.
        assert_eq!(sentence(alone, chosen, Shares { chosen: Some(0.05), alone: Some(0.054) }, no_joins), None);
        assert_eq!(sentence(alone, chosen, Shares { chosen: Some(0.05), alone: Some(0.07) }, no_joins), None);
        // A small collection sharded, alone unsharded: no score to compare; its gain is the joins'.
        let unsharded = Side { key: None, score: None };
        let s =
            sentence(unsharded, chosen, Shares { chosen: Some(0.4), alone: Some(0.4) }, Shares { chosen: Some(1.0), alone: Some(0.25) });
        assert_eq!(
            s.as_deref(),
            Some("alone it would stay unsharded; on {customerId: \"hashed\"} (score 59), 100% of joins on one shard instead of 25%")
        );
        assert_eq!(sentence(unsharded, chosen, Shares { chosen: Some(0.4), alone: Some(0.4) }, no_joins), None);
    }
}
