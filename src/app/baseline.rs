//! `check --baseline FILE`: this run against a previous `check --format json` report, with the
//! policy's tolerances (`score_tolerance`, `percent_tolerance`) for what sampling alone moves.

use crate::error::input_error;
use crate::policy::{is_percentage, Location, RuleResult, Tolerance};
use crate::report::{BaselineComparison, Change, CollectionCheck, SCORE};
use anyhow::Result;
use serde_json::Value;

/// What is compared: this run's collections and database rules, each collection's tolerance,
/// and where a score change is annotated.
pub(super) struct Now<'a> {
    pub(super) collections: &'a [CollectionCheck],
    pub(super) database_rules: &'a [RuleResult],
    pub(super) tolerance: &'a dyn Fn(&str) -> Tolerance,
    pub(super) block: &'a dyn Fn(&str) -> Location,
}

pub(super) fn compare(path: &std::path::Path, now: &Now) -> Result<BaselineComparison> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| input_error(format!("cannot read baseline {shown}: {e}")))?;
    let old: Value =
        serde_json::from_str(&text).map_err(|e| input_error(format!("baseline {shown}: not a `check --format json` report: {e}")))?;
    let Some(old_colls) = old["collections"].as_array() else {
        return Err(input_error(format!("baseline {shown}: not a `check --format json` report (no collections)")));
    };
    let mut b = BaselineComparison { file: shown, ..Default::default() };
    for c in now.collections {
        let prev = old_colls.iter().find(|o| o["namespace"] == c.namespace.as_str());
        let tol = (now.tolerance)(&c.namespace);
        // The score moved by more than sampling moves it (negative: it dropped).
        let score_moved = prev.and_then(|p| p["score"].as_i64()).map(|old| (c.score as i64 - old, old));
        let noise = score_moved.is_some_and(|(d, _)| d.unsigned_abs() <= tol.score as u64);
        rules(&mut b, &c.namespace, &c.rules, prev.and_then(|p| p["rules"].as_array()), tol, noise);
        match score_moved {
            Some((d, old)) if d < -(tol.score as i64) => b.worse.push(Change {
                namespace: c.namespace.clone(),
                rule: SCORE.into(),
                message: format!("{}: score {} dropped from {old} (more than the tolerance of {} points)", c.namespace, c.score, tol.score),
                location: Some((now.block)(&c.namespace)),
            }),
            Some((d, old)) if d > tol.score as i64 => b.better.push(Change {
                namespace: c.namespace.clone(),
                rule: SCORE.into(),
                message: format!("{}: score {} rose from {old}", c.namespace, c.score),
                location: None,
            }),
            _ => {}
        }
    }
    rules(&mut b, "", now.database_rules, old["databaseRules"].as_array(), (now.tolerance)(""), false);
    Ok(b)
}

/// One list of rule results against the baseline's. `score_noise`: the score moved by no more
/// than its tolerance, so `min_score` newly failing is noise.
fn rules(b: &mut BaselineComparison, ns: &str, now: &[RuleResult], before: Option<&Vec<Value>>, tol: Tolerance, score_noise: bool) {
    let shown = if ns.is_empty() { "databases" } else { ns };
    for r in now.iter().filter(|r| r.skipped.is_none()) {
        let prev = before.and_then(|rs| rs.iter().find(|x| x["rule"] == r.rule));
        let failed_before = prev.is_some_and(|p| p["passed"] == false);
        // How far a percentage moved towards failing, in points (None: not a percentage).
        let moved = match (prev.and_then(|p| p["actual"].as_f64()), r.actual.as_f64()) {
            (Some(was), Some(is)) if is_percentage(r.rule) => Some((is - was, was)),
            _ => None,
        };
        let change = |message: String| Change { namespace: ns.to_string(), rule: r.rule.to_string(), message, location: None };
        let within = moved.is_some_and(|(d, _)| d <= tol.percent) || (r.rule == "min_score" && score_noise);
        match (r.passed, failed_before) {
            (false, true) => match moved {
                Some((d, was)) if d > tol.percent => b.worse.push(change(format!(
                    "{shown}: {} {}, was {was}% (further than the tolerance of {} points)",
                    r.rule, r.message, tol.percent
                ))),
                _ => b.known.push(change(format!("{shown}: {} violated in the baseline too", r.rule))),
            },
            (false, false) if prev.is_some() && within => {
                b.known.push(change(format!("{shown}: {} newly violated within the tolerance: {}", r.rule, r.message)))
            }
            (false, false) => b.new.push(change(format!("{shown}: {} newly violated: {}", r.rule, r.message))),
            (true, true) => b.better.push(change(format!("{shown}: {} passes now", r.rule))),
            (true, false) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(rule: &'static str, actual: f64, passed: bool) -> RuleResult {
        RuleResult {
            rule,
            metric: "",
            threshold: json!(30.0),
            actual: json!(actual),
            passed,
            warning: false,
            skipped: None,
            message: format!("{actual}%"),
            culprit: None,
            location: None,
        }
    }

    const TOL: Tolerance = Tolerance { score: 3, percent: 2.0 };

    fn compare_one(now: RuleResult, before: Value) -> BaselineComparison {
        let mut b = BaselineComparison::default();
        rules(&mut b, "a.b", &[now], Some(&vec![before]), TOL, false);
        b
    }

    #[test]
    fn a_percentage_within_the_tolerance_is_noise() {
        let rule = "max_scatter_gather_reads_percent";
        // 29.5% passed, 30.5% fails: one point, within 2.
        let b = compare_one(result(rule, 30.5, false), json!({"rule": rule, "actual": 29.5, "passed": true}));
        assert_eq!((b.new.len(), b.known.len()), (0, 1), "{b:?}");
        // 27.0% passed, 30.5% fails: 3.5 points: new.
        let b = compare_one(result(rule, 30.5, false), json!({"rule": rule, "actual": 27.0, "passed": true}));
        assert_eq!((b.new.len(), b.known.len()), (1, 0), "{b:?}");
        // Failed at 31.0%, fails at 32.5%: known; at 40.0%: worse.
        let b = compare_one(result(rule, 32.5, false), json!({"rule": rule, "actual": 31.0, "passed": false}));
        assert_eq!((b.worse.len(), b.known.len()), (0, 1), "{b:?}");
        let b = compare_one(result(rule, 40.0, false), json!({"rule": rule, "actual": 31.0, "passed": false}));
        assert_eq!((b.worse.len(), b.known.len()), (1, 0), "{b:?}");
        assert_eq!(b.worse[0].message, "a.b: max_scatter_gather_reads_percent 40%, was 31% (further than the tolerance of 2 points)");
        // A rule the baseline did not have (a newer policy) is new whatever its figure.
        let mut b = BaselineComparison::default();
        rules(&mut b, "a.b", &[result(rule, 30.5, false)], Some(&vec![]), TOL, false);
        assert_eq!(b.new.len(), 1);
    }
}
