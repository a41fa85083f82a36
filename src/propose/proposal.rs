//! A candidate key and where it comes from: what every part of the proposal hands on.

use super::left_out::LeftOut;
use crate::model::ShardKey;

/// A candidate and where it comes from.
#[derive(Debug, Clone)]
pub(crate) struct Proposal {
    pub(crate) key: ShardKey,
    pub(crate) origin: Origin,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The user named it (`--key`, a policy's `key`).
    Named,
    /// The collection is already sharded on it.
    CurrentShardKey,
    /// Proposed, and why.
    Proposed(String),
    /// A filtered field the other proposals leave out for a few bad documents: measured so
    /// the report can say how it ranks once they are fixed (`left_out`).
    LeftOut(Box<LeftOut>),
}

impl Origin {
    /// The report's `proposedBecause`.
    pub(crate) fn proposed_because(&self) -> Option<String> {
        match self {
            Origin::Named => None,
            Origin::CurrentShardKey => Some("current shard key".into()),
            Origin::Proposed(why) => Some(why.clone()),
            Origin::LeftOut(l) => Some(l.because()),
        }
    }
}

impl Proposal {
    pub(crate) fn named(key: ShardKey) -> Proposal {
        Proposal { key, origin: Origin::Named }
    }
}
