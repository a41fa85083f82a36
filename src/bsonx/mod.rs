//! BSON helpers the whole pipeline shares: MongoDB's value order, dotted-path
//! lookup with shard-key semantics, and MongoDB's `hash64` for hashed keys.

pub mod depth;
pub mod hash;
pub mod keystring;
pub mod order;
pub mod path;
pub mod redact;

pub use hash::hash64;
pub use order::{canonical_type, cmp_bson, cmp_tuple, group_bytes, is_collatable};
pub use path::{lookup, Lookup};
