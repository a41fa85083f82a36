//! Query logs on the deployment: `<db>.system.profile` and the 7.0 sampled queries.

use super::LiveSession;
use crate::sources::queries::{add_record, QueryLog};
use anyhow::Result;
use bson::{doc, Document};
use futures_util::TryStreamExt;
use mongodb::Collection;

impl LiveSession {
    /// `<db>.system.profile` entries for the namespace.
    pub async fn read_profile(&self) -> Result<QueryLog> {
        let coll: Collection<Document> = self.db.collection("system.profile");
        let mut log = QueryLog::default();
        let cursor =
            coll.find(doc! {"ns": self.namespace.to_string()}).max_time(self.max_time).selection_criteria(self.read.clone()).await;
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
        let listed = admin
            .aggregate(vec![doc! {"$listSampledQueries": {"namespace": self.namespace.to_string()}}])
            .max_time(self.max_time)
            .await;
        if let Ok(mut cur) = listed {
            let mut ok = true;
            loop {
                match cur.try_next().await {
                    Ok(Some(d)) => {
                        log.records += 1;
                        add_record(&mut log, &d);
                    }
                    Ok(None) => break,
                    Err(_) => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                return Ok((log, "$listSampledQueries"));
            }
            log = QueryLog::default();
        }
        let config = self.client.database("config");
        for name in ["sampledQueries", "sampledQueriesDiff"] {
            let coll: Collection<Document> = config.collection(name);
            let cursor =
                coll.find(doc! {"ns": self.namespace.to_string()}).max_time(self.max_time).selection_criteria(self.read.clone()).await;
            self.for_each_doc(cursor, &format!("reading config.{name} on"), |d| {
                log.records += 1;
                add_record(&mut log, &d);
            })
            .await?;
        }
        Ok((log, "config.sampledQueries"))
    }
}
