//! The version the deployment runs, as `buildInfo` says it ("6.0.5"): the server's own, or
//! through mongos (whose version is its own, not the data's) each shard's, the lowest.

use super::session::LiveSession;
use crate::model::version::{numbers, ServerVersion, VersionFrom};
use anyhow::Result;
use bson::{doc, Document};
use mongodb::Collection;

impl LiveSession {
    async fn build_info_version(&self) -> Result<String> {
        let bi = self.command(&self.client.database("admin"), doc! {"buildInfo": 1}, "buildInfo on").await?;
        Ok(bi.get_str("version").unwrap_or("0.0").to_string())
    }

    /// The deployment's version: `buildInfo`; through mongos, every shard's (from
    /// `config.shards`, each over its own connection), the lowest, since the shards run the
    /// commands (mongos itself is upgraded last). A shard that cannot be asked is left out;
    /// with none, mongos's own.
    pub(crate) async fn deployment_version(&self) -> Result<ServerVersion> {
        let hello = self.command(&self.client.database("admin"), doc! {"isMaster": 1}, "isMaster on").await?;
        if hello.get_str("msg").ok() == Some("isdbgrid") {
            let coll: Collection<Document> = self.client.database("config").collection("shards");
            let mut shards = Vec::new();
            self.for_each_doc(coll.find(doc! {}).max_time(self.max_time), "reading config.shards on", |d| shards.push(d)).await?;
            let mut lowest: Option<String> = None;
            for s in &shards {
                let Ok(host) = s.get_str("host") else { continue };
                let (set, hosts) = super::members::parse_shard_host(host);
                let Ok(shard) = self.reach(&hosts, set.as_deref()) else { continue };
                if let Ok(v) = shard.build_info_version().await {
                    if lowest.as_ref().is_none_or(|l| numbers(&v) < numbers(l)) {
                        lowest = Some(v);
                    }
                }
            }
            if let Some(v) = lowest.and_then(|v| ServerVersion::parse(&v, VersionFrom::Shards)) {
                return Ok(v);
            }
        }
        let text = self.build_info_version().await?;
        ServerVersion::parse(&text, VersionFrom::Server)
            .ok_or_else(|| crate::error::input_error(format!("buildInfo on {}: version {text:?} is not a version", self.redacted)))
    }
}
