//! What the collection is: server version, existence, count and size,
//! default collation, indexes (multikey from explain), and a pre-scan.

use super::session::LiveSession;
use crate::error::input_error;
use crate::model::collection::CollectionOptions;
use crate::model::index::IndexSpec;
use anyhow::Result;
use bson::{doc, Bson, Document};

/// What we learn about the collection before sampling.
#[derive(Debug, Clone)]
pub struct CollectionInfo {
    pub(crate) count: u64,
    pub(crate) size_bytes: u64,
    /// Sum of the collection's index sizes (storageStats.totalIndexSize).
    pub(crate) index_bytes: u64,
    pub(crate) default_collation: Option<Document>,
    pub(crate) indexes: Vec<IndexSpec>,
    pub(crate) server_version: (u32, u32),
    /// Capped, time-series, clustered, validator (`listCollections`).
    pub(crate) options: CollectionOptions,
}

impl CollectionInfo {
    pub(crate) fn avg_doc_size(&self) -> u64 {
        self.size_bytes.checked_div(self.count).unwrap_or(0)
    }
}

impl LiveSession {
    /// For a missing collection: the closest name in the database ("did you mean"), else
    /// what the database holds. Empty when even the names cannot be listed.
    async fn what_exists_instead(&self) -> String {
        // authorizedCollections: a user with find on some collections only may still list them.
        let cmd = doc! {"listCollections": 1, "nameOnly": true, "authorizedCollections": true};
        let Ok(reply) = self.command(&self.db, cmd, "listCollections on").await else { return String::new() };
        let mut names: Vec<String> = reply
            .get_document("cursor")
            .ok()
            .and_then(|c| c.get_array("firstBatch").ok())
            .map(|b| b.iter().filter_map(|d| d.as_document()?.get_str("name").ok().map(str::to_string)).collect())
            .unwrap_or_default();
        names.retain(|n| !n.starts_with("system."));
        names.sort();
        let db = self.namespace.db();
        if let Some(near) = crate::util::text::closest(&self.coll_name, &names) {
            format!(": did you mean {db}.{near}?")
        } else if names.is_empty() {
            format!(" (database {db} holds no collection: is the database name right?)")
        } else if names.len() <= 6 {
            format!(" ({db} holds {})", names.join(", "))
        } else {
            format!(" ({db} holds {} collections, e.g. {})", names.len(), names[..4].join(", "))
        }
    }

    /// Why `db` lists no collection, as the error to stop on: the database does not exist
    /// (with the closest name there is, "did you mean"; `listDatabases` lists the databases
    /// the user may read), or it holds none.
    pub(crate) async fn no_collection_in(&self, db: &str) -> anyhow::Error {
        let cmd = doc! {"listDatabases": 1, "nameOnly": true, "authorizedDatabases": true};
        let names: Option<Vec<String>> = self.command(&self.client.database("admin"), cmd, "listDatabases on").await.ok().map(|r| {
            r.get_array("databases")
                .map(|a| a.iter().filter_map(|d| d.as_document()?.get_str("name").ok().map(str::to_string)).collect())
                .unwrap_or_default()
        });
        match names {
            Some(names) if !names.iter().any(|n| n == db) => {
                let user: Vec<String> =
                    names.into_iter().filter(|n| !crate::model::namespace::SERVER_DATABASES.contains(&n.as_str())).collect();
                let hint = match crate::util::text::closest(db, &user) {
                    Some(near) => format!(": did you mean {near}?"),
                    None if user.is_empty() => " (it holds no database but admin, config and local)".to_string(),
                    None if user.len() <= 6 => format!(" (its databases: {})", user.join(", ")),
                    None => format!(" ({} databases, e.g. {})", user.len(), user[..4].join(", ")),
                };
                input_error(format!("database {db} does not exist on {}{hint}", self.redacted))
            }
            _ => input_error(format!("database {db} on {} holds no collection: nothing to plan", self.redacted)),
        }
    }

    pub(super) async fn server_version(&self) -> Result<(u32, u32)> {
        let bi = self.command(&self.client.database("admin"), doc! {"buildInfo": 1}, "buildInfo on").await?;
        let v = bi.get_str("version").unwrap_or("0.0");
        let mut it = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
        Ok((it.next().unwrap_or(0), it.next().unwrap_or(0)))
    }

    /// Existence, count, size, default collation and indexes. Errors on a
    /// missing collection or a view.
    pub async fn collection_info(&self) -> Result<CollectionInfo> {
        let server_version = self.server_version().await?;
        let lc = self.command(&self.db, doc! {"listCollections": 1, "filter": {"name": &self.coll_name}}, "listCollections on").await?;
        let first = lc
            .get_document("cursor")
            .ok()
            .and_then(|c| c.get_array("firstBatch").ok())
            .and_then(|b| b.first())
            .and_then(|d| d.as_document())
            .cloned();
        let Some(entry) = first else {
            return Err(input_error(format!(
                "collection {} does not exist on {}{}",
                self.namespace,
                self.redacted,
                self.what_exists_instead().await
            )));
        };
        let options = CollectionOptions::from_entry(&entry);
        // A view holds no documents and cannot be sharded (shardCollection: "... is a view").
        if let Some(on) = &options.view_on {
            return Err(input_error(format!(
                "{} is a view on {on}: a view cannot be sharded; analyse the collection it reads",
                self.namespace
            )));
        }
        let default_collation = entry
            .get_document("options")
            .ok()
            .and_then(|o| o.get_document("collation").ok())
            .filter(|c| c.get_str("locale").map(|l| l != "simple").unwrap_or(false))
            .cloned();

        // $collStats sums over shards when run through mongos.
        let mut count = 0u64;
        let mut size = 0u64;
        let mut index_bytes = 0u64;
        let coll = self.coll();
        let stats =
            coll.aggregate(vec![doc! {"$collStats": {"storageStats": {}}}]).max_time(self.max_time).selection_criteria(self.read.clone());
        self.for_each_doc(stats, "$collStats on", |d| {
            if let Ok(ss) = d.get_document("storageStats") {
                count += num(ss.get("count"));
                size += num(ss.get("size"));
                index_bytes += num(ss.get("totalIndexSize"));
            }
        })
        .await?;

        if options.time_series.is_some() && count == 0 {
            // A time-series collection's storage stats count buckets, not measurements.
            let c = coll.aggregate(vec![doc! {"$count": "n"}]).max_time(self.max_time).selection_criteria(self.read.clone());
            self.for_each_doc(c, "$count on", |d| count = num(d.get("n"))).await?;
            if count > 0 {
                size = size.max(count); // no per-measurement size: at least a byte each
            }
        }
        let li = self.command(&self.db, doc! {"listIndexes": &self.coll_name}, "listIndexes on").await?;
        let mut indexes: Vec<IndexSpec> = li
            .get_document("cursor")
            .ok()
            .and_then(|c| c.get_array("firstBatch").ok())
            .map(|b| b.iter().filter_map(|d| d.as_document()).map(IndexSpec::from_list_indexes).collect())
            .unwrap_or_default();
        for ix in &mut indexes {
            if !ix.sparse && !ix.is_partial() {
                ix.multikey = self.is_multikey(&ix.name).await?;
            }
        }
        Ok(CollectionInfo { count, size_bytes: size, index_bytes, default_collation, indexes, server_version, options })
    }

    /// A collection's indexes as `listIndexes` gives them (multikey not asked).
    pub(crate) async fn indexes_of(&self, coll: &str) -> Result<Vec<IndexSpec>> {
        let li = self.command(&self.db, doc! {"listIndexes": coll}, "listIndexes on").await?;
        Ok(li
            .get_document("cursor")
            .ok()
            .and_then(|c| c.get_array("firstBatch").ok())
            .map(|b| b.iter().filter_map(|d| d.as_document()).map(IndexSpec::from_list_indexes).collect())
            .unwrap_or_default())
    }

    /// listIndexes does not say whether an index is multikey; explain does.
    async fn is_multikey(&self, index: &str) -> Result<Option<bool>> {
        let cmd = doc! {
            "explain": {"find": &self.coll_name, "filter": {}, "hint": index, "limit": 1, "maxTimeMS": self.max_time.as_millis() as i64},
            "verbosity": "queryPlanner",
        };
        let reply = self.command(&self.db, cmd, "explain on").await?;
        fn find(d: &Document) -> Option<bool> {
            if let Ok(b) = d.get_bool("isMultiKey") {
                return Some(b);
            }
            for (_, v) in d {
                match v {
                    Bson::Document(x) => {
                        if let Some(b) = find(x) {
                            return Some(b);
                        }
                    }
                    Bson::Array(a) => {
                        for x in a.iter().filter_map(|x| x.as_document()) {
                            if let Some(b) = find(x) {
                                return Some(b);
                            }
                        }
                    }
                    _ => {}
                }
            }
            None
        }
        Ok(reply.get_document("queryPlanner").ok().and_then(find))
    }

    /// Up to `n` whole documents picked by `$sample` (for proposing candidates).
    pub(crate) async fn prescan(&self, n: usize) -> Result<Vec<Document>> {
        self.sample_of(&self.coll_name, n).await
    }

    /// `n` documents of a collection of the session's database, drawn by `$sample`.
    pub(crate) async fn sample_of(&self, coll: &str, n: usize) -> Result<Vec<Document>> {
        let coll: mongodb::Collection<Document> = self.db.collection(coll);
        let cursor =
            coll.aggregate(vec![doc! {"$sample": {"size": n as i64}}]).max_time(self.max_time).selection_criteria(self.read.clone());
        let mut out = Vec::new();
        self.for_each_doc(cursor, "$sample on", |d| out.push(d)).await?;
        Ok(out)
    }
}

fn num(v: Option<&Bson>) -> u64 {
    v.and_then(crate::bsonx::number::as_count).unwrap_or(0)
}
