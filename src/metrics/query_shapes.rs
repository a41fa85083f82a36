//! `queryShapes`: the sampled queries grouped by filter shape and by the label
//! the key gives them, most frequent first.

use crate::targeting::Label;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QueryShapeReport {
    pub(crate) shape: String,
    pub(crate) ops: BTreeMap<String, u64>,
    pub(crate) count: u64,
    pub(crate) label: Label,
}

/// Queries of one (shape, label): how many, and how many per command.
type ShapeCount = (u64, BTreeMap<&'static str, u64>);

/// Counts queries per (shape, label), and per command within each.
#[derive(Debug, Default)]
pub(crate) struct ShapeCounter<'s> {
    counts: BTreeMap<(&'s str, Label), ShapeCount>,
}

impl<'s> ShapeCounter<'s> {
    pub(crate) fn add(&mut self, shape: &'s str, label: Label, op: &'static str) {
        let e = self.counts.entry((shape, label)).or_default();
        e.0 += 1;
        *e.1.entry(op).or_default() += 1;
    }

    /// Most frequent first; ties by shape.
    pub(crate) fn finish(self) -> Vec<QueryShapeReport> {
        let mut out: Vec<QueryShapeReport> = self
            .counts
            .into_iter()
            .map(|((shape, label), (count, ops))| QueryShapeReport {
                shape: shape.to_string(),
                ops: ops.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                count,
                label,
            })
            .collect();
        out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.shape.cmp(&b.shape)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_by_shape_and_label_most_frequent_first() {
        let mut c = ShapeCounter::default();
        c.add("{a: eq}", Label::SingleShard, "find");
        c.add("{b: range}", Label::MultiShard, "find");
        c.add("{b: range}", Label::MultiShard, "update");
        c.add("{a: eq}", Label::ScatterGather, "find");
        let s = c.finish();
        assert_eq!(s.len(), 3);
        assert_eq!((s[0].shape.as_str(), s[0].count), ("{b: range}", 2));
        assert_eq!(s[0].ops.get("update"), Some(&1));
        assert_eq!(s[1].label, Label::SingleShard, "ties in shape order, then label order");
    }
}
