//! A live collection as the pipeline's `DocumentSource`: documents stream from
//! the server during the pass, never all held at once.

use super::collection::CollectionInfo;
use super::session::LiveSession;
use crate::model::sharding::ShardingMetadata;
use crate::model::ShardKey;
use crate::sources::{Batches, CollectionFacts, DocumentSource};
use anyhow::Result;
use bson::Document;

pub(crate) struct LiveSource<'a> {
    pub(crate) name: String,
    pub(crate) session: &'a LiveSession,
    pub(crate) rt: &'a tokio::runtime::Runtime,
    /// The candidates, for the projection.
    pub(crate) keys: Vec<ShardKey>,
    pub(crate) info: CollectionInfo,
    pub(crate) sample_size: u64,
    /// Documents of the insertion-ordered scan that backs a `$sample` (for monotonicity).
    pub(crate) order_size: u64,
    pub(crate) prescan: Vec<Document>,
    pub(crate) sharding: Option<ShardingMetadata>,
}

impl DocumentSource for LiveSource<'_> {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn prescan(&mut self, n: usize) -> Result<Vec<Document>> {
        // Fetched here when candidates were named (none proposed from it): read only if asked.
        if self.prescan.is_empty() && self.info.count > 0 {
            self.prescan = self.rt.block_on(self.session.prescan(n))?;
        }
        Ok(self.prescan.iter().take(n).cloned().collect())
    }

    fn expected_docs(&self) -> Option<u64> {
        Some(self.sample_size.min(self.info.count))
    }

    fn scan(&mut self, f: &mut Batches) -> Result<()> {
        self.session.stream_sample(self.rt, &self.keys, &self.info, self.sample_size, f)
    }

    fn scan_in_insertion_order(&mut self, f: &mut Batches) -> Result<bool> {
        self.session.stream_in_order(self.rt, &self.keys, &self.info, self.sample_size, self.order_size, f)
    }

    fn read_on(&self) -> Vec<crate::model::member::ReadOn> {
        self.rt.block_on(self.session.read_on())
    }

    fn facts(&self) -> CollectionFacts {
        CollectionFacts {
            num_docs_total: Some(self.info.count),
            avg_doc_size_bytes: Some(self.info.avg_doc_size()),
            indexes: Some(self.info.indexes.clone()),
            sharding: self.sharding.clone(),
            total_index_size_bytes: Some(self.info.index_bytes),
            options: Some(self.info.options.clone()),
            server_version: Some(self.info.server_version),
        }
    }
}
