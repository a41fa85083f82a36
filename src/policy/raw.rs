//! The policy file as TOML gives it: each section a table of names and values that keep
//! where they stand, so that an error names its line.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

pub(super) type RawTable = BTreeMap<Spanned<String>, Spanned<toml::Value>>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PolicyFile {
    #[serde(default)]
    pub(super) defaults: RawTable,
    #[serde(default)]
    pub(super) collection: Vec<Spanned<RawTable>>,
    pub(super) plan: Option<RawTable>,
}
