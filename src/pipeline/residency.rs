//! Step 7, with a residency rule: the recommended key's zones measured on the sample pass
//! (each value's documents and the next field's median, `score::residency`), their commands
//! put before `shardCollection`, and the words on a value its zone cannot fairly carry.

use crate::model::residency::Residency;
use crate::propose::Proposal;
use crate::report::CandidateReport;
use crate::sample::Sample;
use crate::score::apply::Recommendation;
use crate::score::residency::{place, zones, Target};

/// Fills `r.residency`, splices the zone commands into `r.commands`; returns the report's notes.
pub(super) fn apply(
    res: &Residency,
    r: &mut Recommendation,
    ns: &str,
    proposals: &[Proposal],
    sample: &Sample,
    candidates: &[CandidateReport],
    redact: bool,
) -> Vec<String> {
    let Some(i) = proposals.iter().position(|p| p.key == r.key) else { return Vec::new() };
    let Some(c) = candidates.iter().find(|c| c.key == r.key) else { return Vec::new() };
    let key_space = sample.keys[i].key_space_values();
    let t = Target { key: &r.key, key_space: &key_space, sampled: sample.num_docs, num_shards: c.metrics.cluster.num_shards, redact };
    let Some(z) = zones(res, &t) else {
        // Every candidate that honours the rule ranked below one that breaks it and is
        // refused: the recommendation is that one (no zone can hold a value under it).
        return vec![format!("residency on {}: the recommended key {} cannot keep it; no zone commands", res.field, r.key)];
    };
    let placed = place(res, ns, &r.key, &mut r.commands);
    r.notes.insert(0, placed);
    if z.documents_outside_zones > 0 {
        r.notes.insert(1, format!(
            "residency on {}: {} sampled documents ({}%) hold a {} value the rule names no zone for (or none): no zone range covers them, so they may live on any shard",
            res.field,
            crate::util::text::fmt_count(z.documents_outside_zones),
            z.percentage_outside_zones,
            res.field
        ));
    }
    // Said beside the commands: the value a zone cannot fairly carry, and how to spread it.
    for (j, w) in z.warnings.iter().enumerate() {
        r.notes.insert(1 + j, w.message.clone());
    }
    r.residency = Some(z);
    Vec::new()
}
