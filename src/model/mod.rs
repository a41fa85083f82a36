//! The types passed through the pipeline: a candidate `ShardKey`, a sampled
//! `Query`, a `KeyRange`, a `Namespace`, indexes and sharding metadata as the
//! server describes them, and the relaxed (shell-like) object syntax users type
//! on the command line.

pub mod collection;
pub mod index;
pub mod key_range;
pub mod key_space;
pub mod namespace;
pub mod query;
pub mod relaxed;
pub mod sampled_doc;
pub mod shard_key;
pub mod sharding;

pub use key_range::KeyRange;
pub use key_space::KeySpace;
pub use namespace::Namespace;
pub use query::{Op, OpStats, Query, QueryOrigin, UpdateSpec};
pub use sampled_doc::{DocBody, SampledDoc};
pub use shard_key::{KeyField, KeyKind, ShardKey};
