//! A field the filters name that no proposal uses because a few documents hold an array
//! there or lack it (issue 49): the most-queried field must not vanish without a word. It is
//! still measured (`{f: 1, _id: 1}`, and hashed when an equality names it), and the report
//! says the count, an example `_id`, the fix and how the key ranks without those documents.

use super::profile::{FieldProfile, MIN_PRESENCE};
use crate::bsonx::{lookup, Lookup};
use crate::model::ShardKey;
use bson::{Bson, Document};

/// At most this many left-out fields are measured (the most filtered): each adds two candidates.
const MAX_LEFT_OUT: usize = 2;

/// The pre-scan's count of documents that keep a filtered field out of the proposals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LeftOut {
    pub(crate) path: String,
    /// Sampled filters naming it (equality and range).
    pub(crate) uses: usize,
    pub(crate) scanned: usize,
    pub(crate) arrays: usize,
    pub(crate) missing: usize,
    /// The `_id` of the first pre-scanned document holding an array there (else lacking it),
    /// as relaxed extended JSON.
    pub(crate) example_id: Option<String>,
}

impl LeftOut {
    /// `proposedBecause`.
    pub(crate) fn because(&self) -> String {
        format!("{}: named by {} sampled filters, but {}", self.path, self.uses, self.bad_documents())
    }

    /// "3 of 1000 pre-scanned documents hold an array there (the first: _id 42)".
    pub(crate) fn bad_documents(&self) -> String {
        self.counted(Counts { arrays: self.arrays as u64, missing: self.missing as u64, of: self.scanned as u64, what: "pre-scanned" })
    }

    fn counted(&self, c: Counts) -> String {
        let mut parts = Vec::new();
        if c.arrays > 0 {
            parts.push(format!("{} of {} {} documents hold an array there", c.arrays, c.of, c.what));
        }
        if c.missing > 0 {
            parts.push(format!("{} of {} lack it", c.missing, c.of));
        }
        let example = self.example_id.as_deref().map(|id| format!(" (one: _id {id})")).unwrap_or_default();
        format!("{}{example}", parts.join(" and "))
    }

    /// What the DBA does about it. Arrays: the server refuses the key (checkShardingIndex looks
    /// for a single-key index, mongodb/mongo 02fe612 src/mongo/db/s/check_sharding_index_command.cpp:
    /// findShardKeyPrefixedIndex with requireSingleKey=true; an index over an array is multikey).
    /// Missing values are allowed (4.4+) but all sit under one null value.
    pub(crate) fn fix(&self) -> String {
        let p = &self.path;
        if self.arrays > 0 {
            format!(
                "MongoDB refuses a shard key over an array (checkShardingIndex wants a single-key index): give those documents one value in {p} (or move the list to another field), find them with {{\"{p}\": {{$type: \"array\"}}}}"
            )
        } else {
            format!("documents without {p} all go under one null value, on one chunk: set {p} in them, find them with {{\"{p}\": {{$exists: false}}}}")
        }
    }
}

/// The filtered fields the proposals leave out for a minority of bad documents (arrays, or
/// present in fewer than `MIN_PRESENCE` of them but at least half), most filtered first.
pub(crate) fn find(prescan: &[Document], fields: &[FieldProfile]) -> Vec<LeftOut> {
    let n = prescan.len();
    if n == 0 {
        return Vec::new();
    }
    let mut out: Vec<LeftOut> = fields
        .iter()
        .filter(|f| f.uses() > 0 && !f.geo && f.path != "_id")
        .filter(|f| f.arrays > 0 || (f.present as f64) < MIN_PRESENCE * n as f64)
        .filter(|f| (f.present + f.arrays) * 2 >= n)
        .map(|f| {
            let (mut first_array, mut first_missing) = (None, None);
            for d in prescan {
                match lookup(d, &f.path) {
                    Lookup::Array if first_array.is_none() => first_array = d.get("_id"),
                    Lookup::Missing if first_missing.is_none() => first_missing = d.get("_id"),
                    _ => {}
                }
            }
            LeftOut {
                path: f.path.clone(),
                uses: f.uses(),
                scanned: n,
                arrays: f.arrays,
                missing: n - f.present - f.arrays,
                example_id: first_array.or(first_missing).map(|id| Bson::into_relaxed_extjson(id.clone()).to_string()),
            }
        })
        .collect();
    out.sort_by(|a, b| b.uses.cmp(&a.uses).then(a.path.cmp(&b.path)));
    out.truncate(MAX_LEFT_OUT);
    out
}

/// Documents counted in a field's way: holding an array there, lacking it, of how many.
pub(crate) struct Counts {
    pub(crate) arrays: u64,
    pub(crate) missing: u64,
    pub(crate) of: u64,
    pub(crate) what: &'static str,
}

/// The report's note for one left-out field: its documents as the sample counts them, the
/// fix, and where its best key ranks without them (`score`, `rank` of `of` among the keys
/// the server accepts).
pub(crate) fn note(l: &LeftOut, sampled: Counts, key: &ShardKey, score: u32, rank: usize, of: usize) -> String {
    let arrays = sampled.arrays > 0;
    let bad = l.counted(sampled);
    let ranks = if arrays { format!("without those documents {key} would score") } else { format!("{key} scores") };
    format!(
        "{} is named by {} sampled filters but left out of the proposals: {bad}; {}; {ranks} {score} (#{rank} of {of} keys the server accepts)",
        l.path,
        l.uses,
        l.fix()
    )
}
