//! Small helpers with no knowledge of MongoDB or of the pipeline.

pub mod label;
pub mod progress;
pub mod splitmix;
pub mod term;
pub mod text;
pub mod uri;
