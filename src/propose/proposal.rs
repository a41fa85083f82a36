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

/// At most this many proposals (besides existing indexes and the current key). Each is
/// measured on the whole sample (its key values, chunks, every sampled operation's targets),
/// so the run's time grows with the count: 24 holds the shapes below for the six most
/// filtered fields with the compounds before them (see `MAX_FIELDS_PROPOSED`).
pub(crate) const MAX_PROPOSALS: usize = 24;

/// A collection's proposals, and the keys `MAX_PROPOSALS` held back (the last put forward:
/// `from_fields::propose_in` says the order), which a note names: nothing left out unsaid.
#[derive(Debug, Clone, Default)]
pub(crate) struct Proposals {
    pub(crate) list: Vec<Proposal>,
    pub(crate) over_cap: Vec<ShardKey>,
}

impl Proposals {
    /// The note on the keys the cap held back, when it bit.
    pub(crate) fn cap_note(&self) -> Option<String> {
        (!self.over_cap.is_empty()).then(|| {
            let keys: Vec<String> = self.over_cap.iter().map(|k| k.to_string()).collect();
            format!(
                "{} more keys left out by the cap of {} proposals (the least filtered fields' compounds go first; give any with --key): {}",
                keys.len(),
                MAX_PROPOSALS,
                keys.join(", ")
            )
        })
    }
}
