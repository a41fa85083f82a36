//! Query logs on the deployment: `<db>.system.profile` and the 7.0 sampled queries.

use super::session::LiveSession;
use crate::sources::queries::{add_record, QueryLog};
use anyhow::Result;
use bson::{doc, Document};
use futures_util::TryStreamExt;
use mongodb::Collection;

impl LiveSession {
    /// Sampled queries: `$listSampledQueries` (7.0+, on mongos), else the
    /// `config.sampledQueries` / `config.sampledQueriesDiff` collections.
    pub(crate) async fn read_sampled(&self) -> Result<(QueryLog, &'static str)> {
        let mut log = QueryLog::default();
        let admin = self.client.database("admin");
        let listed = admin.aggregate(vec![doc! {"$listSampledQueries": {"namespace": self.namespace.to_string()}}]).max_time(self.max_time);
        // Any error (an older server, a mongod that is not mongos) means: read the collections instead;
        // a server that stops answering ends the run.
        match self
            .for_each_doc(listed, "$listSampledQueries on", |d| {
                log.records += 1;
                add_record(&mut log, &d);
            })
            .await
        {
            Ok(()) => return Ok((log, "$listSampledQueries")),
            Err(e) if crate::error::kind_of(&e) == Some(crate::error::ErrorKind::Connection) => return Err(e),
            Err(_) => log = QueryLog::default(),
        }
        let config = self.client.database("config");
        for name in ["sampledQueries", "sampledQueriesDiff"] {
            let coll: Collection<Document> = config.collection(name);
            let cursor = coll.find(doc! {"ns": self.namespace.to_string()}).max_time(self.max_time).selection_criteria(self.read.clone());
            self.for_each_doc(cursor, &format!("reading config.{name} on"), |d| {
                log.records += 1;
                add_record(&mut log, &d);
            })
            .await?;
        }
        Ok((log, "config.sampledQueries"))
    }
}

impl LiveSession {
    /// The database's collections and views (not `system.*`), with their types and
    /// options: `(name, type, options)`, by name.
    pub(crate) async fn list_collections(&self) -> Result<Vec<(String, String, Document)>> {
        let what = "listing the collections on";
        let mut out = Vec::new();
        let mut cur = self.answer(what, std::future::IntoFuture::into_future(self.db.list_collections())).await?;
        while let Some(spec) = self.answer(what, cur.try_next()).await? {
            if spec.name.starts_with("system.") {
                continue;
            }
            let typ = match spec.collection_type {
                mongodb::results::CollectionType::View => "view",
                mongodb::results::CollectionType::Timeseries => "timeseries",
                _ => "collection",
            };
            let options = bson::to_document(&spec.options).unwrap_or_default();
            out.push((spec.name, typ.to_string(), options));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }
}
