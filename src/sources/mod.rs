//! Sources sit at the edge of the pipeline: they turn files (and, later, a live
//! deployment) into documents and `Query` values. Nothing here computes a metric.

pub mod docs;
pub mod live;
pub mod queries;
pub mod records;
pub mod server_compare;
pub mod sharding;
