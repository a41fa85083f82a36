//! A range of shard key values in key space (hashed fields already hashed):
//! what a query touches, what a chunk covers.

use bson::Bson;

/// From `min` to `max`, both inclusive for a query's bounds; one tuple entry per key field.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KeyRange {
    pub(crate) min: Vec<Bson>,
    pub(crate) max: Vec<Bson>,
}

impl KeyRange {
    /// The range holding exactly one key value.
    pub(crate) fn point(v: Vec<Bson>) -> KeyRange {
        KeyRange { min: v.clone(), max: v }
    }

    /// Whether both ends are one value in key order (`cmp_tuple`, not `==`: a document's
    /// fields compare in order there): a lookup of `min` answers for `max` too.
    pub(crate) fn is_point(&self) -> bool {
        crate::bsonx::cmp_tuple(&self.min, &self.max).is_eq()
    }

    /// MinKey..MaxKey on every field: the whole key space.
    pub(crate) fn is_full(&self) -> bool {
        self.min.iter().all(|v| matches!(v, Bson::MinKey)) && self.max.iter().all(|v| matches!(v, Bson::MaxKey))
    }
}
