//! shardkey: which MongoDB shard key to choose, and why.
//!
//! The pipeline is the architecture: `sources` → `sample` → `metrics` → `score` → `report`,
//! put together in `analyze`.

pub mod analyze;
pub mod bsonx;
pub mod check;
pub mod cli;
pub mod error;
pub mod metrics;
pub mod model;
pub mod policy;
pub mod predict;
pub mod propose;
pub mod rand;
pub mod report;
pub mod sample;
pub mod score;
pub mod sources;
