//! Query logs on the deployment: `<db>.system.profile` and the 7.0 sampled queries.

use super::LiveSession;
use crate::sources::queries::{add_record, QueryLog};
use anyhow::Result;
use bson::{doc, Document};
use mongodb::Collection;

impl LiveSession {
    /// `<db>.system.profile` entries for the namespace.
    pub async fn read_profile(&self) -> Result<QueryLog> {
        let coll: Collection<Document> = self.db.collection("system.profile");
        let mut log = QueryLog::default();
        let cursor = coll.find(doc! {"ns": self.namespace.to_string()}).max_time(self.max_time).selection_criteria(self.read.clone());
        self.for_each_doc(cursor, "reading system.profile on", |d| {
            log.records += 1;
            add_record(&mut log, &d);
        })
        .await?;
        Ok(log)
    }

    /// Sampled queries: `$listSampledQueries` (7.0+, on mongos), else the
    /// `config.sampledQueries` / `config.sampledQueriesDiff` collections.
    pub async fn read_sampled(&self) -> Result<(QueryLog, &'static str)> {
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
