//! A key with a hashed field beside other fields (a compound hashed key) needs MongoDB 4.4:
//! before it `shardCollection` accepts "hashed" only alone (mongodb/mongo 7c3c0f3,
//! src/mongo/s/shard_key_pattern.cpp `parseShardKeyPattern`; manual "Hashed Sharding":
//! "Starting in MongoDB 4.4, MongoDB supports sharding collections on compound hashed
//! indexes"). A key holds at most one hashed field on every version (the same parser).

use super::rule::{Context, Effect, Finding, Rule, RuleId};
use crate::model::{KeyKind, ShardKey};

pub(super) const RULE: Rule = Rule {
    id: RuleId::CompoundHashed,
    source: "https://www.mongodb.com/docs/manual/core/hashed-sharding/ (compound hashed keys: 4.4+)",
    versions: "before 4.4 (a compound hashed key refused); every version (two hashed fields refused)",
    check,
};

/// The first version that shards on a compound hashed key.
const SINCE: (u32, u32) = (4, 4);

fn check(rule: &Rule, cx: &Context, key: &ShardKey) -> Vec<Finding> {
    let hashed = key.fields.iter().filter(|f| f.kind == KeyKind::Hashed).count();
    if hashed > 1 {
        return vec![rule.finding(Effect::Refused, "a shard key holds at most one hashed field".into())];
    }
    match cx.server_version {
        Some((major, minor)) if hashed == 1 && key.fields.len() > 1 && (major, minor) < SINCE => vec![rule
            .finding(Effect::Refused, format!("a compound hashed key needs MongoDB 4.4 or later; this deployment runs {major}.{minor}"))],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{cx, key};
    use super::*;

    #[test]
    fn a_compound_hashed_key_needs_4_4() {
        let mut c = cx(None, None, &[]);
        let compound = key("{deviceId: \"hashed\", ts: 1}");
        assert!(check(&RULE, &c, &compound).is_empty(), "unknown version: nothing said");
        c.server_version = Some((4, 4));
        assert!(check(&RULE, &c, &compound).is_empty());
        c.server_version = Some((4, 2));
        let f = check(&RULE, &c, &compound);
        assert_eq!((f.len(), f[0].effect), (1, Effect::Refused));
        assert!(f[0].message.contains("4.4") && f[0].message.contains("4.2"), "{}", f[0].message);
        assert!(check(&RULE, &c, &key("{deviceId: \"hashed\"}")).is_empty(), "hashed alone: every version");
        assert!(check(&RULE, &c, &key("{deviceId: 1, ts: 1}")).is_empty());
    }
}
