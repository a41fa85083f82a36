//! Steps 3 and 4: the documents read once for every key (the sample, then the insertion-ordered
//! pass), and the keys the data refuses (arrays in a key field, a named field no document has).

use super::options::{Options, PRESCAN_DOCS};
use crate::error::input_error;
use crate::model::{Query, ShardKey};
use crate::sample::Sample;
use crate::sources::DocumentSource;
use crate::util::text::closest;
use anyhow::Result;

/// What step 3 read: the sample, and the insertion-ordered pass when the source has one.
pub(super) struct Passes {
    pub(super) sample: Sample,
    pub(super) in_order: Sample,
    /// `in_order` was read (its keys serve the order-based metrics).
    pub(super) separate_order: bool,
}

/// Step 3: the sample pass for every key at once, then the insertion-ordered pass.
pub(super) fn read_documents(
    source: &mut dyn DocumentSource,
    keys: &[ShardKey],
    opts: &Options,
    queries: &[&Query],
    notes: &mut Vec<String>,
) -> Result<Passes> {
    let mut sample = Sample::with_budget(keys, opts.memory_limit);
    if let Some(n) = source.expected_docs() {
        sample.expect(n);
    }
    source.read_only(&Sample::fields_read(keys));
    source.scan(&mut |batch| {
        sample.add_batch(batch);
        Ok(())
    })?;
    sample.finish();
    if sample.num_docs == 0 && source.has_documents() {
        notes.push(format!(
            "{} holds no documents: cardinality, frequency, insert order and the data's spread cannot be measured{}; the manual's advice for an empty collection is to shard it now on a hashed key, which shardCollection pre-splits into chunks on every shard (https://www.mongodb.com/docs/manual/core/hashed-sharding/)",
            source.describe(),
            if queries.is_empty() { ", nor targeting (no sampled operation)" } else { "; targeting comes from the sampled operations" }
        ));
    } else if !source.has_documents() {
        if queries.is_empty() {
            return Err(input_error("the query logs hold no operation on the collection: nothing to analyse without documents"));
        }
        notes.push(format!(
            "no documents: the read/write distribution and the fan-out come from the queries; {}",
            crate::metrics::characteristics::NOT_MEASURED
        ));
    }
    let mut in_order = Sample::order_only(keys, opts.memory_limit);
    let separate_order = source.scan_in_insertion_order(&mut |batch| {
        in_order.add_batch(batch);
        Ok(())
    })?;
    in_order.finish();
    Ok(Passes { sample, in_order, separate_order })
}

/// Step 4: the server refuses arrays in key fields (BadValue).
pub(super) fn refuse_arrays(sample: &Sample, source: &str) -> Result<()> {
    for ks in &sample.keys {
        if let Some((pos, field)) = &ks.first_array {
            return Err(input_error(format!(
                "key {}: {} documents hold an array in '{field}' (the first is document {} of {source}); MongoDB refuses arrays in shard key fields (BadValue)",
                ks.key,
                ks.docs_with_arrays,
                pos + 1
            )));
        }
    }
    Ok(())
}

/// A key field absent from this share of sampled documents or more is not in the data.
const ABSENT_SHARE: f64 = 0.99;

/// Step 4, continued: a named key whose field is absent from (nearly) every sampled document
/// would put every document under one null value, yet "reach one shard" for every operation;
/// it is a typo far more often than a design. Refused, with the closest field the documents have.
pub(super) fn refuse_absent_fields(sample: &Sample, source: &mut dyn DocumentSource) -> Result<()> {
    for ks in &sample.keys {
        let counted = ks.docs_counted();
        if counted == 0 || (ks.docs_missing_fields as f64) < ABSENT_SHARE * counted as f64 {
            continue;
        }
        let pre = source.prescan(PRESCAN_DOCS)?;
        let seen = crate::propose::field_paths(&pre);
        // `_id` is in every stored document (a time series' measurements, read through its
        // view, have none: the time-series rule speaks for that key).
        let absent: Vec<&str> = ks.key.paths().filter(|p| *p != "_id" && !seen.iter().any(|s| s == p)).collect();
        let Some(field) = absent.first() else { continue };
        let hint = match closest(field, &seen) {
            Some(s) => format!("; did you mean '{s}'?"),
            None => String::new(),
        };
        let count = crate::util::text::fmt_count;
        return Err(input_error(format!(
            "key {}: {} of {} sampled documents lack a key field, and none of the first {} has '{field}'{hint}",
            ks.key,
            count(ks.docs_missing_fields),
            count(counted),
            count(pre.len() as u64)
        )));
    }
    Ok(())
}
