//! Rules that decide whether the server accepts a shard key and whether the application
//! survives it: one file per rule, each citing its source (the manual page or the server
//! file and commit) and the versions it holds for, with its own tests. `RULES` is the one
//! list; `check` runs them all on one candidate. The score (`crate::score`) turns what they
//! find into a verdict: `refused` → invalid, `blocked` → blocked (recommended only with its
//! fix), `writesFail` → capped.

mod capped;
mod compound_hashed;
mod existing_key;
mod geo;
mod id_uniqueness;
mod residency;
mod rule;
mod single_writes;
mod time_series;
mod unique_index;
mod upserts;
mod words;
pub(crate) mod write_targeting;

use crate::model::ShardKey;
pub(crate) use rule::{Context, Effect, Finding, Rule, RuleId};

/// Every rule, in the order the report lists what they find.
pub(crate) const RULES: &[Rule] = &[
    capped::RULE,
    time_series::RULE,
    existing_key::RULE,
    unique_index::RULE,
    upserts::RULE,
    single_writes::RULE,
    write_targeting::RULE,
    id_uniqueness::RULE,
    geo::RULE,
    residency::RULE,
    compound_hashed::RULE,
];

/// Run every rule on one candidate.
pub(crate) fn check(cx: &Context, key: &ShardKey) -> Vec<Finding> {
    RULES.iter().flat_map(|r| (r.check)(r, cx, key)).collect()
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use crate::model::collection::CollectionOptions;
    use crate::model::index::IndexSpec;
    use crate::model::Query;

    pub(crate) fn key(s: &str) -> ShardKey {
        ShardKey::parse(s).unwrap()
    }

    pub(crate) fn cx<'a>(
        indexes: Option<&'a [IndexSpec]>,
        options: Option<&'a CollectionOptions>,
        queries: &'a [&'a Query],
    ) -> Context<'a> {
        Context {
            namespace: Some("app.accounts"),
            indexes,
            options,
            queries,
            server_version: None,
            current_key: None,
            application_ids: None,
            residency: None,
            geo_filters: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_is_listed_once() {
        for id in RuleId::ALL {
            assert_eq!(RULES.iter().filter(|r| r.id == *id).count(), 1, "{id}");
        }
    }
}
