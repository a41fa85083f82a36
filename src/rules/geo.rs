//! A location in the key. A shard key's index cannot be a geospatial index (manual "Shard
//! Keys", shard key indexes), so `$near`, `$nearSphere`, `$geoWithin` and `$geoIntersects`
//! bound nothing on it: mongod 6.0.5's explain on a `{location: 1}` index gives `$geoWithin`
//! the bounds `[MinKey, MaxKey]`, and `$near` finds no index to run on (NoQueryExecutionPlans),
//! so mongos sends them to every shard the rest of the filter allows (`$near` merged on mongos
//! since 4.0). A location field in the key targets nothing, and every move of a point is a
//! shard key update that moves its document to another shard.

use super::rule::{Context, Effect, Finding, Rule, RuleId};
use crate::model::ShardKey;
use crate::util::text::fmt_count;

pub(super) const RULE: Rule = Rule {
    id: RuleId::GeoField,
    source:
        "https://www.mongodb.com/docs/manual/core/sharding-shard-key/#shard-key-indexes (a shard key index cannot be a geospatial index)",
    versions: "every version",
    check,
};

fn check(rule: &Rule, cx: &Context, key: &ShardKey) -> Vec<Finding> {
    let mut out = Vec::new();
    for f in &key.fields {
        let n = cx.geo_filters().get(f.path.as_str()).copied().unwrap_or(0);
        if n == 0 {
            continue;
        }
        out.push(rule.finding(
            Effect::Warning,
            format!(
                "{} is a location: {} sampled filters read it with $near, $geoWithin or $geoIntersects, which bound nothing on a shard key's index (it cannot be a geo index) and reach every shard whatever its value; a location in the key targets nothing, and each move of a point moves its document to another shard (a shard key update)",
                f.path,
                fmt_count(n as u64)
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{cx, key};
    use super::*;
    use crate::model::{Op, Query, QueryOrigin};
    use bson::doc;

    #[test]
    fn a_location_in_the_key_is_marked() {
        let point = doc! {"$geometry": {"type": "Point", "coordinates": [2.35, 48.85]}};
        let qs = [
            Query::new(Op::Find, "app.v", doc! {"city": "Paris", "location": {"$near": point.clone()}}, QueryOrigin::Profiler),
            Query::new(
                Op::Find,
                "app.v",
                doc! {"location": {"$geoWithin": {"$centerSphere": [[2.35, 48.85], 0.001]}}},
                QueryOrigin::Profiler,
            ),
            Query::new(Op::Find, "app.v", doc! {"city": "Paris"}, QueryOrigin::Profiler),
        ];
        let refs: Vec<&Query> = qs.iter().collect();
        let c = cx(None, None, &refs);
        let f = check(&RULE, &c, &key("{city: 1, location: 1}"));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].effect, Effect::Warning);
        assert!(f[0].message.starts_with("location is a location: 2 sampled filters"), "{}", f[0].message);
        assert!(check(&RULE, &c, &key("{city: 1}")).is_empty());
    }
}
