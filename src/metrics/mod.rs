//! Pure metric modules: values in, numbers out, no I/O. Each computes one of
//! the numbers in the report and is named after it.

pub mod bounds;
pub mod cardinality;
pub mod cluster;
pub mod distribution;
pub mod frequency;
pub mod key_updates;
pub mod monotonicity;
pub mod ranges;
pub mod shapes;
pub mod sketch;
pub mod targeting;
