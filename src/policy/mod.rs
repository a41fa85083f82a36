//! The CI gate's policy file (`shardkey.toml`) and its rules (`rules::RULES`),
//! each read off one metric of a candidate. Pure: text in, rule results out.

mod judge;
pub(crate) mod plan;
mod plan_rules;
mod raw;
mod result;
pub(crate) mod rules;

pub(crate) use judge::Rules;
pub(crate) use result::{Culprit, Location, RuleResult};

use crate::error::input_error;
use crate::model::{Namespace, ShardKey};
use anyhow::Result;
use raw::PolicyFile;
use rules::{DatabasesInput, Finding, Judge, RuleInput, Threshold, ValueType, RULES};
use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

/// A starting policy: `shardkey check --init`, one line per rule of `RULES`.
pub fn default_policy() -> String {
    let mut s = String::from(
        "# shardkey policy: `shardkey check --policy shardkey.toml`\n\
         # Every rule is optional; a rule in [[collection]] overrides the one in [defaults].\n\n[defaults]\n",
    );
    for r in RULES.iter().filter(|r| !matches!(r.judge, Judge::Plan(_))) {
        s.push_str(&format!("# {}\n{} = {}\n", r.doc, r.name, r.default));
    }
    s.push_str(
        "\n[[collection]]\nnamespace = \"app.events\"\n\
         # The key in use or planned. Leave it out for a sharded collection to check its current key.\n\
         key = \"{projectId: 1, _id: 1}\"\n",
    );
    s.push_str(
        "\n# The whole database held to its plan (check --dump DIR, or --uri): uncomment to declare it.\n\
         # [plan]\n# database = \"app\"\n# unsharded = [\"settings\"]\n",
    );
    for r in RULES.iter().filter(|r| matches!(r.judge, Judge::Plan(_))) {
        s.push_str(&format!("# # {}\n# {} = {}\n", r.doc, r.name, r.default));
    }
    s.push_str("# [plan.keys]\n# events = \"{projectId: 1, _id: 1}\"\n");
    s
}

/// One `[[collection]]`: its namespace, its key, and rule overrides.
#[derive(Debug, Clone)]
pub(crate) struct CollectionPolicy {
    pub(crate) namespace: Namespace,
    pub(crate) key: Option<ShardKey>,
    pub(crate) rules: Rules,
    /// `residency = "region=EU:shardEU,..."`: a key not led by the field is invalid (`forbid_invalid`).
    pub(crate) residency: Option<crate::model::residency::Residency>,
}

#[derive(Debug, Clone)]
pub struct Policy {
    pub(crate) defaults: Rules,
    pub(crate) collections: Vec<CollectionPolicy>,
    /// `[plan]`: the database's plan, declared.
    pub(crate) plan: Option<plan::PlanPolicy>,
}

impl CollectionPolicy {
    /// This collection's rules: its own where set, else the defaults, else the rules that are
    /// on unless a policy turns them off (`RuleDef::implied`).
    pub(crate) fn effective_rules(&self, defaults: &Rules) -> Rules {
        let mut r = with_implied(defaults);
        r.extend(self.rules.iter().map(|(k, v)| (*k, *v)));
        r
    }
}

/// `--baseline`'s tolerances for one collection's rules (`score_tolerance`, `percent_tolerance`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Tolerance {
    /// Score points.
    pub(crate) score: u32,
    /// Percentage points, for the rules whose threshold is a percentage.
    pub(crate) percent: f64,
}

impl Tolerance {
    pub(crate) fn of(rules: &Rules) -> Tolerance {
        let number = |name: &str| match rules.get(name) {
            Some(Threshold::Int(n)) => *n as f64,
            Some(Threshold::Percent(p)) => *p,
            _ => 0.0,
        };
        Tolerance { score: number("score_tolerance") as u32, percent: number("percent_tolerance") }
    }
}

/// Whether the rule of that name takes a percentage (its figure moves with the sample).
pub(crate) fn is_percentage(rule: &str) -> bool {
    rules::rule(rule).is_some_and(|d| d.value == ValueType::Percent && matches!(d.judge, Judge::Candidate(_) | Judge::Plan(_)))
}

/// The rules that are on unless set, overridden by `rules` (the plan's aside: `[plan]` has its own).
fn with_implied(rules: &Rules) -> Rules {
    let mut r: Rules = RULES.iter().filter(|d| !matches!(d.judge, Judge::Plan(_))).filter_map(|d| Some((d.name, d.implied?))).collect();
    r.extend(rules.iter().map(|(k, v)| (*k, *v)));
    r
}

impl Policy {
    /// The rules on the checked databases: `[defaults]`, else their implied setting.
    pub(crate) fn database_rules(&self) -> Rules {
        with_implied(&self.defaults)
    }

    /// Is a rule on the databases on (is listing their collections worth it)?
    pub(crate) fn reads_databases(&self) -> bool {
        self.database_rules().iter().any(|(n, t)| t.is_on() && rules::rule(n).is_some_and(|d| matches!(d.judge, Judge::Databases(_))))
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Parse a policy; errors name the file, the line and the field.
pub fn parse(name: &str, text: &str) -> Result<Policy> {
    let f: PolicyFile = toml::from_str(text).map_err(|e| {
        let msg = e.message().replace('\n', " ");
        match e.span().map(|s| line_of(text, s.start)) {
            Some(l) => input_error(format!("{name}: line {l}: {msg}")),
            None => input_error(format!("{name}: {msg}")),
        }
    })?;
    let at = |offset: usize| format!("{name}: line {}", line_of(text, offset));
    // One rule entry: a known name and a threshold of its type. An unknown name is told the
    // section's other fields (`also`) and its rules: [plan]'s (`plan`) or the others.
    let rule_entry = |k: &Spanned<String>, v: &Spanned<toml::Value>, also: &[&str], plan: bool| -> Result<(&'static str, Threshold)> {
        let Some(def) = rules::rule(k.get_ref()) else {
            let names = RULES.iter().filter(|r| matches!(r.judge, Judge::Plan(_)) == plan).map(|r| r.name);
            let expected: Vec<String> = also.iter().copied().chain(names).map(|n| format!("`{n}`")).collect();
            return Err(input_error(format!(
                "{}: unknown field `{}`, expected one of {}",
                at(k.span().start),
                k.get_ref(),
                expected.join(", ")
            )));
        };
        let field = |msg: String| input_error(format!("{}: field {}: {msg}", at(v.span().start), def.name));
        let typed = |e: toml::de::Error| field(e.message().replace('\n', " "));
        let value = v.get_ref().clone();
        let t = match def.value {
            ValueType::Score => {
                let n = u32::deserialize(value).map_err(typed)?;
                if n > 100 {
                    return Err(field(format!("{n} is above 100")));
                }
                Threshold::Int(n as u64)
            }
            ValueType::Count => Threshold::Int(u64::deserialize(value).map_err(typed)?),
            ValueType::Percent => {
                let p = f64::deserialize(value).map_err(typed)?;
                if !(0.0..=100.0).contains(&p) {
                    return Err(field(format!("{p} is not a percentage (0 to 100)")));
                }
                Threshold::Percent(p)
            }
            ValueType::Flag => Threshold::Flag(bool::deserialize(value).map_err(typed)?),
            ValueType::Choice(words) => {
                let w = String::deserialize(value).map_err(typed)?;
                let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
                let Some(w) = words.iter().find(|x| **x == w) else {
                    return Err(field(format!("\"{w}\" is not one of {}", quoted.join(", "))));
                };
                Threshold::Choice(w)
            }
        };
        Ok((def.name, t))
    };
    // A plan rule belongs in [plan] alone.
    let not_plan = |k: &Spanned<String>, n: &str| -> Result<()> {
        match rules::rule(n).is_some_and(|d| matches!(d.judge, Judge::Plan(_))) {
            true => Err(input_error(format!("{}: field {n}: a rule on the whole database's plan: set it in [plan]", at(k.span().start)))),
            false => Ok(()),
        }
    };
    let mut defaults = Rules::new();
    for (k, v) in &f.defaults {
        let (n, t) = rule_entry(k, v, &[], false)?;
        not_plan(k, n)?;
        defaults.insert(n, t);
    }
    let plan = f.plan.as_ref().map(|t| plan::parse(t, &at, &rule_entry)).transpose()?;
    if f.collection.is_empty() && plan.is_none() {
        return Err(input_error(format!("{name}: no [[collection]] or [plan]: name at least one namespace to check")));
    }
    let mut collections = Vec::new();
    for table in &f.collection {
        let (mut namespace, mut key, mut rules, mut residency) = (None, None, Rules::new(), None);
        for (k, v) in table.get_ref() {
            let string = || -> Result<&str> {
                v.get_ref().as_str().ok_or_else(|| input_error(format!("{}: field {}: expected a string", at(v.span().start), k.get_ref())))
            };
            match k.get_ref().as_str() {
                "namespace" => {
                    let ns = string()?;
                    namespace = Some(
                        Namespace::parse(ns)
                            .map_err(|_| input_error(format!("{}: field namespace: \"{ns}\" is not db.collection", at(v.span().start))))?,
                    );
                }
                "key" => {
                    let text = string()?;
                    key = Some(ShardKey::parse(text).map_err(|e| input_error(format!("{}: field key: {e}", at(v.span().start))))?);
                }
                "residency" => {
                    let text = string()?;
                    let r = crate::model::residency::Residency::parse(text)
                        .map_err(|e| input_error(format!("{}: field residency: {e}", at(v.span().start))))?;
                    residency = Some(r);
                }
                _ => {
                    let (n, t) = rule_entry(k, v, &["namespace", "key", "residency"], false)?;
                    not_plan(k, n)?;
                    if rules::rule(n).is_some_and(|d| matches!(d.judge, Judge::Databases(_))) {
                        return Err(input_error(format!(
                            "{}: field {n}: set it in [defaults] (it reads the databases, not one collection)",
                            at(k.span().start)
                        )));
                    }
                    rules.insert(n, t);
                }
            }
        }
        let Some(namespace) = namespace else {
            return Err(input_error(format!("{}: missing field `namespace`", at(table.span().start))));
        };
        collections.push(CollectionPolicy { namespace, key, rules, residency });
    }
    Ok(Policy { defaults, collections, plan })
}

/// Check every rule that is set (in `RULES` order) against a candidate.
pub(crate) fn evaluate(rules: &Rules, input: &RuleInput) -> Vec<RuleResult> {
    let mut results = judge(rules, |j, t| match j {
        Judge::Candidate(f) => Some(f(t, input)),
        Judge::Databases(_) | Judge::Plan(_) | Judge::Tolerance => None,
    });
    for r in results.iter_mut().filter(|r| !r.passed) {
        r.culprit = rules::rule(r.rule).and_then(|d| d.culprit).map(|f| f(input)).filter(|c| c != &Culprit::default());
    }
    results
}

/// Check the rules on the databases (`Policy::database_rules`). What they flag is caused by
/// the unlisted collections: a change that creates one names it.
pub(crate) fn evaluate_databases(rules: &Rules, input: &DatabasesInput) -> Vec<RuleResult> {
    let mut results = judge(rules, |j, t| match j {
        Judge::Databases(f) => Some(f(t, input)),
        Judge::Candidate(_) | Judge::Plan(_) | Judge::Tolerance => None,
    });
    for r in results.iter_mut().filter(|r| !r.passed || r.warning) {
        let names =
            input.unlisted.unwrap_or_default().iter().map(|ns| ns.split_once('.').map_or(ns.as_str(), |x| x.1).to_string()).collect();
        r.culprit = Some(Culprit { causes: Vec::new(), names });
    }
    results
}

/// Check `[plan]`'s rules on the declared plan beside shardkey's.
pub(crate) fn evaluate_plan(rules: &Rules, input: &plan::PlanInput) -> Vec<RuleResult> {
    let mut results = judge(rules, |j, t| match j {
        Judge::Plan(f) => Some(f(t, input)),
        Judge::Candidate(_) | Judge::Databases(_) | Judge::Tolerance => None,
    });
    for r in results.iter_mut().filter(|r| !r.passed) {
        r.culprit = Some(plan_rules::culprit(r.rule, input)).filter(|c| c != &Culprit::default());
    }
    results
}

fn judge(rules: &Rules, finding: impl Fn(&Judge, Threshold) -> Option<Finding>) -> Vec<RuleResult> {
    RULES
        .iter()
        .filter_map(|def| {
            let t = rules.get(def.name).copied().filter(|t| t.is_on())?;
            let threshold = t.to_json();
            let result = |actual, passed, warning, skipped: Option<&str>, message| RuleResult {
                rule: def.name,
                metric: def.metric,
                threshold: threshold.clone(),
                actual,
                passed,
                warning,
                skipped: skipped.map(String::from),
                message,
                culprit: None,
                location: None,
            };
            Some(match finding(&def.judge, t)? {
                Finding::Measured { actual, passed, message } => result(actual, passed, false, None, message),
                Finding::Warning { actual, message } => result(actual, true, true, None, message),
                Finding::Skipped(why) => result(Value::Null, true, false, Some(why), format!("{}: not evaluated ({why})", def.name)),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_policy_parses_and_names_every_rule() {
        let text = default_policy();
        let p = parse("default", &text).unwrap();
        assert_eq!(p.collections.len(), 1);
        let r = p.collections[0].effective_rules(&p.defaults);
        assert_eq!(r.get("min_score"), Some(&Threshold::Int(60)));
        assert_eq!(r.get("forbid_monotonic"), Some(&Threshold::Flag(true)));
        let plan_rules = RULES.iter().filter(|d| matches!(d.judge, Judge::Plan(_))).count();
        assert_eq!(r.len(), RULES.len() - plan_rules, "every rule has a line in the starting policy");
        // The [plan] block is there, commented: uncommented, it parses with every plan rule.
        let (head, block) = text.split_once("# [plan]\n").unwrap();
        let uncommented =
            format!("{head}[plan]\n{}", block.lines().map(|l| l.strip_prefix("# ").unwrap_or(l)).collect::<Vec<_>>().join("\n"));
        let p = parse("default", &uncommented).unwrap();
        let plan = p.plan.unwrap();
        assert_eq!(plan.rules.len(), plan_rules, "{uncommented}");
        assert_eq!((plan.database.as_deref(), plan.unsharded.as_slice(), plan.keys.len()), (Some("app"), &["settings".to_string()][..], 1));
    }

    #[test]
    fn a_collection_overrides_the_defaults() {
        let p = parse("p", "[defaults]\nmin_score = 60\nmax_top_value_percent = 25\n[[collection]]\nnamespace = \"a.b\"\nmin_score = 80\n")
            .unwrap();
        let r = p.collections[0].effective_rules(&p.defaults);
        assert_eq!(r.get("min_score"), Some(&Threshold::Int(80)));
        assert_eq!(r.get("max_top_value_percent"), Some(&Threshold::Percent(25.0)), "an integer percentage is accepted");
    }

    #[test]
    fn what_breaks_the_key_is_checked_unless_turned_off() {
        let p = parse("p", "[[collection]]\nnamespace = \"a.b\"\n").unwrap();
        let r = p.collections[0].effective_rules(&p.defaults);
        assert_eq!(r.get("forbid_blocked"), Some(&Threshold::Flag(true)));
        assert_eq!(r.get("forbid_invalid"), Some(&Threshold::Flag(true)));
        assert_eq!(r.get("max_missing_key_percent"), Some(&Threshold::Percent(5.0)));
        assert_eq!(r.get("min_score"), None, "the others only where set");
        let p =
            parse("p", "[defaults]\nforbid_blocked = false\n[[collection]]\nnamespace = \"a.b\"\nmax_missing_key_percent = 1\n").unwrap();
        let r = p.collections[0].effective_rules(&p.defaults);
        assert_eq!(r.get("forbid_blocked"), Some(&Threshold::Flag(false)));
        assert_eq!(r.get("max_missing_key_percent"), Some(&Threshold::Percent(1.0)));
    }

    #[test]
    fn unlisted_collections_is_a_word_set_in_defaults() {
        let p = parse("p", "[[collection]]\nnamespace = \"a.b\"\n").unwrap();
        assert_eq!(p.database_rules().get("unlisted_collections"), Some(&Threshold::Choice("warn")));
        let p = parse("p", "[defaults]\nunlisted_collections = \"fail\"\n[[collection]]\nnamespace = \"a.b\"\n").unwrap();
        assert_eq!(p.database_rules().get("unlisted_collections"), Some(&Threshold::Choice("fail")));
        let e =
            parse("p.toml", "[defaults]\nunlisted_collections = \"loud\"\n[[collection]]\nnamespace = \"a.b\"\n").unwrap_err().to_string();
        assert_eq!(e, "p.toml: line 2: field unlisted_collections: \"loud\" is not one of \"warn\", \"fail\", \"ignore\"");
        let e = parse("p.toml", "[[collection]]\nnamespace = \"a.b\"\nunlisted_collections = \"fail\"\n").unwrap_err().to_string();
        assert!(e.starts_with("p.toml: line 3: field unlisted_collections: set it in [defaults]"), "{e}");
        assert!(!Threshold::Choice("ignore").is_on());
        let p = parse("p", "[defaults]\nunlisted_collections = \"ignore\"\n[[collection]]\nnamespace = \"a.b\"\n").unwrap();
        assert!(!p.reads_databases(), "ignore: the collections are not even listed");
        // Listing refused: the rule is skipped, not failed.
        let p = parse("p", "[defaults]\nunlisted_collections = \"fail\"\n[[collection]]\nnamespace = \"a.b\"\n").unwrap();
        assert!(p.reads_databases());
        let r = evaluate_databases(&p.database_rules(), &DatabasesInput { databases: &["a".into()], unlisted: None });
        assert!(
            r[0].passed && r[0].skipped.as_deref() == Some("the collections could not be listed (listCollections refused or failed)"),
            "{r:?}"
        );
    }

    #[test]
    fn errors_name_the_line_and_field() {
        let e = parse("p.toml", "[defaults]\nmin_scor = 5\n[[collection]]\nnamespace = \"a.b\"\n").unwrap_err().to_string();
        assert!(e.starts_with("p.toml: line 2") && e.contains("min_scor"), "{e}");
        let e = parse("p.toml", "[defaults]\nmin_score = \"high\"\n[[collection]]\nnamespace = \"a.b\"\n").unwrap_err().to_string();
        assert!(e.starts_with("p.toml: line 2") && e.contains("min_score"), "{e}");
        let e = parse("p.toml", "[[collection]]\nnamespace = \"a.b\"\nkey = \"{a: -1}\"\n").unwrap_err().to_string();
        assert!(e.starts_with("p.toml: line 3: field key"), "{e}");
        let e = parse("p.toml", "[[collection]]\nnamespace = \"ab\"\n").unwrap_err().to_string();
        assert!(e.starts_with("p.toml: line 2: field namespace"), "{e}");
        let e =
            parse("p.toml", "[defaults]\nmax_top_value_percent = 120.0\n[[collection]]\nnamespace = \"a.b\"\n").unwrap_err().to_string();
        assert!(e.starts_with("p.toml: line 2: field max_top_value_percent"), "{e}");
        let e = parse("p.toml", "[defaults]\nmin_score = 101\n[[collection]]\nnamespace = \"a.b\"\n").unwrap_err().to_string();
        assert!(e.starts_with("p.toml: line 2: field min_score: 101 is above 100"), "{e}");
        let e = parse("p.toml", "[[collection]]\nkey = \"{a: 1}\"\n").unwrap_err().to_string();
        assert!(e.starts_with("p.toml: line 1") && e.contains("missing field `namespace`"), "{e}");
        let e = parse("p.toml", "[[collection]]\nnamespace = \"a.b\"\nforbid_monotonic = 1\n").unwrap_err().to_string();
        assert!(e.starts_with("p.toml: line 3: field forbid_monotonic: invalid type"), "{e}");
        assert!(parse("p.toml", "[defaults]\n").is_err(), "no collection");
    }
}
