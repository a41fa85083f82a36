//! One combination of choices laid on the shards: the zone groups (keys starting with linked
//! fields of one kind), each unsharded collection's home shard, and each shard's data and
//! operations.

use super::input::{Choice, CollectionInput, Settings};
use super::links;
use super::verdicts::Verdicts;
use crate::model::KeyKind;
use std::collections::BTreeSet;

/// Collections whose keys start with linked fields of the same kind, co-located by zones.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub(crate) members: Vec<usize>,
    /// The member whose data sets the zone bounds (the largest).
    pub(crate) anchor: usize,
    pub(crate) splits: Vec<bson::Bson>,
    /// The domain (index into `Layout::domains`) its first fields belong to.
    pub(crate) domain: usize,
}

/// One combination of choices, with what follows from it: zone groups and home shards.
pub(crate) struct Layout<'a> {
    pub(crate) inputs: &'a [CollectionInput],
    pub(crate) choices: &'a [Choice],
    pub(crate) shards: usize,
    pub(crate) group: Vec<Option<usize>>,
    pub(crate) groups: Vec<Group>,
    /// The shard an unsharded collection lives on.
    pub(crate) home: Vec<usize>,
    /// The version the plan is for (`Settings::target_version`): what the server refuses.
    pub(crate) target_version: Option<(u32, u32)>,
    /// The linked fields' domains the groups come from: what a fix may zone a collection on.
    pub(crate) domains: &'a [BTreeSet<links::Node>],
    /// The search's kept verdicts on its transactions' writes (`verdicts.rs`); None: each
    /// worked out when asked.
    pub(crate) verdicts: Option<&'a Verdicts<'a>>,
}

impl<'a> Layout<'a> {
    pub(crate) fn new(
        inputs: &'a [CollectionInput],
        choices: &'a [Choice],
        domains: &'a [BTreeSet<links::Node>],
        settings: &Settings,
    ) -> Self {
        let n = settings.shards.max(1);
        // Groups: keys whose first field is in one domain, with one kind.
        let mut by: Vec<((usize, bool), Vec<usize>)> = Vec::new();
        for (c, ch) in choices.iter().enumerate() {
            let Choice::Key(k) = ch else { continue };
            let f = &inputs[c].candidates[*k].key.fields[0];
            let node = (inputs[c].namespace.clone(), f.path.clone());
            if let Some(d) = domains.iter().position(|d| d.contains(&node)) {
                let id = (d, f.kind == KeyKind::Hashed);
                match by.iter_mut().find(|x| x.0 == id) {
                    Some(x) => x.1.push(c),
                    None => by.push((id, vec![c])),
                }
            }
        }
        let mut group = vec![None; inputs.len()];
        let mut groups = Vec::new();
        for ((domain, _), members) in by.into_iter().filter(|x| x.1.len() >= 2) {
            let anchor = *members.iter().max_by_key(|c| (inputs[**c].data_bytes, std::cmp::Reverse(**c))).unwrap_or(&members[0]);
            let Choice::Key(k) = &choices[anchor] else { continue };
            let splits = inputs[anchor].candidates[*k].zone_splits.clone();
            for &m in &members {
                group[m] = Some(groups.len());
            }
            groups.push(Group { members, anchor, splits, domain });
        }
        let mut layout = Layout {
            inputs,
            choices,
            shards: n,
            group,
            groups,
            home: vec![0; inputs.len()],
            target_version: settings.target_version,
            domains,
            verdicts: None,
        };
        // Before 8.0 an unsharded collection lives on the database's primary shard (shard0
        // here); 8.0's moveCollection puts each on the least loaded shard, busiest first.
        if settings.target_version.is_some_and(|v| v >= (8, 0)) {
            let mut unsharded: Vec<usize> = (0..inputs.len()).filter(|c| choices[*c] == Choice::Unsharded).collect();
            unsharded.sort_by_key(|c| std::cmp::Reverse((inputs[*c].num_operations, inputs[*c].data_bytes)));
            layout.home = vec![usize::MAX; inputs.len()];
            for c in unsharded {
                let (_, ops) = layout.per_shard();
                let (data, _) = layout.per_shard();
                let best = (0..n).min_by(|a, b| (ops[*a], data[*a]).partial_cmp(&(ops[*b], data[*b])).unwrap_or(std::cmp::Ordering::Equal));
                layout.home[c] = best.unwrap_or(0);
            }
            layout.home.iter_mut().for_each(|h| *h = if *h == usize::MAX { 0 } else { *h });
        }
        layout
    }

    pub(crate) fn index_of(&self, ns: &str) -> Option<usize> {
        self.inputs.iter().position(|c| c.namespace == ns)
    }

    /// Data (bytes) and operations per shard. A sharded collection's shares at scale are
    /// laid from shard `r` on, `r` its group's number or its own: the balancer places
    /// each collection by itself, so their busiest shards need not coincide; a zone
    /// group's members share theirs (zone i on shard i). Unplaced collections (home
    /// `usize::MAX`) count nowhere.
    pub(crate) fn per_shard(&self) -> (Vec<f64>, Vec<f64>) {
        let n = self.shards;
        let (mut data, mut ops) = (vec![0.0; n], vec![0.0; n]);
        for c in 0..self.inputs.len() {
            let (d, o) = self.on_shards(c);
            for i in 0..n {
                data[i] += d[i];
                ops[i] += o[i];
            }
        }
        (data, ops)
    }

    /// One collection's data (bytes) and operations on each shard.
    pub(crate) fn on_shards(&self, c: usize) -> (Vec<f64>, Vec<f64>) {
        let n = self.shards;
        let inp = &self.inputs[c];
        let (mut data, mut ops) = (vec![0.0; n], vec![0.0; n]);
        match &self.choices[c] {
            Choice::Unsharded => {
                if let Some(h) = self.home.get(c).filter(|h| **h < n) {
                    data[*h] += inp.data_bytes as f64;
                    ops[*h] += inp.num_operations as f64;
                }
            }
            Choice::Key(k) => {
                let cand = &inp.candidates[*k];
                let r = match self.group[c] {
                    Some(g) => self.groups[g].anchor,
                    None => c,
                };
                for i in 0..n {
                    let s = (i + r) % n;
                    data[s] += inp.data_bytes as f64 * cand.data_share.get(i).copied().unwrap_or(0.0);
                    ops[s] += inp.num_operations as f64 * cand.ops_share.get(i).copied().unwrap_or(0.0);
                }
            }
        }
        (data, ops)
    }
}

/// The layout reading the verdicts kept in `verdicts` (the same answers, worked out once).
pub(crate) fn with_verdicts<'a>(mut layout: Layout<'a>, verdicts: &'a Verdicts<'a>) -> Layout<'a> {
    layout.verdicts = Some(verdicts);
    layout
}

/// A layout with the reference collections' homes the search chose.
pub(crate) fn with_homes<'a>(mut layout: Layout<'a>, homes: &[Option<usize>]) -> Layout<'a> {
    for (c, h) in homes.iter().enumerate() {
        if let Some(h) = h {
            layout.home[c] = *h;
        }
    }
    layout
}
