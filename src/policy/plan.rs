//! A policy's `[plan]`: the database's plan as the team declared it (its keys, the collections
//! it keeps unsharded), and the rules that hold the database to it (`rules::RULES` entries
//! judged by `Judge::Plan`) on `plan`'s what if: the declared plan beside the one shardkey
//! chooses on the same data and logs.

use super::rules::{Finding, Judge, Threshold, RULES};
use super::{Culprit, Rules};
use crate::error::input_error;
use crate::model::ShardKey;
use anyhow::Result;
use serde::Deserialize;
use serde_json::json;
use toml::Spanned;

/// `[plan]` as read.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PlanPolicy {
    /// The database planned; None: the URI's, or the `--dump` directory's name.
    pub(crate) database: Option<String>,
    /// The version the plan is for (`plan --target-version`); None: the server's, else unknown.
    pub(crate) target_version: Option<(u32, u32)>,
    /// `[plan.keys]`: a collection (a name of the database, or `db.coll`) and its key.
    pub(crate) keys: Vec<(String, ShardKey)>,
    pub(crate) unsharded: Vec<String>,
    /// The plan rules set in `[plan]` (the implied ones are added by `effective_rules`).
    pub(crate) rules: Rules,
}

impl PlanPolicy {
    /// The plan rules: those set, else the ones on unless set.
    pub(crate) fn effective_rules(&self) -> Rules {
        let mut r: Rules = RULES.iter().filter(|d| matches!(d.judge, Judge::Plan(_))).filter_map(|d| Some((d.name, d.implied?))).collect();
        r.extend(self.rules.iter().map(|(k, v)| (*k, *v)));
        r
    }
}

/// What the plan rules read: the declared plan beside shardkey's own.
pub(crate) struct PlanInput {
    /// Declared keys the server refuses as things stand: (namespace, why, the names a change
    /// that caused it would spell out: the index, its fields).
    pub(crate) refused: Vec<(String, String, Vec<String>)>,
    /// The transactions' single-shard share, declared plan and shardkey's (None: no transaction).
    pub(crate) declared_share: Option<f64>,
    pub(crate) own_share: Option<f64>,
    /// Some transactions seen in part: the shares are ranges, not one figure.
    pub(crate) seen_in_part: bool,
    /// The collections whose choice differs: (namespace, declared, shardkey's), in words.
    pub(crate) differing: Vec<(String, String, String)>,
    /// What keeps the declared plan's transactions off one shard, most costly first.
    pub(crate) blockers: Vec<String>,
}

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

/// The policy's reading of one rule line: name, value, the section's other fields, whether the
/// section is `[plan]`.
pub(super) type RuleEntry<'a> = dyn Fn(&Spanned<String>, &Spanned<toml::Value>, &[&str], bool) -> Result<(&'static str, Threshold)> + 'a;

/// `[plan]`: its settings, and its rules through `rule_entry` (the policy's own reading of a
/// rule line); a rule that is not a plan rule is refused with where it goes.
pub(super) fn parse(table: &super::RawTable, at: &dyn Fn(usize) -> String, rule_entry: &RuleEntry) -> Result<PlanPolicy> {
    let mut p = PlanPolicy::default();
    for (k, v) in table {
        let field = |msg: &str| input_error(format!("{}: field {}: {msg}", at(v.span().start), k.get_ref()));
        let string = |x: &toml::Value| x.as_str().map(str::to_string);
        match k.get_ref().as_str() {
            "database" => p.database = Some(string(v.get_ref()).ok_or_else(|| field("expected a database name"))?),
            "target_version" => {
                let text = string(v.get_ref()).ok_or_else(|| field("expected a version such as \"7.0\""))?;
                let mut it = text.split('.').map(|x| x.trim().parse::<u32>());
                p.target_version = Some(match (it.next(), it.next()) {
                    (Some(Ok(a)), Some(Ok(b))) => (a, b),
                    (Some(Ok(a)), None) => (a, 0),
                    _ => return Err(field(&format!("\"{text}\" is not a version such as \"7.0\""))),
                });
            }
            "unsharded" => {
                let list = Vec::<String>::deserialize(v.get_ref().clone()).map_err(|_| field("expected a list of collection names"))?;
                p.unsharded = list;
            }
            "keys" => {
                let Some(t) = v.get_ref().as_table() else { return Err(field("expected a table: collection = \"{field: 1}\"")) };
                for (coll, key) in t {
                    let text = key.as_str().ok_or_else(|| field(&format!("{coll}: expected a key such as \"{{field: 1}}\"")))?;
                    let key = ShardKey::parse(text).map_err(|e| field(&format!("{coll}: {e}")))?;
                    p.keys.push((coll.clone(), key));
                }
            }
            _ => {
                let (n, t) = rule_entry(k, v, &["database", "target_version", "keys", "unsharded"], true)?;
                if !super::rules::rule(n).is_some_and(|d| matches!(d.judge, Judge::Plan(_))) {
                    return Err(input_error(format!(
                        "{}: field {n}: a rule on each collection's key: set it in [defaults] or a [[collection]], not [plan]",
                        at(k.span().start)
                    )));
                }
                p.rules.insert(n, t);
            }
        }
    }
    Ok(p)
}
