//! A first-field value that holds more than one zone's fair share of the sampled data: found
//! by `metrics::cluster::pinned`, said by the plan's zones (`plan::pinned`).

use bson::Bson;

/// One first-field value above its fair share.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pinned {
    /// The first field's value, in key space (a hash when the first field is hashed).
    pub(crate) value: Bson,
    pub(crate) documents: u64,
    pub(crate) of: u64,
    /// The key's second field at the value's sampled median (key space): where its range
    /// splits in two halves. None for a one-field key or a value of one distinct key.
    pub(crate) next_split: Option<Bson>,
}
