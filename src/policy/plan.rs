//! A policy's `[plan]`: the database's plan as the team declared it (its keys, the collections
//! it keeps unsharded), and the rules that hold the database to it (`rules::RULES` entries
//! judged by `Judge::Plan`) on `plan`'s what if: the declared plan beside the one shardkey
//! chooses on the same data and logs.

// app::check_plan names the plan rules' input here, beside `[plan]`.
pub(crate) use super::judge::PlanInput;
use super::judge::Rules;
use super::raw::RawTable;
use super::rules::{Judge, Threshold, RULES};
use crate::error::input_error;
use crate::model::ShardKey;
use anyhow::Result;
use serde::Deserialize;
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

/// The policy's reading of one rule line: name, value, the section's other fields, whether the
/// section is `[plan]`.
pub(super) type RuleEntry<'a> = dyn Fn(&Spanned<String>, &Spanned<toml::Value>, &[&str], bool) -> Result<(&'static str, Threshold)> + 'a;

/// `[plan]`: its settings, and its rules through `rule_entry` (the policy's own reading of a
/// rule line); a rule that is not a plan rule is refused with where it goes.
pub(super) fn parse(table: &RawTable, at: &dyn Fn(usize) -> String, rule_entry: &RuleEntry) -> Result<PlanPolicy> {
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
