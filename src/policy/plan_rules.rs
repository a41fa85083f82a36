//! The judges of the rules that hold a database to the plan its policy's `[plan]` declares
//! (`RULES` entries with `Judge::Plan`), and what caused a violation.

use super::judge::{Finding, PlanInput, Threshold};
use super::result::Culprit;
use serde_json::json;

/// `forbid_refused_keys`: a declared key the server refuses (a unique index blocks it, or it is
/// invalid on the collection) fails, named with why.
pub(super) fn refused_keys(_: Threshold, p: &PlanInput) -> Finding {
    let words: Vec<String> = p.refused.iter().map(|(ns, why, _)| format!("{ns}: {why}")).collect();
    Finding::Measured {
        actual: json!(words.len()),
        passed: words.is_empty(),
        message: if words.is_empty() { "the server accepts every declared key".into() } else { words.join("; ") },
    }
}

/// `max_single_shard_loss_percent`: the points of transactions on one shard the declared plan
/// gives up against shardkey's own, at most this many.
pub(super) fn share_loss(t: Threshold, p: &PlanInput) -> Finding {
    let max = match t {
        Threshold::Percent(x) => x,
        _ => 0.0,
    };
    // Most transactions unplaced: both shares are mostly the guess for those, and a "0.0 points
    // fewer" passed a trial's gate on nothing measured (pymongo's inserts, logged without
    // their documents).
    if p.not_placed_percent.is_some_and(|x| x >= 50.0) {
        return Finding::Skipped(
            "most transactions hold inserts the plan cannot place (logged without their documents): the single-shard shares rest on a guess for them, not on what was seen; the plan's transactions.notPlaced says what would show them",
        );
    }
    let (Some(declared), Some(own)) = (p.declared_share, p.own_share) else {
        return Finding::Skipped(if p.seen_in_part {
            "transactions seen in part (the profiler): the single-shard shares are ranges; give the log of the same window, recorded with slowms -1, for one figure"
        } else {
            "no transaction in the logs: no single-shard share to compare"
        });
    };
    let loss = (own - declared) * 100.0;
    Finding::Measured {
        actual: json!((loss * 1e4).round() / 1e4),
        passed: loss <= max,
        message: format!(
            "the declared plan keeps {:.1}% of transactions on one shard, shardkey's {:.1}%: {:.1} points {} (maximum {max})",
            declared * 100.0,
            own * 100.0,
            loss.abs(),
            if loss >= 0.0 { "fewer" } else { "more" }
        ),
    }
}

/// What caused a plan rule's violation.
pub(crate) fn culprit(rule: &str, p: &PlanInput) -> Culprit {
    let short = |ns: &str| ns.split_once('.').map_or(ns, |x| x.1).to_string();
    let mut c = Culprit::default();
    if rule == "forbid_refused_keys" {
        for (ns, _, names) in &p.refused {
            c.names.extend(names.iter().cloned());
            c.names.push(short(ns));
        }
    } else {
        for (ns, declared, own) in &p.differing {
            c.causes.push(format!("{ns}: declared {declared}, shardkey's {own}"));
            c.names.push(short(ns));
        }
        c.causes.extend(p.blockers.iter().take(3).cloned());
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(declared: f64, own: f64, not_placed: Option<f64>) -> PlanInput {
        PlanInput {
            refused: Vec::new(),
            declared_share: Some(declared),
            own_share: Some(own),
            seen_in_part: false,
            not_placed_percent: not_placed,
            differing: Vec::new(),
            blockers: Vec::new(),
        }
    }

    /// 0.0 against 0.0 with every transaction unplaced passed as "0.0 points fewer": skipped now,
    /// saying why; below half unplaced, measured as before.
    #[test]
    fn shares_that_rest_mostly_on_unplaced_inserts_are_not_compared() {
        let skipped =
            |f: Finding| matches!(f, Finding::Skipped(w) if w.starts_with("most transactions hold inserts the plan cannot place"));
        assert!(skipped(share_loss(Threshold::Percent(10.0), &input(0.0, 0.0, Some(100.0)))));
        assert!(skipped(share_loss(Threshold::Percent(10.0), &input(0.2, 0.9, Some(50.0)))));
        match share_loss(Threshold::Percent(10.0), &input(0.2, 0.9, Some(49.9))) {
            Finding::Measured { passed, .. } => assert!(!passed, "70 points fewer"),
            _ => panic!("measured below half unplaced"),
        }
        assert!(matches!(share_loss(Threshold::Percent(10.0), &input(0.85, 0.9, None)), Finding::Measured { passed: true, .. }));
    }
}
