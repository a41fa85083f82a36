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
mod single_writes;
mod time_series;
mod unique_index;
mod upserts;
mod words;
pub(crate) mod write_targeting;

use crate::model::collection::CollectionOptions;
use crate::model::index::IndexSpec;
use crate::model::{Query, ShardKey};
use serde::Serialize;

crate::labels! {
    /// Which rule found it (the JSON's `constraints[].rule`).
    pub(crate) enum RuleId {
        UniqueIndex => "uniqueIndex",
        Capped => "capped",
        TimeSeries => "timeSeries",
        UpsertWithoutShardKey => "upsertWithoutShardKey",
        SingleWriteWithoutShardKey => "singleWriteWithoutShardKey",
        ExistingShardKey => "existingShardKey",
        IdUniqueness => "idUniqueness",
        GeoField => "geoField",
        ShardKeyUpdateWithoutFullKey => "shardKeyUpdateWithoutFullKey",
        Residency => "residency",
        CompoundHashed => "compoundHashed",
    }
}

crate::labels! {
    /// What a finding does to the key.
    pub(crate) enum Effect {
        /// The server refuses the key on this collection whatever is changed: invalid.
        Refused => "refused",
        /// The server refuses it until something is changed first (an index dropped): blocked.
        Blocked => "blocked",
        /// The server accepts it, but some of the application's writes would fail.
        WritesFail => "writesFail",
        /// Holds on some versions only, or needs a look: said, not scored.
        Warning => "warning",
    }
}

/// What one rule found on one candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Finding {
    pub(crate) rule: RuleId,
    pub(crate) effect: Effect,
    pub(crate) message: String,
    /// Commands that lift a `blocked` finding, in order (run before `shardCollection`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) fix: Vec<String>,
    /// For `writesFail`: the share of sampled writes that would fail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) percentage_of_writes: Option<f64>,
    /// The deployment's version refuses these writes under the key (`write_targeting`):
    /// what `check`'s `max_refused_writes_percent` sums, scored or only said.
    #[serde(skip)]
    pub(crate) refused_here: bool,
    /// For `writesFail`: the key's fields the failing writes' filters lack (the fix a DBA's
    /// application can make: name them by equality, and the server accepts the writes).
    #[serde(skip)]
    pub(crate) filter_fix: Vec<String>,
    /// The index the finding is about (a unique index that blocks): what a fix must keep.
    #[serde(skip)]
    pub(crate) index: Option<Box<IndexSpec>>,
    /// The manual page or server source the rule follows.
    pub(crate) source: &'static str,
    pub(crate) versions: &'static str,
}

/// What the rules read about the collection and its workload.
pub(crate) struct Context<'a> {
    pub(crate) namespace: Option<&'a str>,
    /// None when unknown (a plain export without `--indexes`).
    pub(crate) indexes: Option<&'a [IndexSpec]>,
    pub(crate) options: Option<&'a CollectionOptions>,
    /// Sampled operations on the collection.
    pub(crate) queries: &'a [&'a Query],
    /// (major, minor) of the deployment, when known.
    pub(crate) server_version: Option<(u32, u32)>,
    /// The key the collection is sharded on, when it is.
    pub(crate) current_key: Option<&'a ShardKey>,
    /// The share of sampled documents whose `_id` is not an ObjectId (None: none read).
    pub(crate) application_ids: Option<f64>,
    /// A residency rule the DBA stated (`residency`).
    pub(crate) residency: Option<&'a crate::model::residency::Residency>,
}

impl Context<'_> {
    /// `db.getSiblingDB("app").getCollection("accounts")`, for fix commands.
    fn collection_handle(&self) -> String {
        let ns = self.namespace.unwrap_or("db.collection");
        let (db, coll) = ns.split_once('.').unwrap_or((ns, ""));
        format!("db.getSiblingDB({db:?}).getCollection({coll:?})")
    }
}

/// One rule: its name, what it follows, and its check.
pub(crate) struct Rule {
    pub(crate) id: RuleId,
    pub(crate) source: &'static str,
    pub(crate) versions: &'static str,
    pub(crate) check: fn(&Rule, &Context, &ShardKey) -> Vec<Finding>,
}

impl Rule {
    fn finding(&self, effect: Effect, message: String) -> Finding {
        Finding {
            rule: self.id,
            effect,
            message,
            fix: Vec::new(),
            percentage_of_writes: None,
            refused_here: false,
            filter_fix: Vec::new(),
            index: None,
            source: self.source,
            versions: self.versions,
        }
    }
}

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
