//! What a rule is and what it reads and finds: the types every rule file and the report share.

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
    /// For a `refused_here` finding: the first version that runs these writes as they are
    /// (None: no version does), for a plan's script to check against the version it meets.
    #[serde(skip)]
    pub(crate) accepted_from: Option<(u32, u32)>,
    /// The deployment's version is not known, and versions before `accepted_from` refuse
    /// these writes: `check` warns of them rather than count them or call them fine.
    #[serde(skip)]
    pub(crate) refused_if_older: bool,
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
    /// `geo_filters`, counted when first asked (the same for every candidate).
    pub(crate) geo_filters: std::sync::OnceLock<std::collections::BTreeMap<&'a str, usize>>,
}

impl<'a> Context<'a> {
    /// How many sampled filters read each path with a geo predicate (`model::geo::geo_paths`):
    /// counted once for every candidate's fields.
    pub(super) fn geo_filters(&self) -> &std::collections::BTreeMap<&'a str, usize> {
        self.geo_filters.get_or_init(|| {
            let mut out = std::collections::BTreeMap::new();
            for q in self.queries {
                let mut paths = crate::model::geo::geo_paths(&q.filter);
                paths.sort_unstable();
                paths.dedup();
                for p in paths {
                    *out.entry(p).or_default() += 1;
                }
            }
            out
        })
    }

    /// `db.getSiblingDB("app").getCollection("accounts")`, for fix commands.
    pub(super) fn collection_handle(&self) -> String {
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
    pub(super) fn finding(&self, effect: Effect, message: String) -> Finding {
        Finding {
            rule: self.id,
            effect,
            message,
            fix: Vec::new(),
            percentage_of_writes: None,
            refused_here: false,
            accepted_from: None,
            refused_if_older: false,
            filter_fix: Vec::new(),
            index: None,
            source: self.source,
            versions: self.versions,
        }
    }
}
