//! `shardkey workload`: what query logs hold, per namespace and per query shape
//! (the filter's fields with their operator class: `{projectId: eq, ts: range}`):
//! operation counts, commands, duration p50/p95/max/total, documents examined
//! against returned, and COLLSCAN plans. Every operation counts (not the sample).

use crate::model::{Op, OpFigures, Query};
use crate::targeting::shapes::shape_into;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Counts every operation it is shown; merge parts in any order.
#[derive(Debug, Default, Clone)]
pub(crate) struct WorkloadCounter {
    by_ns: BTreeMap<String, NsCounter>,
    /// The shape of the operation being counted (`shape_into`), its text reused: a shape
    /// already counted is found without allocating.
    shape: String,
}

#[derive(Debug, Default, Clone)]
struct NsCounter {
    ops: OpCounts,
    /// aHash, not SipHash: the shapes are the tool's own text, and the report orders them.
    shapes: HashMap<String, ShapeStats, ahash::RandomState>,
}

#[derive(Debug, Default, Clone)]
struct ShapeStats {
    count: u64,
    commands: OpCounts,
    millis: Vec<u32>,
    docs_examined: u64,
    keys_examined: u64,
    nreturned: u64,
    with_counts: u64,
    collscans: u64,
    /// Operations that logged a plan at all (2.4 and older logs do not).
    plans_known: u64,
}

/// Operations per command, indexed by `Op` (a map keyed by name compared names on every
/// operation counted).
#[derive(Debug, Default, Clone)]
struct OpCounts([u64; Op::ALL.len()]);

impl OpCounts {
    fn add(&mut self, op: Op) {
        self.0[op as usize] += 1;
    }

    fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    fn merge(&mut self, other: &OpCounts) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }

    /// The report's map: by command name, those counted.
    fn by_name(&self) -> BTreeMap<String, u64> {
        Op::ALL.iter().zip(self.0).filter(|(_, n)| *n > 0).map(|(op, n)| (op.name().to_string(), n)).collect()
    }
}

/// How a namespace's shapes are ordered (`workload --sort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ShapeOrder {
    /// Most frequent first.
    #[default]
    Count,
    /// Most total time first (where tuning pays most, as mloginfo --queries sorts).
    Total,
    /// Slowest p95 first.
    P95,
    /// Most documents examined first.
    Examined,
}

impl WorkloadCounter {
    pub(crate) fn add(&mut self, q: &Query) {
        self.shape.clear();
        if q.op != Op::Insert {
            shape_into(&q.filter, &mut self.shape);
        }
        let shape = std::mem::take(&mut self.shape);
        self.add_shaped(&q.figures(), &shape);
        self.shape = shape;
    }

    /// `add`, the filter's shape given (`shapes::plain_shape_into` from the filter's text,
    /// or `shape_into` from the parsed filter; an insert's is ignored).
    pub(crate) fn add_shaped(&mut self, q: &OpFigures, shape: &str) {
        let ns = match self.by_ns.get_mut(q.ns) {
            Some(n) => n,
            None => self.by_ns.entry(q.ns.to_string()).or_default(),
        };
        ns.ops.add(q.op);
        let shape = if q.op == Op::Insert { "(insert)" } else { shape };
        let s = match ns.shapes.get_mut(shape) {
            Some(s) => s,
            None => ns.shapes.entry(shape.to_string()).or_default(),
        };
        s.count += 1;
        s.commands.add(q.op);
        if let Some(ms) = q.millis {
            s.millis.push(ms.clamp(0, u32::MAX as i64) as u32);
        }
        if q.docs_examined.is_some() || q.nreturned.is_some() {
            s.with_counts += 1;
            s.docs_examined += q.docs_examined.unwrap_or(0).max(0) as u64;
            s.keys_examined += q.keys_examined.unwrap_or(0).max(0) as u64;
            s.nreturned += q.nreturned.unwrap_or(0).max(0) as u64;
        }
        if let Some(plan) = q.plan_summary {
            s.plans_known += 1;
            if plan.contains("COLLSCAN") {
                s.collscans += 1;
            }
        }
    }

    pub(crate) fn merge(&mut self, other: WorkloadCounter) {
        for (ns, o) in other.by_ns {
            let mine = self.by_ns.entry(ns).or_default();
            mine.ops.merge(&o.ops);
            for (shape, st) in o.shapes {
                let m = mine.shapes.entry(shape).or_default();
                m.count += st.count;
                m.commands.merge(&st.commands);
                m.millis.extend(st.millis);
                m.docs_examined += st.docs_examined;
                m.keys_examined += st.keys_examined;
                m.nreturned += st.nreturned;
                m.with_counts += st.with_counts;
                m.collscans += st.collscans;
                m.plans_known += st.plans_known;
            }
        }
    }

    /// The report: namespaces by operation count (those `keep` accepts), each with its
    /// `top` shapes (all when 0) in `order`.
    pub(crate) fn finish(self, keep: &dyn Fn(&str) -> bool, top: usize, order: ShapeOrder) -> Vec<NamespaceWorkload> {
        let mut out: Vec<NamespaceWorkload> = self
            .by_ns
            .into_iter()
            .filter(|(ns, _)| keep(ns))
            .map(|(ns, c)| {
                let total = c.ops.total();
                let mut shapes: Vec<ShapeWorkload> = c.shapes.into_iter().map(|(shape, s)| s.report(shape)).collect();
                shapes.sort_by(|a, b| {
                    let first = match order {
                        ShapeOrder::Count => b.count.cmp(&a.count),
                        ShapeOrder::Total => b.duration_millis.total.cmp(&a.duration_millis.total),
                        ShapeOrder::P95 => b.duration_millis.p95.cmp(&a.duration_millis.p95),
                        ShapeOrder::Examined => b.docs_examined.cmp(&a.docs_examined),
                    };
                    first
                        .then(b.count.cmp(&a.count))
                        .then(b.duration_millis.total.cmp(&a.duration_millis.total))
                        .then(a.shape.cmp(&b.shape))
                });
                let num_shapes = shapes.len();
                if top > 0 {
                    shapes.truncate(top);
                }
                NamespaceWorkload { namespace: ns, num_operations: total, operations: c.ops.by_name(), num_shapes, shapes }
            })
            .collect();
        out.sort_by(|a, b| b.num_operations.cmp(&a.num_operations).then(a.namespace.cmp(&b.namespace)));
        out
    }
}

impl ShapeStats {
    fn report(mut self, shape: String) -> ShapeWorkload {
        self.millis.sort_unstable();
        let d = Durations::of(&self.millis);
        ShapeWorkload {
            shape,
            count: self.count,
            commands: self.commands.by_name(),
            duration_millis: d,
            docs_examined: self.docs_examined,
            keys_examined: self.keys_examined,
            nreturned: self.nreturned,
            docs_examined_per_returned: (self.with_counts > 0 && self.nreturned > 0)
                .then(|| ((self.docs_examined as f64 / self.nreturned as f64) * 10.0).round() / 10.0),
            collscans: self.collscans,
            plans_unknown: self.count - self.plans_known,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NamespaceWorkload {
    pub(crate) namespace: String,
    pub(crate) num_operations: u64,
    /// Per command: find, aggregate, count, distinct, update, delete, findAndModify, insert.
    pub(crate) operations: BTreeMap<String, u64>,
    pub(crate) num_shapes: usize,
    pub(crate) shapes: Vec<ShapeWorkload>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ShapeWorkload {
    pub(crate) shape: String,
    pub(crate) count: u64,
    pub(crate) commands: BTreeMap<String, u64>,
    pub(crate) duration_millis: Durations,
    pub(crate) docs_examined: u64,
    pub(crate) keys_examined: u64,
    pub(crate) nreturned: u64,
    /// Documents examined per document returned (null when nothing returned).
    pub(crate) docs_examined_per_returned: Option<f64>,
    /// Operations whose plan was a collection scan (of those that logged a plan).
    pub(crate) collscans: u64,
    /// Operations that logged no plan (2.4 and older logs, inserts): whether they scanned is unknown.
    pub(crate) plans_unknown: u64,
}

impl ShapeWorkload {
    /// The COLLSCAN cell: the count, "unknown" when no operation logged a plan, or the count
    /// with how many are unknown.
    pub(crate) fn collscan_words(&self) -> String {
        match self.plans_unknown {
            0 => self.collscans.to_string(),
            u if u == self.count => "unknown".to_string(),
            u => format!("{} ({u} unknown)", self.collscans),
        }
    }
}

/// Duration figures over the operations that logged one (nearest-rank percentiles).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Durations {
    pub(crate) count: u64,
    pub(crate) p50: Option<u32>,
    pub(crate) p95: Option<u32>,
    pub(crate) max: Option<u32>,
    pub(crate) total: u64,
}

impl Durations {
    /// From sorted durations.
    pub(crate) fn of(sorted: &[u32]) -> Durations {
        let n = sorted.len();
        let rank = |p: f64| sorted.get(((p * n as f64).ceil() as usize).clamp(1, n.max(1)) - 1).copied();
        Durations {
            count: n as u64,
            p50: rank(0.50),
            p95: rank(0.95),
            max: sorted.last().copied(),
            total: sorted.iter().map(|&x| x as u64).sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Op, OpStats, QueryOrigin};
    use bson::doc;

    #[test]
    fn nearest_rank_percentiles_by_hand() {
        // 1..=20: p50 = the 10th value, p95 = the 19th.
        let v: Vec<u32> = (1..=20).collect();
        let d = Durations::of(&v);
        assert_eq!((d.p50, d.p95, d.max, d.total), (Some(10), Some(19), Some(20), 210));
        assert_eq!(Durations::of(&[]).p50, None);
    }

    #[test]
    fn shapes_count_every_operation_and_merge() {
        let q = |f: bson::Document, ms: i64, plan: &str| {
            let mut q = Query::new(Op::Find, "a.b", f, QueryOrigin::SlowQueryLog);
            q.stats = Some(Box::new(OpStats {
                millis: Some(ms),
                docs_examined: Some(100),
                nreturned: Some(10),
                plan_summary: Some(plan.into()),
                ..Default::default()
            }));
            q
        };
        let mut a = WorkloadCounter::default();
        a.add(&q(doc! {"x": 1}, 5, "COLLSCAN"));
        let mut b = WorkloadCounter::default();
        b.add(&q(doc! {"x": 2}, 7, "IXSCAN { x: 1 }"));
        b.add(&q(doc! {"y": {"$gt": 1}}, 1, "COLLSCAN"));
        a.merge(b);
        let mut c = WorkloadCounter::default();
        let mut no_plan = q(doc! {"y": {"$gt": 3}}, 90, "");
        no_plan.stats.as_mut().unwrap().plan_summary = None; // a 2.4 log line
        c.add(&no_plan);
        a.merge(c);
        let r = a.finish(&|_| true, 0, ShapeOrder::Count);
        assert_eq!(r[0].num_operations, 4);
        let x = r[0].shapes.iter().find(|s| s.shape == "{x: eq}").unwrap();
        assert_eq!((x.count, x.collscans, x.duration_millis.max, x.docs_examined_per_returned), (2, 1, Some(7), Some(10.0)));
        assert_eq!(x.collscan_words(), "1");
        let y = r[0].shapes.iter().find(|s| s.shape == "{y: range}").unwrap();
        assert_eq!((y.collscans, y.plans_unknown), (1, 1));
        assert_eq!(y.collscan_words(), "1 (1 unknown)");
        // by count {x} (2 operations, 12 ms) leads; by total time {y} (1 operation, 90 ms) does
        let counter = || {
            let mut d = WorkloadCounter::default();
            d.add(&q(doc! {"x": 1}, 5, "COLLSCAN"));
            d.add(&q(doc! {"x": 2}, 7, "IXSCAN"));
            d.add(&no_plan);
            d
        };
        assert_eq!(counter().finish(&|_| true, 0, ShapeOrder::Count)[0].shapes[0].shape, "{x: eq}");
        let by_total = counter().finish(&|_| true, 0, ShapeOrder::Total);
        assert_eq!(by_total[0].shapes[0].shape, "{y: range}");
        assert_eq!(by_total[0].shapes[0].collscan_words(), "unknown");
    }
}
