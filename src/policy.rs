//! The CI gate's policy file (`shardkey.toml`) and its rules, each read off one
//! metric of a candidate's report. Pure: text in, rule results out.

use crate::error::input_error;
use crate::metrics::monotonicity::MonotonicityType;
use crate::report::CandidateReport;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use toml::Spanned;

/// A starting policy: `shardkey check --init`.
pub const DEFAULT_POLICY: &str = r#"# shardkey policy: `shardkey check --policy shardkey.toml`
# Every rule is optional; a rule in [[collection]] overrides the one in [defaults].

[defaults]
# 0-100 score from `shardkey analyze` (README "Score").
min_score = 60
# readDistribution.percentageOfScatterGatherReads
max_scatter_gather_reads_percent = 50.0
# writeDistribution: single + multi writes without shard key, percent of sampled writes
max_writes_without_shard_key_percent = 50.0
# keyCharacteristics.monotonicity.type == "monotonic" fails
forbid_monotonic = true
# keyCharacteristics.topValuePercentage
max_top_value_percent = 25.0
# keyCharacteristics.jumboChunkRisk: any value larger than a chunk fails
forbid_jumbo_risk = true
# keyCharacteristics.estimatedNumDistinctValues
min_distinct_values = 100
# writeDistribution.percentageOfShardKeyUpdates
max_shard_key_updates_percent = 10.0
# supportingIndex (live only): the key needs an index that can support it
require_supporting_index = false

[[collection]]
namespace = "app.events"
# The key in use or planned. Leave it out for a sharded collection to check its current key.
key = "{projectId: 1, _id: 1}"
"#;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    pub min_score: Option<Spanned<u32>>,
    pub max_scatter_gather_reads_percent: Option<Spanned<f64>>,
    pub max_writes_without_shard_key_percent: Option<Spanned<f64>>,
    pub forbid_monotonic: Option<bool>,
    pub max_top_value_percent: Option<Spanned<f64>>,
    pub forbid_jumbo_risk: Option<bool>,
    pub min_distinct_values: Option<u64>,
    pub max_shard_key_updates_percent: Option<Spanned<f64>>,
    pub require_supporting_index: Option<bool>,
}

/// One `[[collection]]`: its namespace, its key, and rule overrides (same names as [defaults]).
/// The rule fields are repeated rather than `#[serde(flatten)]`ed: serde cannot
/// combine flatten with `deny_unknown_fields`, and a typo must be an error.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectionPolicy {
    pub namespace: Spanned<String>,
    pub key: Option<Spanned<String>>,
    pub min_score: Option<Spanned<u32>>,
    pub max_scatter_gather_reads_percent: Option<Spanned<f64>>,
    pub max_writes_without_shard_key_percent: Option<Spanned<f64>>,
    pub forbid_monotonic: Option<bool>,
    pub max_top_value_percent: Option<Spanned<f64>>,
    pub forbid_jumbo_risk: Option<bool>,
    pub min_distinct_values: Option<u64>,
    pub max_shard_key_updates_percent: Option<Spanned<f64>>,
    pub require_supporting_index: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    defaults: Rules,
    #[serde(default)]
    collection: Vec<CollectionPolicy>,
}

#[derive(Debug, Clone)]
pub struct Policy {
    pub defaults: Rules,
    pub collections: Vec<CollectionPolicy>,
}

impl CollectionPolicy {
    /// This collection's rules: its own where set, else the defaults.
    pub fn rules(&self, d: &Rules) -> Rules {
        Rules {
            min_score: self.min_score.clone().or(d.min_score.clone()),
            max_scatter_gather_reads_percent: self.max_scatter_gather_reads_percent.clone().or(d.max_scatter_gather_reads_percent.clone()),
            max_writes_without_shard_key_percent: self
                .max_writes_without_shard_key_percent
                .clone()
                .or(d.max_writes_without_shard_key_percent.clone()),
            forbid_monotonic: self.forbid_monotonic.or(d.forbid_monotonic),
            max_top_value_percent: self.max_top_value_percent.clone().or(d.max_top_value_percent.clone()),
            forbid_jumbo_risk: self.forbid_jumbo_risk.or(d.forbid_jumbo_risk),
            min_distinct_values: self.min_distinct_values.or(d.min_distinct_values),
            max_shard_key_updates_percent: self.max_shard_key_updates_percent.clone().or(d.max_shard_key_updates_percent.clone()),
            require_supporting_index: self.require_supporting_index.or(d.require_supporting_index),
        }
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Parse a policy; errors name the file, the line and the field.
pub fn parse(name: &str, text: &str) -> Result<Policy> {
    let f: PolicyFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        let field = e
            .span()
            .and_then(|s| text[..s.start.min(text.len())].lines().last().map(str::to_string))
            .and_then(|l| l.split('=').next().map(|x| x.trim().to_string()))
            .filter(|x| !x.is_empty() && !x.starts_with('['));
        let msg = e.message().replace('\n', " ");
        match (line, field) {
            (Some(l), Some(f)) if !msg.contains(&f) => input_error(format!("{name}: line {l}: field {f}: {msg}")),
            (Some(l), _) => input_error(format!("{name}: line {l}: {msg}")),
            _ => input_error(format!("{name}: {msg}")),
        }
    })?;
    let p = Policy { defaults: f.defaults, collections: f.collection };
    let check_pct = |v: &Option<Spanned<f64>>, field: &str| -> Result<()> {
        if let Some(s) = v {
            if !(0.0..=100.0).contains(s.get_ref()) {
                return Err(input_error(format!(
                    "{name}: line {}: field {field}: {} is not a percentage (0 to 100)",
                    line_of(text, s.span().start),
                    s.get_ref()
                )));
            }
        }
        Ok(())
    };
    let check_rules = |r: &Rules| -> Result<()> {
        if let Some(s) = &r.min_score {
            if *s.get_ref() > 100 {
                return Err(input_error(format!("{name}: line {}: field min_score: {} is above 100", line_of(text, s.span().start), s.get_ref())));
            }
        }
        check_pct(&r.max_scatter_gather_reads_percent, "max_scatter_gather_reads_percent")?;
        check_pct(&r.max_writes_without_shard_key_percent, "max_writes_without_shard_key_percent")?;
        check_pct(&r.max_top_value_percent, "max_top_value_percent")?;
        check_pct(&r.max_shard_key_updates_percent, "max_shard_key_updates_percent")
    };
    check_rules(&p.defaults)?;
    if p.collections.is_empty() {
        return Err(input_error(format!("{name}: no [[collection]]: name at least one namespace to check")));
    }
    for c in &p.collections {
        check_rules(&c.rules(&Rules::default()))?;
        let ns = c.namespace.get_ref();
        if !ns.split_once('.').is_some_and(|(d, c)| !d.is_empty() && !c.is_empty()) {
            return Err(input_error(format!(
                "{name}: line {}: field namespace: \"{ns}\" is not db.collection",
                line_of(text, c.namespace.span().start)
            )));
        }
        if let Some(k) = &c.key {
            crate::model::ShardKey::parse(k.get_ref())
                .map_err(|e| input_error(format!("{name}: line {}: field key: {e}", line_of(text, k.span().start))))?;
        }
    }
    Ok(p)
}

/// One rule checked against one candidate.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RuleResult {
    pub rule: &'static str,
    /// The metric the rule reads (JSON path in the analyze report).
    pub metric: &'static str,
    pub threshold: Value,
    pub actual: Value,
    pub passed: bool,
    /// Why the rule could not be evaluated (it then passes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    pub message: String,
}

fn result(rule: &'static str, metric: &'static str, threshold: Value, actual: Value, passed: bool, message: String) -> RuleResult {
    RuleResult { rule, metric, threshold, actual, passed, skipped: None, message }
}

fn skipped(rule: &'static str, metric: &'static str, threshold: Value, why: &str) -> RuleResult {
    RuleResult { rule, metric, threshold, actual: Value::Null, passed: true, skipped: Some(why.into()), message: format!("{rule}: not evaluated ({why})") }
}

/// Check every rule that is set against a candidate.
pub fn evaluate(r: &Rules, c: &CandidateReport) -> Vec<RuleResult> {
    let mut out = Vec::new();
    let kc = &c.key_characteristics;
    let rd = &c.read_distribution;
    let wd = &c.write_distribution;
    if let Some(min) = &r.min_score {
        let min = *min.get_ref();
        out.push(result("min_score", "score", json!(min), json!(c.score), c.score >= min, format!("score {} (minimum {min})", c.score)));
    }
    if let Some(max) = &r.max_scatter_gather_reads_percent {
        let max = *max.get_ref();
        let m = "readDistribution.percentageOfScatterGatherReads";
        match rd.percentage_of_scatter_gather_reads {
            Some(p) => out.push(result("max_scatter_gather_reads_percent", m, json!(max), json!(p), p <= max, format!("{p:.1}% of reads scatter-gather (maximum {max}%)"))),
            None => out.push(skipped("max_scatter_gather_reads_percent", m, json!(max), "no sampled reads")),
        }
    }
    if let Some(max) = &r.max_writes_without_shard_key_percent {
        let max = *max.get_ref();
        let m = "writeDistribution.percentageOf{Single,Multi}WritesWithoutShardKey";
        match (wd.percentage_of_single_writes_without_shard_key, wd.percentage_of_multi_writes_without_shard_key) {
            (Some(s), Some(mu)) => {
                let p = s + mu;
                out.push(result("max_writes_without_shard_key_percent", m, json!(max), json!(p), p <= max, format!("{p:.1}% of writes without the shard key (maximum {max}%)")))
            }
            _ => out.push(skipped("max_writes_without_shard_key_percent", m, json!(max), "no sampled writes")),
        }
    }
    if r.forbid_monotonic == Some(true) {
        let t = kc.monotonicity.kind;
        out.push(result(
            "forbid_monotonic",
            "keyCharacteristics.monotonicity.type",
            json!(true),
            json!(t.as_str()),
            t != MonotonicityType::Monotonic,
            format!("monotonicity: {}", t.as_str()),
        ));
    }
    if let Some(max) = &r.max_top_value_percent {
        let max = *max.get_ref();
        let p = kc.top_value_percentage;
        out.push(result("max_top_value_percent", "keyCharacteristics.topValuePercentage", json!(max), json!(p), p <= max, format!("top value holds {p:.1}% of documents (maximum {max}%)")));
    }
    if r.forbid_jumbo_risk == Some(true) {
        let n = kc.jumbo_chunk_risk.values.len();
        out.push(result("forbid_jumbo_risk", "keyCharacteristics.jumboChunkRisk.values", json!(true), json!(n), n == 0, format!("{n} values larger than a chunk")));
    }
    if let Some(min) = r.min_distinct_values {
        let d = kc.estimated_num_distinct_values.value;
        out.push(result("min_distinct_values", "keyCharacteristics.estimatedNumDistinctValues", json!(min), json!(d), d >= min, format!("about {d} distinct values (minimum {min})")));
    }
    if let Some(max) = &r.max_shard_key_updates_percent {
        let max = *max.get_ref();
        let m = "writeDistribution.percentageOfShardKeyUpdates";
        match wd.percentage_of_shard_key_updates {
            Some(p) => out.push(result("max_shard_key_updates_percent", m, json!(max), json!(p), p <= max, format!("{p:.1}% of writes change the shard key (maximum {max}%)"))),
            None => out.push(skipped("max_shard_key_updates_percent", m, json!(max), "no sampled writes")),
        }
    }
    if r.require_supporting_index == Some(true) {
        let m = "supportingIndex.name";
        match &c.supporting_index {
            Some(si) => out.push(result(
                "require_supporting_index",
                m,
                json!(true),
                json!(si.name),
                si.name.is_some(),
                match (&si.name, &si.create_index) {
                    (Some(n), _) => format!("supporting index {n}"),
                    (None, Some(cmd)) => format!("no supporting index; {cmd}"),
                    _ => "no supporting index".into(),
                },
            )),
            None => out.push(skipped("require_supporting_index", m, json!(true), "indexes are only known with --uri")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_policy_parses() {
        let p = parse("default", DEFAULT_POLICY).unwrap();
        assert_eq!(p.collections.len(), 1);
        let r = p.collections[0].rules(&p.defaults);
        assert_eq!(r.min_score.map(|s| s.into_inner()), Some(60));
        assert_eq!(r.forbid_monotonic, Some(true));
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
        let e = parse("p.toml", "[defaults]\nmax_top_value_percent = 120.0\n[[collection]]\nnamespace = \"a.b\"\n").unwrap_err().to_string();
        assert!(e.starts_with("p.toml: line 2: field max_top_value_percent"), "{e}");
        assert!(parse("p.toml", "[defaults]\n").is_err(), "no collection");
    }
}
