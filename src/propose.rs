//! Candidate proposal when the user names no key: every field of the pre-scan
//! (nested included) is profiled (`FieldProfile`: presence, cardinality, top
//! value share, type, increasing by nature, use in filters), then `propose` puts
//! forward what a DBA would: filtered fields, hashed `_id` and a hashed
//! high-cardinality field, and compounds of a grouping field with the time field
//! or `_id`; live, the existing indexes too.
//!
//! The parts: `profile.rs` (the fields profiled), `from_fields.rs` (the keys put forward from
//! them), `collection.rs` (a collection's whole list: indexes, an empty or time-series
//! collection, lists merged), `left_out.rs` and `type_mix.rs` (what is said about a field),
//! `proposal.rs` (a candidate and its origin, which they all hand on).

mod collection;
mod from_fields;
pub(crate) mod left_out;
mod profile;
mod proposal;
pub(crate) mod residency;
pub(crate) mod type_mix;

pub(crate) use collection::{for_collection, for_empty_collection, merge};
pub(crate) use profile::field_paths;
pub(crate) use proposal::{Origin, Proposal};

#[cfg(test)]
mod tests;
