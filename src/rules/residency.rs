//! A residency rule the DBA stated (`--residency`, a policy's `residency`): a key that cannot
//! keep each value's documents inside its zone breaks it, whatever it scores. A zone range
//! bounds the whole key from its first field (manual `sh.updateZoneKeyRange`: "Specify each
//! field of the shard key"), so only a ranged key led by the zone field honours it
//! (`model::residency::Residency::honoured_by`). A hashed field after it needs 4.4: the
//! `compound_hashed` rule says so for every key.

use super::rule::{Context, Effect, Finding, Rule, RuleId};
use crate::model::residency::Honours;
use crate::model::ShardKey;

pub(super) const RULE: Rule = Rule {
    id: RuleId::Residency,
    source: "https://www.mongodb.com/docs/manual/tutorial/sharding-segmenting-data-by-location/ (a zone range bounds every key field, from the first)",
    versions: "every version (a hashed field after the zone field: 4.4+)",
    check,
};

fn check(rule: &Rule, cx: &Context, key: &ShardKey) -> Vec<Finding> {
    let Some(res) = cx.residency else { return Vec::new() };
    match res.honoured_by(key) {
        Honours::No(why) => vec![rule.finding(Effect::Refused, why)],
        // A hashed field after the zone field before 4.4: the compound_hashed rule says it.
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
        c.residency = None;
        assert!(check(&RULE, &c, &key("{userId: 1}")).is_empty(), "no rule stated: nothing said");
    }
}
