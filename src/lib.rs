//! shardkey: which MongoDB shard key to choose, and why.
//!
//! The pipeline is the architecture: `sources` → `sample` → `metrics` → `score` → `report`.
//! Dependencies point one way (checked by `tests/architecture.rs`):
//!
//! ```text
//! main → cli → app → { pipeline, plan, sources, policy, report, propose, … }
//! pipeline → { sources (the DocumentSource port), sample, metrics, score, report, propose }
//! report → { plan, policy, score, metrics };  plan → model;  policy → { score, metrics };  score → metrics
//! metrics → { sample, targeting, model };  sample → model;  targeting → model
//! sources → { model, util };  model → bsonx;  util, bsonx, error → nothing
//! ```

pub(crate) mod app;
pub mod bsonx;
pub mod cli;
pub mod error;
pub mod metrics;
pub mod model;
pub(crate) mod pipeline;
pub(crate) mod plan;
pub mod policy;
pub(crate) mod propose;
pub(crate) mod report;
pub(crate) mod rules;
pub mod sample;
pub(crate) mod score;
pub mod sources;
pub mod targeting;
pub mod util;
