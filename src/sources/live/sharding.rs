//! Sharding metadata of the analysed namespace from `config.collections`,
//! `config.chunks` and `config.shards`, through mongos or the config servers.

use super::session::{connect, driver_error, LiveSession};
use crate::error::{connection_error, input_error};
use crate::model::sharding::ShardingMetadata;
use anyhow::Result;
use bson::{doc, Document};
use futures_util::TryStreamExt;
use mongodb::Collection;
use std::time::Duration;

impl LiveSession {
    /// Sharding metadata for the namespace, from this deployment (mongos) or
    /// from `config_uri` (the config servers). None when it is not sharded.
    pub(crate) async fn read_sharding(&self, config_uri: Option<&str>, timeout: Duration) -> Result<Option<ShardingMetadata>> {
        let other;
        let (client, redacted, secrets) = match config_uri {
            Some(u) => {
                let (c, _, r, sec) = connect(u, timeout).await?;
                other = c;
                (&other, r, sec)
            }
            None => (&self.client, self.redacted.clone(), self.secrets.clone()),
        };
        let err = |what: &str, e: mongodb::error::Error| driver_error(&format!("{what} on {redacted}"), e, &secrets);
        let config = client.database("config");
        let find_all = |name: &'static str, filter: Document| {
            let coll: Collection<Document> = config.collection(name);
            let max_time = self.max_time;
            let read = async move {
                let mut cur = coll.find(filter).max_time(max_time).await?;
                let mut out = Vec::new();
                while let Some(d) = cur.try_next().await? {
                    out.push(d);
                }
                Ok::<Vec<Document>, mongodb::error::Error>(out)
            };
            // One deadline for the whole (small) read: the server must not hang the run.
            async move { tokio::time::timeout(super::session::deadline(max_time), read).await.ok() }
        };
        let fetch = |name: &'static str, filter: Document| {
            let (find_all, err, redacted) = (&find_all, &err, &redacted);
            async move {
                match find_all(name, filter).await {
                    Some(r) => r.map_err(|e| err(&format!("reading config.{name}"), e)),
                    None => Err(connection_error(format!(
                        "reading config.{name} on {redacted}: no answer within {} s (the server stopped answering)",
                        super::session::deadline(self.max_time).as_secs()
                    ))),
                }
            }
        };
        let colls = fetch("collections", doc! {"_id": self.namespace.to_string()}).await?;
        let Some(coll) = colls.into_iter().find(|c| !c.get_bool("dropped").unwrap_or(false)) else {
            return Ok(None);
        };
        let by_uuid = match coll.get("uuid") {
            Some(u) => fetch("chunks", doc! {"uuid": u.clone()}).await?,
            None => vec![],
        };
        let by_ns = if by_uuid.is_empty() { fetch("chunks", doc! {"ns": self.namespace.to_string()}).await? } else { vec![] };
        let shards = fetch("shards", doc! {}).await?;
        let meta = crate::sources::sharding::parse(&coll, &by_uuid, &by_ns, &shards)
            .map_err(|e| input_error(format!("sharding metadata for {}: {e}", self.namespace)))?;
        Ok(Some(meta))
    }
}
