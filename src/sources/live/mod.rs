//! A live deployment through the official driver. Read-only: it runs
//! `$collStats`, `listCollections`, `listIndexes`, `explain`, `$sample`, `find`
//! and reads `system.profile` / sampled queries; it never writes or builds an
//! index. The one exception is `query_sampling` (`shardkey sample`, only with
//! `--change-server-settings`), which sets the profiler or the query analyzer for
//! a while and restores it.
//!
//! `LiveSession` (`session`) holds the connection and what every job shares; its methods are
//! split by job:
//! `collection` (what the collection is), `sampling` (the document sample),
//! `query_logs` (profiler and sampled queries), `members` (the profiler of
//! every member), `sharding` (config.*),
//! `server_compare` (the server's own analyzeShardKey); `source` adapts a
//! session to the pipeline's `DocumentSource`.

mod collection;
mod members;
mod profiler;
mod query_logs;
pub(crate) mod query_sampling;
mod read_on;
mod reads_seen;
mod sampling;
mod selection;
pub(crate) mod server_compare;
mod session;
mod sharding;
mod source;
mod version;

pub(crate) use members::{ProfileRead, ProfileScope};
pub use session::{LiveOptions, LiveSession};
pub(crate) use source::LiveSource;
