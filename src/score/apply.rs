//! How to apply the ranking's choice: the commands for an unsharded collection
//! (`createIndex`, `shardCollection`), and for a sharded one whose current key
//! loses, `refineCollectionShardKey` (the new key extends the current one) or
//! `reshardCollection`, with the manual's storage and oplog requirements.

use super::choice::PROXY_PAGE;
use crate::model::index::{IndexSpec, NewIndex};
use crate::model::{KeyKind, ShardKey};
use crate::util::text::mib;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Recommendation {
    pub(crate) key: ShardKey,
    /// What the choice does not rest on (targeting or the data not measured), said before
    /// the commands.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) caveats: Vec<String>,
    /// "shardCollection", "refineCollectionShardKey", "reshardCollection" or "keep".
    pub(crate) action: &'static str,
    /// The choice a constraint puts before the DBA, in one sentence (`super::choice`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) trade_off: Option<String>,
    /// The other side of that choice: each key, its score, and what it requires.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) alternatives: Vec<super::choice::Alternative>,
    /// mongosh commands, in order, to run through mongos.
    pub(crate) commands: Vec<String>,
    pub(crate) notes: Vec<String>,
    /// A residency rule's zones under this key (`super::residency`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) residency: Option<super::residency::ResidencyZones>,
}

/// What the recommendation needs to know about the collection.
pub(crate) struct Target<'a> {
    pub(crate) namespace: &'a str,
    pub(crate) winner: &'a ShardKey,
    /// Whether an index supports the winner: Some(true/false) live, None offline.
    pub(crate) has_supporting_index: Option<bool>,
    /// The index that supports it, when one does (what it guarantees is said).
    pub(crate) supporting: Option<&'a IndexSpec>,
    /// The index to create when none supports it.
    pub(crate) new_index: NewIndex,
    /// An index on the winner's exact pattern that cannot support it (sparse, partial, a
    /// collation): it stays, the supporting one is created beside it under its own name.
    pub(crate) beside: Option<&'a IndexSpec>,
    /// The collection's default collation, when not simple.
    pub(crate) collation: Option<&'a bson::Document>,
    /// (major, minor) of the deployment, when known.
    pub(crate) server_version: Option<(u32, u32)>,
    pub(crate) current_key: Option<&'a ShardKey>,
    pub(crate) shards: usize,
    pub(crate) data_bytes: u64,
    pub(crate) index_bytes: Option<u64>,
    /// The collection holds no documents (shardCollection pre-splits a hashed key then).
    pub(crate) empty: bool,
    /// What blocks the winner (every candidate is blocked, or the choice chose it): their
    /// fixes run first, a unique index's guarantee moved to a proxy collection.
    pub(crate) blocked_by: Vec<&'a crate::rules::Finding>,
    /// The winner is blocked but chosen over keys the server accepts (`super::choice`).
    pub(crate) chosen_over_accepted: bool,
}

/// Indexes of one key pattern with other options (sparse, partial filter, collation) stand
/// side by side from 5.0 (SERVER-47657 added unique and sparse to the index signature,
/// SERVER-25023 the partial filter; collations since 3.4; mongodb/mongo 085ffeb
/// jstests/core/index_signature.js). Tried on 6.0.5: a plain index beside a unique partial,
/// a unique sparse and an `en` one, each under its own name; a TTL index has no twin
/// (IndexOptionsConflict), but it supports a key as it is.
const SIDE_BY_SIDE: (u32, u32) = (5, 0);

pub(crate) fn recommend(t: &Target) -> Recommendation {
    let (db, coll) = t.namespace.split_once('.').unwrap_or((t.namespace, ""));
    let handle = format!("db.getSiblingDB({db:?}).getCollection({coll:?})");
    let create = t.new_index.command(&handle);
    let mut notes = Vec::new();
    let mut commands = Vec::new();
    let action = match t.current_key {
        Some(cur) if cur == t.winner => {
            notes.push("the collection is already sharded on the recommended key".into());
            "keep"
        }
        Some(cur) if t.winner.refines(cur) => {
            if t.has_supporting_index != Some(true) {
                commands.push(create);
            }
            commands.push(format!("db.adminCommand({{refineCollectionShardKey: {:?}, key: {}}})", t.namespace, t.winner));
            notes.push(format!(
                "{} extends the current key {cur}: refineCollectionShardKey (4.4+) adds the suffix fields without moving data; the index must exist first",
                t.winner
            ));
            notes.push("https://www.mongodb.com/docs/manual/core/sharding-refine-a-shard-key/".into());
            "refineCollectionShardKey"
        }
        Some(cur) => {
            // Like shardCollection, reshardCollection takes the simple collation on a collection
            // whose default is not simple (the manual's reshardCollection "collation" field).
            let simple = if t.collation.is_some() { ", collation: {locale: \"simple\"}" } else { "" };
            commands.push(format!("db.adminCommand({{reshardCollection: {:?}, key: {}{simple}}})", t.namespace, t.winner));
            let need = t.index_bytes.map(|ix| (t.data_bytes + ix) * 2 / t.shards.max(1) as u64);
            notes.push(match need {
                Some(b) => format!(
                    "reshardCollection (5.0+) rewrites the collection from {cur}: each of the {} shards needs about {} free storage ((collection size {} + index size {}) × 2 / shards)",
                    t.shards, mib(b), mib(t.data_bytes), mib(t.index_bytes.unwrap_or(0))
                ),
                None => format!(
                    "reshardCollection (5.0+) rewrites the collection from {cur}: each shard needs about (collection size + index size) × 2 / shards of free storage"
                ),
            });
            notes.push(
                "the oplog must cover at least 24 hours (the manual's requirement); writes block for up to 2 seconds at the end".into(),
            );
            notes.push("https://www.mongodb.com/docs/manual/core/sharding-reshard-a-collection/".into());
            "reshardCollection"
        }
        None => {
            match t.has_supporting_index {
                Some(true) => {
                    if let Some(g) = t.supporting.and_then(|ix| ix.guarantees().map(|g| (ix, g))) {
                        notes.push(format!("{} supports the key and stays as it is: it keeps {}", g.0.name, g.1));
                    }
                }
                Some(false) => {
                    if let Some(ix) = t.beside {
                        let keeps = match (ix.guarantees(), ix.collation_locale()) {
                            (Some(g), _) => format!(": it keeps {g}"),
                            (None, Some(locale)) => format!(": it keeps serving the queries of collation {locale}"),
                            (None, None) => ": it keeps serving the queries that use it".to_string(),
                        };
                        let why = ix.unusable_because().join(", ");
                        if t.server_version.is_some_and(|v| v < SIDE_BY_SIDE) && ix.collation.is_none() {
                            // Before 5.0 the server keeps one index per pattern (a collation aside).
                            let drop = format!("{handle}.dropIndex({:?})", ix.name);
                            commands.push(through_mongos(
                                &drop,
                                None,
                                &format!("{} kept: drop it through mongos, where the commands after it shard {}", ix.name, t.namespace),
                            ));
                            notes.push(format!(
                                "index {} ({why}) cannot support the key, and before 5.0 the server keeps one index per key pattern: dropping it ends what it guarantees{keeps}; upgrade to 5.0 first to keep it beside the supporting index",
                                ix.name
                            ));
                        } else {
                            notes.push(format!(
                                "index {} ({why}) cannot support the key; nothing is dropped{keeps}. The supporting index is created beside it as {} (5.0+ keeps indexes of one pattern with other options side by side)",
                                ix.name,
                                t.new_index.name.as_deref().unwrap_or("its default name")
                            ));
                        }
                    }
                    commands.push(create)
                }
                None => {
                    notes.push(format!("create the index unless one already starts with {}'s fields", t.winner));
                    commands.push(create);
                }
            }
            commands.push(match t.collation {
                // SERVER-24751: on a collection whose default collation is not simple,
                // shardCollection needs the simple collation said (and its index).
                Some(_) => format!("sh.shardCollection({:?}, {}, false, {{collation: {{locale: \"simple\"}}}})", t.namespace, t.winner),
                None => format!("sh.shardCollection({:?}, {})", t.namespace, t.winner),
            });
            notes.push("run through mongos; before 6.0 run sh.enableSharding(\"".to_string() + db + "\") first");
            let hashed = t.winner.fields.first().is_some_and(|f| f.kind == KeyKind::Hashed);
            match (hashed, t.empty) {
                (true, true) => notes.push(
                    "the collection is empty: shardCollection pre-splits a hashed key into chunks on every shard at once (2 per shard; numInitialChunks for more), so inserts spread from the first one".into(),
                ),
                (true, false) => notes.push(
                    "a populated collection is not pre-split: the balancer moves its data from the primary shard (https://www.mongodb.com/docs/manual/core/hashed-sharding/)".into(),
                ),
                (false, true) => notes.push(
                    "the collection is empty: a ranged key starts as one chunk on the primary shard, split as it grows; sh.splitAt before loading spreads it sooner".into(),
                ),
                (false, false) => {}
            }
            "shardCollection"
        }
    };
    if !t.blocked_by.is_empty() {
        // The server refuses the key until these run: they come first, each unique index's
        // guarantee moved to a proxy collection before its drop, and the notes say why.
        let mut fixes = Vec::new();
        let mut first = Vec::new();
        for f in &t.blocked_by {
            // Chosen over accepted keys, the why and the warning above already give the whole
            // message: the note names the index only.
            first.push(match (&f.index, t.chosen_over_accepted) {
                (Some(ix), true) => format!("this key needs a change first: unique index {} blocks it", ix.name),
                (None, true) => format!("this key needs a change first: {}", f.message),
                (_, false) => format!("every candidate is blocked; this one needs a change first: {}", f.message),
            });
            match f.index.as_ref().filter(|ix| ix.unique) {
                // The proxy's commands, then the finding's fix (the index's drop) guarded by them.
                Some(ix) => {
                    let p = proxy(db, coll, ix);
                    fixes.extend(p.commands);
                    fixes.extend(f.fix.iter().map(|drop| through_mongos(drop, Some(&p.holds), &p.kept)));
                    first.extend(p.notes);
                }
                None => fixes.extend(f.fix.iter().cloned()),
            }
        }
        commands.splice(0..0, fixes);
        notes.splice(0..0, first);
    }
    Recommendation {
        key: t.winner.clone(),
        caveats: Vec::new(),
        trade_off: None,
        alternatives: Vec::new(),
        action,
        commands,
        notes,
        residency: None,
    }
}

/// `command` on one mongosh line that runs only through mongos (and when `also` holds):
/// pasted lines each run on after another fails, so a destructive one guards itself, and
/// elsewhere prints why it did not run. mongos answers isMaster (every version; `hello`
/// needs 4.4.2+) with msg "isdbgrid" (the manual's `hello` output, "msg").
fn through_mongos(command: &str, also: Option<&str>, kept: &str) -> String {
    let also = also.map(|c| format!(" && {c}")).unwrap_or_default();
    format!("if (db.adminCommand({{isMaster: 1}}).msg === \"isdbgrid\"{also}) {command}; else print({kept:?})")
}

/// A proxy collection's commands and words, and what guards the index's drop after them.
struct Proxy {
    commands: Vec<String>,
    notes: Vec<String>,
    /// mongosh's test that the proxy holds the unique index.
    holds: String,
    /// What the drop prints when it does not run.
    kept: String,
}

/// The proxy collection that keeps a unique index's guarantee once the index is dropped
/// (manual "Enforce Uniqueness on a Field That Is Not the Shard Key"): the same unique index
/// (its partial filter, sparseness and collation too) on a collection named after the
/// fields, filled from the collection's documents (their `_id` and the fields) before the drop.
fn proxy(db: &str, coll: &str, ix: &IndexSpec) -> Proxy {
    use crate::model::shell::shell_doc;
    let fields: Vec<&str> = ix.key.keys().map(String::as_str).collect();
    let name = format!("{coll}_{}", fields.join("_").replace('.', "_"));
    let mut opts = vec!["unique: true".to_string(), format!("name: {:?}", ix.name)];
    if let Some(f) = &ix.partial_filter {
        opts.push(format!("partialFilterExpression: {}", shell_doc(f)));
    }
    if ix.sparse {
        opts.push("sparse: true".into());
    }
    if let Some(c) = &ix.collation {
        opts.push(format!("collation: {}", shell_doc(c)));
    }
    let handle = |c: &str| format!("db.getSiblingDB({db:?}).getCollection({c:?})");
    // Only the documents the index holds: a partial index's filter, a sparse one's fields.
    let mut pipeline = Vec::new();
    match (&ix.partial_filter, ix.sparse) {
        (Some(f), _) => pipeline.push(format!("{{$match: {}}}", shell_doc(f))),
        (None, true) => {
            let any: Vec<String> = fields.iter().map(|f| format!("{{{f:?}: {{$exists: true}}}}")).collect();
            pipeline.push(format!("{{$match: {{$or: [{}]}}}}", any.join(", ")));
        }
        (None, false) => {}
    }
    let projected: Vec<String> = fields.iter().map(|f| format!("{f:?}: 1")).collect();
    pipeline.push(format!("{{$project: {{{}}}}}", projected.join(", ")));
    pipeline.push(format!("{{$merge: {{into: {name:?}, on: \"_id\", whenMatched: \"keepExisting\", whenNotMatched: \"insert\"}}}}"));
    // The drop (the rule's fix) ends the guarantee on the collection itself: it runs only where
    // the commands after it can shard the collection (mongos) and once the proxy holds the same
    // unique index, so that pasted on a replica set, or after a failed line, it keeps the index.
    // (listIndexes fails on a collection not made yet: its name is looked for first.)
    let holds = format!(
        "db.getSiblingDB({db:?}).getCollectionNames().includes({name:?}) && {}.getIndexes().some(ix => ix.name === {:?} && ix.unique)",
        handle(&name),
        ix.name
    );
    let kept = format!("{} kept: drop it through mongos, once {db}.{name} holds its unique index (the commands before this one)", ix.name);
    let commands = vec![
        format!("{}.createIndex({}, {{{}}})", handle(&name), shell_doc(&ix.key), opts.join(", ")),
        format!("{}.aggregate([{}])", handle(coll), pipeline.join(", ")),
    ];
    let what = fields.join(" + ");
    let mut notes = vec![format!(
        "{} keeps {}: change the application first: from then on it inserts {{_id, {}}} into {name} first and the document with the same _id into {coll}, both in one transaction (a duplicate fails the first insert), and changes or deletes both together ({PROXY_PAGE}); then the commands give the proxy collection {db}.{name} the same unique index and every document's _id and {what}, and drop {} only through mongos, once {name} holds the index",
        ix.name,
        ix.guarantees().unwrap_or_default(),
        fields.join(", "),
        ix.name
    )];
    // Sharded itself, a proxy keeps its uniqueness only on a key its index starts with.
    if let Some(key) = ix.as_shard_key().filter(|_| ix.partial_filter.is_none() && !ix.sparse && ix.collation.is_none()) {
        notes.push(format!("if {name} must be sharded itself, its key is its unique index's: sh.shardCollection(\"{db}.{name}\", {key})"));
    }
    Proxy { commands, notes, holds, kept }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    fn k(s: &str) -> ShardKey {
        ShardKey::parse(s).unwrap()
    }

    /// An unsharded collection of `ns`, no index known to support `winner`.
    fn target<'a>(ns: &'a str, winner: &'a ShardKey) -> Target<'a> {
        Target {
            namespace: ns,
            winner,
            has_supporting_index: Some(false),
            supporting: None,
            new_index: NewIndex::for_key(winner, &[], false),
            beside: None,
            collation: None,
            server_version: None,
            current_key: None,
            shards: 4,
            data_bytes: 0,
            index_bytes: None,
            empty: false,
            blocked_by: vec![],
            chosen_over_accepted: false,
        }
    }

    #[test]
    fn unsharded_gets_create_index_and_shard_collection() {
        let w = k("{projectId: 1, _id: 1}");
        let r = recommend(&target("app.events", &w));
        assert_eq!(r.action, "shardCollection");
        assert_eq!(
            r.commands,
            vec![
                "db.getSiblingDB(\"app\").getCollection(\"events\").createIndex({projectId: 1, _id: 1})".to_string(),
                "sh.shardCollection(\"app.events\", {projectId: 1, _id: 1})".to_string()
            ]
        );
    }

    #[test]
    fn a_longer_key_refines_and_another_reshards_with_the_manual_storage_estimate() {
        let (cur, w) = (k("{projectId: 1}"), k("{projectId: 1, _id: 1}"));
        let r = recommend(&Target { has_supporting_index: Some(true), current_key: Some(&cur), ..target("app.events", &w) });
        assert_eq!(r.action, "refineCollectionShardKey");
        assert_eq!(r.commands, vec!["db.adminCommand({refineCollectionShardKey: \"app.events\", key: {projectId: 1, _id: 1}})"]);
        let h = k("{_id: \"hashed\"}");
        // (6,000 MiB + 2,000 MiB) × 2 / 4 shards = 4,000 MiB per shard.
        let r = recommend(&Target {
            current_key: Some(&cur),
            data_bytes: 6000 << 20,
            index_bytes: Some(2000 << 20),
            ..target("app.events", &h)
        });
        assert_eq!(r.action, "reshardCollection");
        assert!(r.notes[0].contains("about 4000 MiB free storage"), "{:?}", r.notes);
        let en = doc! {"locale": "en"};
        let r = recommend(&Target { current_key: Some(&cur), collation: Some(&en), ..target("app.events", &h) });
        assert_eq!(
            r.commands,
            ["db.adminCommand({reshardCollection: \"app.events\", key: {_id: \"hashed\"}, collation: {locale: \"simple\"}})"]
        );
    }

    #[test]
    fn an_index_on_the_pattern_that_cannot_serve_stays_and_says_what_it_keeps() {
        let w = k("{ssn: 1}");
        let partial = IndexSpec {
            name: "ssn_1".into(),
            key: doc! {"ssn": 1},
            unique: true,
            partial_filter: Some(doc! {"ssn": {"$type": "string"}}),
            ..IndexSpec::default()
        };
        let all = [partial.clone()];
        let t = Target { beside: Some(&partial), new_index: NewIndex::for_key(&w, &all, false), ..target("app.accounts", &w) };
        let r = recommend(&t);
        assert_eq!(
            r.commands,
            [
                "db.getSiblingDB(\"app\").getCollection(\"accounts\").createIndex({ssn: 1}, {name: \"ssn_1_shardKey\"})".to_string(),
                "sh.shardCollection(\"app.accounts\", {ssn: 1})".to_string()
            ]
        );
        assert!(
            r.notes[0].starts_with(
                "index ssn_1 (partial) cannot support the key; nothing is dropped: it keeps ssn unique among the documents matching {\"ssn\":{\"$type\":\"string\"}}. The supporting index is created beside it as ssn_1_shardKey"
            ),
            "{:?}",
            r.notes
        );
        // Before 5.0: one index per pattern, so the drop is printed with what it ends.
        let r = recommend(&Target { server_version: Some((4, 4)), ..t });
        // Guarded: pasted on a replica set, where shardCollection would fail after it, it keeps the index.
        assert_eq!(
            r.commands[0],
            "if (db.adminCommand({isMaster: 1}).msg === \"isdbgrid\") db.getSiblingDB(\"app\").getCollection(\"accounts\").dropIndex(\"ssn_1\"); else print(\"ssn_1 kept: drop it through mongos, where the commands after it shard app.accounts\")"
        );
        assert!(r.notes[0].contains("dropping it ends what it guarantees: it keeps ssn unique among"), "{:?}", r.notes);
    }

    #[test]
    fn a_non_simple_default_collation_says_simple_in_both_commands() {
        let w = k("{_id: \"hashed\"}");
        let en = doc! {"locale": "en", "strength": 2};
        let r = recommend(&Target { collation: Some(&en), new_index: NewIndex::for_key(&w, &[], true), ..target("app.users", &w) });
        assert_eq!(
            r.commands,
            [
                "db.getSiblingDB(\"app\").getCollection(\"users\").createIndex({_id: \"hashed\"}, {collation: {locale: \"simple\"}})"
                    .to_string(),
                "sh.shardCollection(\"app.users\", {_id: \"hashed\"}, false, {collation: {locale: \"simple\"}})".to_string()
            ]
        );
    }

    #[test]
    fn a_ttl_index_that_supports_the_key_is_said_kept() {
        let w = k("{ts: 1}");
        let ttl = IndexSpec { name: "ts_1".into(), key: doc! {"ts": 1}, expire_after_seconds: Some(3600), ..IndexSpec::default() };
        let r = recommend(&Target { has_supporting_index: Some(true), supporting: Some(&ttl), ..target("app.events", &w) });
        assert_eq!(r.commands, ["sh.shardCollection(\"app.events\", {ts: 1})"]);
        assert_eq!(r.notes[0], "ts_1 supports the key and stays as it is: it keeps documents expiring 3600 s after their ts (TTL)");
    }
}
