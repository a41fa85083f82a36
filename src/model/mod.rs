//! The types passed through the pipeline: a candidate `ShardKey`, a sampled
//! `Query`, a `KeyRange`, a `Namespace`, indexes and sharding metadata as the
//! server describes them, and the relaxed (shell-like) object syntax users type
//! on the command line.

pub(crate) mod collection;
pub(crate) mod geo;
pub(crate) mod index;
pub(crate) mod key_range;
pub(crate) mod key_space;
pub(crate) mod member;
pub(crate) mod namespace;
pub(crate) mod pinned;
pub(crate) mod pipeline;
pub(crate) mod query;
pub mod relaxed;
pub(crate) mod residency;
pub(crate) mod sampled_doc;
pub(crate) mod shard_key;
pub(crate) mod sharding;
pub(crate) mod shell;
pub(crate) mod version;

pub(crate) use key_range::KeyRange;
pub use key_space::KeySpace;
pub use namespace::Namespace;
pub(crate) use query::OpFigures;
pub use query::{Op, OpStats, Query, QueryOrigin, UpdateSpec};
pub(crate) use sampled_doc::{DocBody, SampledDoc};
pub use shard_key::ShardKey;
pub(crate) use shard_key::{KeyField, KeyKind};
