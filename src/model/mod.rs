//! The types passed through the pipeline: a candidate `ShardKey`, a sampled
//! `Query`, and the relaxed (shell-like) object syntax users type on the command line.

pub mod index;
pub mod query;
pub mod relaxed;
pub mod shard_key;

pub use query::{Op, Query, QueryOrigin, UpdateSpec};
pub use shard_key::{KeyField, KeyKind, ShardKey};
