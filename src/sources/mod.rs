//! Sources sit at the edge of the pipeline: they turn files and live deployments
//! into documents, `Query` values and facts about the collection. Nothing here
//! computes a metric.
//!
//! - `DocumentSource`: the port the pipeline reads documents through
//!   (`files::FileSource`, `files::MemorySource`, `live::LiveSource`);
//! - `records`/`docs`: document files (mongoexport JSON, mongodump BSON);
//! - `queries`: query logs in every format we read;
//! - `sharding`: `config.*` documents → `model::sharding::ShardingMetadata`;
//! - `live`: a deployment through the driver.

pub mod docs;
pub(crate) mod dump;
pub(crate) mod files;
pub(crate) mod json_scan;
pub mod live;
pub mod projected;
pub mod queries;
pub mod records;
pub(crate) mod sharding;

use crate::model::index::IndexSpec;
use crate::model::sharding::ShardingMetadata;
use crate::model::SampledDoc;
use anyhow::Result;
use bson::Document;

/// What `DocumentSource::scan` feeds: consecutive batches of documents.
pub(crate) type Batches<'a> = dyn FnMut(&[SampledDoc]) -> Result<()> + Send + 'a;

/// What a source knows about the collection beyond its documents.
#[derive(Debug, Clone, Default)]
pub(crate) struct CollectionFacts {
    /// The collection's document count (fast count), when known.
    pub(crate) num_docs_total: Option<u64>,
    /// The average document size, when known (a live source projects only key
    /// fields, so the sample cannot measure it).
    pub(crate) avg_doc_size_bytes: Option<u64>,
    /// The collection's indexes, when known (live).
    pub(crate) indexes: Option<Vec<IndexSpec>>,
    /// The collection is already sharded: its key and chunks.
    pub(crate) sharding: Option<ShardingMetadata>,
    /// The size of the collection's indexes, when known (live), for `reshardCollection`'s storage need.
    pub(crate) total_index_size_bytes: Option<u64>,
    /// Capped, time-series, view…: when known (live, or a mongodump metadata.json).
    pub(crate) options: Option<crate::model::collection::CollectionOptions>,
    /// The server's version (major, minor), when known (live).
    pub(crate) server_version: Option<(u32, u32)>,
}

/// A stream of documents in insertion order, plus what the source knows about the collection.
pub(crate) trait DocumentSource {
    /// For the report: a file path or a redacted URI and namespace.
    fn describe(&self) -> String;
    /// The first `n` documents, whole, for proposing candidates.
    fn prescan(&mut self, n: usize) -> Result<Vec<Document>>;
    /// Every sampled document with its BSON size in bytes (0 when the source
    /// cannot know it; `CollectionFacts::avg_doc_size_bytes` then says it), in
    /// batches, in order. `f` is `Send`: a source may run it beside its own reading.
    fn scan(&mut self, f: &mut Batches) -> Result<()>;
    /// A hint before `scan`: only these top-level fields of each document will be read
    /// (`Sample::fields_read`). A file source then builds only them; the BSON size it
    /// passes is still the whole document's.
    fn read_only(&mut self, _fields: &[String]) {}
    /// About how many documents `scan` gives, when the source knows (room is made for them at once).
    fn expected_docs(&self) -> Option<u64> {
        None
    }
    /// When `scan` is not in insertion order (e.g. `$sample`), a second stream
    /// that is, for monotonicity. Returns false when `scan` already is.
    fn scan_in_insertion_order(&mut self, _f: &mut Batches) -> Result<bool> {
        Ok(false)
    }
    /// Live: the members the document reads ran on (empty for files).
    fn read_on(&self) -> Vec<crate::model::member::ReadOn> {
        Vec::new()
    }
    /// What the source knows about the collection.
    fn facts(&self) -> CollectionFacts {
        CollectionFacts::default()
    }
    /// False for `NoDocuments`: an empty stream is then expected, not an error.
    fn has_documents(&self) -> bool {
        true
    }
}

/// No documents at all: a queries-only analysis (`--queries` without `--docs`/`--uri`).
/// The targeting half needs none; key characteristics are reported as not measured.
pub(crate) struct NoDocuments;

impl DocumentSource for NoDocuments {
    fn describe(&self) -> String {
        "no documents (query logs only)".into()
    }

    fn prescan(&mut self, _n: usize) -> Result<Vec<Document>> {
        Ok(Vec::new())
    }

    fn scan(&mut self, _f: &mut Batches) -> Result<()> {
        Ok(())
    }

    fn has_documents(&self) -> bool {
        false
    }
}
