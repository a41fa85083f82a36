//! The plan from its inputs: the search over every collection's choices, the plan written
//! out from it (`outcome`), and beside it the plan with the DBA's choices kept (`given`).
//! Pure: the analyses, the workload and the settings in, a `Plan` out.

use super::basis::Basis;
use super::build::build;
use super::given;
use super::input::{Analyses, Settings};
use super::outcome::{Plan, TxnEvidence};
use super::search::{search, single_shard_without, Workload};
use super::steps::{with_simple_collation, Step};
use crate::model::version::VersionReport;

/// The plan for database `db`: shardkey's own choices, and with `analyses.given` the plan
/// as given beside it (what if).
pub(crate) fn plan(db: &str, analyses: Analyses, w: Workload, s: &Settings, ev: TxnEvidence, version: VersionReport) -> Plan {
    let Analyses { collections: inputs, given, notes } = analyses;
    let what_if_links = (!given.is_empty()).then(|| w.links.clone());
    let found = search(&inputs, w.links, w.seen.whole, w.seen.in_part, w.joins, s);
    let without: Vec<_> = (0..inputs.len()).map(|c| single_shard_without(&inputs, &found, c, w.seen.whole, w.joins, s)).collect();
    let mut p = build(db, &inputs, &found, s, ev.clone(), &without, &w.seen);
    p.joins.why = super::joins::why(&found.layout(&inputs, s), w.joins);
    if let Some(links) = what_if_links {
        let (given_inputs, fixed) = given::with_given(&inputs, given);
        let w = Workload { links, seen: w.seen, joins: w.joins };
        p.given = Some(given::what_if(&p, &given_inputs, &fixed, w, s, ev));
    }
    p.version = version;
    let total: u64 = inputs.iter().map(|c| c.data_bytes).sum();
    if total < (s.shards as u64) * s.range_bytes {
        p.notes.push(format!(
            "the database holds {} of data, less than one range ({} MiB) per shard: it fits on one replica set today; the plan is for when it grows (figures at scale)",
            crate::util::text::mib(total),
            s.range_bytes >> 20
        ));
    }
    p.notes.extend(notes);
    p
}

/// What the plan was made from (read after it is built, for the script to check), and the
/// commands then saying the simple collation where a collection's default is another.
pub(crate) fn with_basis(p: &mut Plan, basis: Basis) {
    p.basis = basis;
    let non_simple = p.basis.non_simple_collation();
    with_simple_collation(&mut p.steps, &non_simple);
    // The commands printed again.
    p.commands = p.steps.iter().map(Step::command).collect();
    if let Some(g) = p.given.as_mut() {
        with_simple_collation(&mut g.steps, &non_simple);
        g.commands = g.steps.iter().map(Step::command).collect();
    }
}
