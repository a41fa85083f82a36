//! A residency rule the DBA stated (`--residency`, a policy's `residency`): a key that cannot
//! keep each value's documents inside its zone breaks it, whatever it scores. A zone range
//! bounds the whole key from its first field (manual `sh.updateZoneKeyRange`: "Specify each
//! field of the shard key"), so only a ranged key led by the zone field honours it
//! (`model::residency::Residency::honoured_by`). A hashed field after it needs 4.4 (manual
//! "Hashed Sharding": compound hashed keys are new in 4.4; mongodb/mongo 7c3c0f3
//! src/mongo/s/shard_key_pattern.cpp `parseShardKeyPattern` before it: "hashed" only alone).

use super::rule::{Context, Effect, Finding, Rule, RuleId};
use crate::model::residency::Honours;
use crate::model::{KeyKind, ShardKey};

pub(super) const RULE: Rule = Rule {
    id: RuleId::Residency,
    source: "https://www.mongodb.com/docs/manual/tutorial/sharding-segmenting-data-by-location/ (a zone range bounds every key field, from the first)",
    versions: "every version (a hashed field after the zone field: 4.4+)",
    check,
};

/// Compound hashed keys with the hashed field after the first (4.4+).
const COMPOUND_HASHED: (u32, u32) = (4, 4);

fn check(rule: &Rule, cx: &Context, key: &ShardKey) -> Vec<Finding> {
    let Some(res) = cx.residency else { return Vec::new() };
    match res.honoured_by(key) {
        Honours::No(why) => vec![rule.finding(Effect::Refused, why)],
        Honours::Yes
            if key.fields.iter().skip(1).any(|f| f.kind == KeyKind::Hashed) && cx.server_version.is_some_and(|v| v < COMPOUND_HASHED) =>
        {
            let (major, minor) = cx.server_version.unwrap_or_default();
            vec![rule.finding(
                Effect::Refused,
                format!("a hashed field after {} needs a compound hashed key (4.4+); this deployment runs {major}.{minor}", res.field),
            )]
        }
        Honours::Yes => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{cx, key};
    use super::*;
    use crate::model::residency::Residency;

    #[test]
    fn only_keys_led_by_the_ranged_zone_field_honour_it() {
        let res = Residency::parse("region=EU:shardEU,US:shardUS").unwrap();
        let mut c = cx(None, None, &[]);
        c.residency = Some(&res);
        assert!(check(&RULE, &c, &key("{region: 1, userId: 1}")).is_empty());
        assert!(check(&RULE, &c, &key("{region: 1, userId: \"hashed\"}")).is_empty());
        let f = check(&RULE, &c, &key("{userId: 1}"));
        assert_eq!((f.len(), f[0].effect), (1, Effect::Refused));
        assert!(f[0].message.starts_with("breaks the residency rule on region: the key does not hold region"), "{}", f[0].message);
        c.server_version = Some((4, 2));
        let f = check(&RULE, &c, &key("{region: 1, userId: \"hashed\"}"));
        assert!(f[0].message.contains("4.4+"), "{}", f[0].message);
        c.residency = None;
        assert!(check(&RULE, &c, &key("{userId: 1}")).is_empty(), "no rule stated: nothing said");
    }
}
