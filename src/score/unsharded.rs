//! Leave it unsharded: below the balancer's migration threshold sharding moves none of a
//! collection off its primary shard, so a key that scores poorly, or under which the server
//! refuses some of its writes, is no reason to shard it now. The answer is then the one
//! `plan` gives such a collection: it stays unsharded, no command runs, and the best key is
//! named for when it grows; keys the DBA named with `--key` keep their commands (the
//! question asked). Two new users' trials: a 35 KiB accounts collection was given
//! `{slug: "hashed"}` (20, bad) with its commands, though 6.0 refuses every write to it.

use super::apply::Recommendation;
use super::Verdict;
use crate::metrics::cluster::{Benefit, Scale};
use crate::util::text::bytes;

/// The action said for a collection left unsharded (JSON `recommendation.action`).
pub(crate) const LEAVE_UNSHARDED: &str = "leaveUnsharded";

/// What the answer weighs: the collection's size against the threshold, and its best key.
pub(crate) struct Small<'a> {
    pub(crate) namespace: String,
    /// The key's cluster at the collection's size: its data, the threshold, what sharding brings.
    pub(crate) scale: &'a Scale,
    pub(crate) shards: usize,
    /// The collection is sharded already (its own answer: keep, refine or reshard).
    pub(crate) sharded: bool,
    pub(crate) score: u32,
    pub(crate) verdict: Verdict,
    /// The server would refuse some of its sampled writes under the key (`choice::Choice::first`).
    pub(crate) refuses_writes: bool,
}

impl Small<'_> {
    /// Whether the collection is better left unsharded: some data and a cluster modelled (an
    /// empty collection is pre-split on a hashed key; one shard is the DBA's own question),
    /// sharding bringing nothing yet (below the threshold: `cluster::scale`), and the best key
    /// poor or worse or refusing writes.
    pub(crate) fn stays_unsharded(&self) -> bool {
        !self.sharded
            && self.shards > 1
            && self.scale.data_bytes > 0
            && self.scale.benefit == Benefit::NoneYet
            && (matches!(self.verdict, Verdict::Poor | Verdict::Bad | Verdict::Blocked) || self.refuses_writes)
    }
}

/// The recommendation rewritten as "leave it unsharded": no command; the first note says why
/// and when to look again; the notes on what the key would need first stay.
pub(crate) fn leave_unsharded(mut r: Recommendation, s: &Small, first: Option<String>) -> Recommendation {
    let refused = if s.refuses_writes { " and the server would refuse some of its writes under it" } else { "" };
    let blocked = if s.verdict == Verdict::Blocked { " and the server refuses it until a change (its details say which)" } else { "" };
    let lead = format!(
        "leave {} unsharded for now: at {} it is below the balancer's migration threshold ({}), so sharding would move none of it off the primary shard, and its best key, {}, scores {} ({}){refused}{blocked}. No command to run now: analyze it again as it nears {}",
        s.namespace,
        bytes(s.scale.data_bytes),
        bytes(s.scale.migrations_start_bytes),
        r.key,
        s.score,
        s.verdict.as_str(),
        bytes(s.scale.migrations_start_bytes)
    );
    r.action = LEAVE_UNSHARDED;
    r.commands.clear();
    r.notes = std::iter::once(lead).chain(first).collect();
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ShardKey;

    /// A 3-shard cluster's scale at `bytes`, with the benefit `cluster::scale` gives it
    /// (none yet below 3 × 128 MiB).
    fn scale(bytes: u64) -> Scale {
        let start: u64 = (3 * 128) << 20;
        Scale {
            data_bytes: bytes,
            migrations_start_bytes: start,
            all_shards_from_bytes: 3 * start,
            benefit: if bytes < start { Benefit::NoneYet } else { Benefit::Partial },
            words: String::new(),
        }
    }

    fn small(scale: &Scale, verdict: Verdict, refuses_writes: bool) -> Small<'_> {
        Small { namespace: "pm.accounts".into(), scale, shards: 3, sharded: false, score: 20, verdict, refuses_writes }
    }

    #[test]
    fn small_and_poor_or_refusing_stays_unsharded() {
        let (tiny, at, empty) = (scale(35 << 10), scale(384 << 20), scale(0));
        assert!(small(&tiny, Verdict::Bad, false).stays_unsharded());
        assert!(small(&tiny, Verdict::Poor, false).stays_unsharded());
        assert!(small(&tiny, Verdict::Blocked, false).stays_unsharded());
        // A good key on a small collection stays recommended (it may be planned ahead)...
        assert!(!small(&tiny, Verdict::Good, false).stays_unsharded());
        // ...unless the server would refuse writes under it.
        assert!(small(&tiny, Verdict::Good, true).stays_unsharded());
        // At the threshold the balancer moves data: the key is the answer.
        assert!(!small(&at, Verdict::Bad, false).stays_unsharded());
        // Empty (pre-split), one shard, or sharded already: not this answer.
        assert!(!small(&empty, Verdict::Bad, false).stays_unsharded());
        assert!(!Small { shards: 1, ..small(&tiny, Verdict::Bad, false) }.stays_unsharded());
        assert!(!Small { sharded: true, ..small(&tiny, Verdict::Bad, false) }.stays_unsharded());
    }

    #[test]
    fn no_command_and_the_reason_first() {
        let r = Recommendation {
            key: ShardKey::parse("{slug: \"hashed\"}").unwrap(),
            caveats: Vec::new(),
            action: "shardCollection",
            trade_off: None,
            alternatives: Vec::new(),
            commands: vec!["sh.shardCollection(\"pm.accounts\", {slug: \"hashed\"})".into()],
            notes: vec!["run through mongos".into()],
            residency: None,
        };
        let first = Some("this key needs a change first: ...".to_string());
        let out = leave_unsharded(r, &small(&scale(35 << 10), Verdict::Bad, true), first);
        assert_eq!(out.action, "leaveUnsharded");
        assert!(out.commands.is_empty());
        assert_eq!(
            out.notes,
            [
                "leave pm.accounts unsharded for now: at 35.0 KiB it is below the balancer's migration threshold (384.0 MiB), so sharding would move none of it off the primary shard, and its best key, {slug: \"hashed\"}, scores 20 (bad) and the server would refuse some of its writes under it. No command to run now: analyze it again as it nears 384.0 MiB",
                "this key needs a change first: ..."
            ]
        );
    }
}
