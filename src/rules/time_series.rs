//! Time-series collections (sharding them: 5.1+): the key may hold only the metaField (or
//! its subfields) and the timeField; the timeField must be ranged and last; nothing else,
//! `_id` included. Manual, "Shard a Time Series Collection"
//! (https://www.mongodb.com/docs/manual/core/timeseries/timeseries-shard-collection/):
//! "metaField can be either a hashed or a ranged shard key; timeField must be a ranged shard
//! key and at the end of the shard key pattern".

use super::rule::{Context, Effect, Finding, Rule, RuleId};
use crate::model::{KeyKind, ShardKey};

pub(super) const RULE: Rule = Rule {
    id: RuleId::TimeSeries,
    source: "https://www.mongodb.com/docs/manual/core/timeseries/timeseries-shard-collection/",
    versions: "5.1+ (time-series collections cannot be sharded before 5.1)",
    check,
};

fn check(rule: &Rule, cx: &Context, key: &ShardKey) -> Vec<Finding> {
    let Some(ts) = cx.options.and_then(|o| o.time_series.as_ref()) else { return Vec::new() };
    let is_meta = |p: &str| ts.meta_field.as_deref().is_some_and(|m| p == m || p.strip_prefix(m).is_some_and(|r| r.starts_with('.')));
    let mut why = Vec::new();
    let others: Vec<&str> = key.fields.iter().map(|f| f.path.as_str()).filter(|p| !is_meta(p) && *p != ts.time_field).collect();
    if !others.is_empty() {
        let allowed = match &ts.meta_field {
            Some(m) => format!("the metaField {m} (or its subfields) and the timeField {}", ts.time_field),
            None => format!("the timeField {} (the collection has no metaField)", ts.time_field),
        };
        why.push(format!("{} not allowed: a time-series key holds only {allowed}", others.join(", ")));
    }
    if let Some(pos) = key.fields.iter().position(|f| f.path == ts.time_field) {
        if key.fields[pos].kind == KeyKind::Hashed {
            why.push(format!("the timeField {} cannot be hashed", ts.time_field));
        }
        if pos + 1 != key.fields.len() {
            why.push(format!("the timeField {} must be the key's last field", ts.time_field));
        }
    }
    if why.is_empty() {
        return Vec::new();
    }
    vec![rule.finding(Effect::Refused, format!("time-series collection: {}", why.join("; ")))]
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{cx, key};
    use super::*;
    use crate::model::collection::{CollectionOptions, TimeSeries};

    fn ts() -> CollectionOptions {
        CollectionOptions {
            time_series: Some(TimeSeries { time_field: "ts".into(), meta_field: Some("meta".into()), granularity: None }),
            ..Default::default()
        }
    }

    fn verdict(k: &str) -> Vec<String> {
        let o = ts();
        check(&RULE, &cx(None, Some(&o), &[]), &key(k)).into_iter().map(|f| f.message).collect()
    }

    /// The manual's allowed and refused examples.
    #[test]
    fn meta_field_subfields_and_a_last_ranged_time_field_only() {
        for ok in ["{meta: 1}", "{\"meta.sensor\": 1}", "{meta: \"hashed\"}", "{\"meta.site\": 1, ts: 1}", "{meta: 1, ts: 1}", "{ts: 1}"] {
            assert!(verdict(ok).is_empty(), "{ok}: {:?}", verdict(ok));
        }
        assert_eq!(verdict("{_id: 1}"), ["time-series collection: _id not allowed: a time-series key holds only the metaField meta (or its subfields) and the timeField ts"]);
        assert_eq!(verdict("{ts: \"hashed\"}"), ["time-series collection: the timeField ts cannot be hashed"]);
        assert_eq!(verdict("{ts: 1, meta: 1}"), ["time-series collection: the timeField ts must be the key's last field"]);
        assert_eq!(verdict("{metadata: 1}").len(), 1, "a field that only starts with the metaField's name");
        assert!(check(&RULE, &cx(None, Some(&CollectionOptions::default()), &[]), &key("{_id: 1}")).is_empty());
    }
}
