//! Small helpers with no knowledge of MongoDB or of the pipeline.

pub(crate) mod label;
pub(crate) mod progress;
pub mod splitmix;
pub(crate) mod stats;
pub(crate) mod term;
pub(crate) mod text;
pub mod uri;
