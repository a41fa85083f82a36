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
    /// The first such read and the first such write, for the policy to name (`check`); not in
    /// the JSON, whose shapes hold no values.
    #[serde(skip)]
    pub(crate) example: Examples,
}

/// The first read and the first write of a shape ("" when none).
#[derive(Debug, Clone, Default)]
pub(crate) struct Examples {
    pub(crate) read: String,
    pub(crate) write: String,
}

/// Queries of one (shape, label): how many, how many per command, and the first one.
#[derive(Debug, Default)]
struct ShapeCount {
    count: u64,
    ops: BTreeMap<&'static str, u64>,
    example: Examples,
}

/// Counts queries per (shape, label), and per command within each.
#[derive(Debug, Default)]
pub(crate) struct ShapeCounter<'s> {
    counts: BTreeMap<(&'s str, Label), ShapeCount>,
}

impl<'s> ShapeCounter<'s> {
    /// One query; `example` is called for the first read and the first write of its (shape,
    /// label) only.
    pub(crate) fn add(&mut self, shape: &'s str, label: Label, op: &'static str, is_read: bool, example: impl FnOnce() -> String) {
        let e = self.counts.entry((shape, label)).or_default();
        let kept = if is_read { &mut e.example.read } else { &mut e.example.write };
        if kept.is_empty() {
            *kept = example();
        }
        e.count += 1;
        *e.ops.entry(op).or_default() += 1;
    }

    /// Most frequent first; ties by shape.
    pub(crate) fn finish(self) -> Vec<QueryShapeReport> {
        let mut out: Vec<QueryShapeReport> = self
            .counts
            .into_iter()
            .map(|((shape, label), c)| QueryShapeReport {
                shape: shape.to_string(),
                ops: c.ops.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                count: c.count,
                label,
                example: c.example,
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
        c.add("{a: eq}", Label::SingleShard, "find", true, String::new);
        c.add("{b: range}", Label::MultiShard, "find", true, String::new);
        c.add("{b: range}", Label::MultiShard, "update", false, String::new);
        c.add("{a: eq}", Label::ScatterGather, "find", true, String::new);
        let s = c.finish();
        assert_eq!(s.len(), 3);
        assert_eq!((s[0].shape.as_str(), s[0].count), ("{b: range}", 2));
        assert_eq!(s[0].ops.get("update"), Some(&1));
        assert_eq!(s[1].label, Label::SingleShard, "ties in shape order, then label order");
        let mut c = ShapeCounter::default();
        c.add("{a: eq}", Label::SingleShard, "find", true, || "first".into());
        c.add("{a: eq}", Label::SingleShard, "find", true, || unreachable!("only the first query is kept"));
        c.add("{a: eq}", Label::SingleShard, "update", false, || "a write".into());
        let e = &c.finish()[0].example;
        assert_eq!((e.read.as_str(), e.write.as_str()), ("first", "a write"));
    }
}
