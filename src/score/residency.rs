//! A residency rule applied to the recommended key: its zones, each value's range, the
//! commands that set them, and the values that hold more than their zone's shards can fairly
//! carry.
//!
//! Order, from the manual's "Segmenting Data by Location" and "Manage Shard Zones" (4.0.3+:
//! zones and ranges may be defined before sharding an empty or a non-existing collection,
//! and `updateZoneKeyRange` runs on an unsharded one): `sh.addShardToZone` per shard, then
//! `sh.updateZoneKeyRange` per value, then `sh.shardCollection`. A range is inclusive of its
//! lower bound and exclusive of its upper one (`sh.updateZoneKeyRange`), every key field
//! given: `{region: "EU", userId: MinKey}` to `{region: "EU", userId: MaxKey}`.
//!
//! A zone range bounds the zone field only, so a value stays on its zone's shards for good:
//! when it holds more of the data than those shards' fair share, the report names it with
//! its share and offers the key's next field to spread it (more shards in its zone, or its
//! range cut at the sampled median of the next field into zones of their own).

use crate::model::residency::{Honours, Residency};
use crate::model::shell::{shell_doc, shell_value};
use crate::model::{KeySpace, ShardKey};
use crate::util::text::fmt_count;
use bson::{Bson, Document};
use serde::Serialize;
use serde_json::Value;

/// The residency as the recommendation carries it (JSON `recommendation.residency`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResidencyZones {
    pub(crate) field: String,
    pub(crate) zones: Vec<Zone>,
    /// Sampled documents whose zone field holds no value the rule names (or none at all):
    /// no zone range covers them, so they may live on any shard.
    pub(crate) documents_outside_zones: u64,
    pub(crate) percentage_outside_zones: f64,
    /// Values whose share is above their zone's fair share.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) warnings: Vec<ZoneWarning>,
}

/// One value's zone and range under the recommended key.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Zone {
    pub(crate) zone: String,
    pub(crate) value: Value,
    pub(crate) shards: Vec<String>,
    /// The range's inclusive lower and exclusive upper bound (relaxed Extended JSON).
    pub(crate) min: Value,
    pub(crate) max: Value,
    /// Sampled documents in the range, and their share of the sample.
    pub(crate) documents: u64,
    pub(crate) percentage: f64,
}

/// A value pinned to fewer shards than its share needs.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ZoneWarning {
    pub(crate) zone: String,
    pub(crate) value: Value,
    pub(crate) percentage: f64,
    /// The zone's shards over the cluster's, in percent.
    pub(crate) fair_share_percentage: f64,
    /// The sampled median of the key's next field within the value (where its range can be
    /// cut in two), when the key has a next field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) split_at: Option<Value>,
    pub(crate) message: String,
}

/// What the zones are measured on.
pub(crate) struct Target<'a> {
    pub(crate) key: &'a ShardKey,
    /// The recommended key's sampled values (key space), and the documents sampled.
    pub(crate) key_space: &'a KeySpace<'a>,
    pub(crate) sampled: u64,
    /// The shards the cluster model counts (`--shards`, the deployment's, or the default).
    pub(crate) num_shards: usize,
    /// `--redact`: the median is a sampled value, so it is not shown.
    pub(crate) redact: bool,
}

fn ejson(v: &Bson) -> Value {
    v.clone().into_relaxed_extjson()
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 * 1000.0 / whole as f64).round() / 10.0
    }
}

/// The zones of `res` under the recommended key, None when the key breaks the rule (its
/// finding says why; no zone range could hold a value).
pub(crate) fn zones(res: &Residency, t: &Target) -> Option<ResidencyZones> {
    if res.honoured_by(t.key) != Honours::Yes {
        return None;
    }
    // A zone of k shards fairly carries k of the cluster's shards' share; the cluster has at
    // least the shards the rule names.
    let shards = t.num_shards.max(res.shards().len()).max(1);
    let mut zones = Vec::new();
    let mut warnings = Vec::new();
    let mut inside = 0;
    for z in &res.zones {
        let (min, max) = res.bounds(t.key, &z.value);
        let (docs, median) = in_range(t.key_space, &min, &max);
        let median = median.filter(|_| !t.redact);
        inside += docs;
        let pct = percent(docs, t.sampled);
        // A zone named without its shards (set before) holds at least one.
        let fair = (z.shards.len().max(1) as f64 * 1000.0 / shards as f64).round() / 10.0;
        if pct > fair {
            warnings.push(ZoneWarning {
                zone: z.zone.clone(),
                value: ejson(&z.value),
                percentage: pct,
                fair_share_percentage: fair,
                split_at: median.as_ref().map(ejson),
                message: pinned_words(res, t, z, (docs, pct, fair, shards), median.as_ref()),
            });
        }
        zones.push(Zone {
            zone: z.zone.clone(),
            value: ejson(&z.value),
            shards: z.shards.clone(),
            min: ejson(&Bson::Document(min)),
            max: ejson(&Bson::Document(max)),
            documents: docs,
            percentage: pct,
        });
    }
    let outside = t.sampled.saturating_sub(inside);
    Some(ResidencyZones {
        field: res.field.clone(),
        zones,
        documents_outside_zones: outside,
        percentage_outside_zones: percent(outside, t.sampled),
        warnings,
    })
}

/// The sampled documents between `min` (inclusive) and `max` (exclusive), and the key's
/// next field at their median (in key space: a hashed field's hash, as its zone bounds take).
fn in_range(ks: &KeySpace, min: &Document, max: &Document) -> (u64, Option<Bson>) {
    let tuple = |d: &Document| d.values().cloned().collect::<Vec<Bson>>();
    let at = |r: Result<usize, usize>| r.unwrap_or_else(|i| i);
    let (lo, hi) = (at(ks.search(&tuple(min))), at(ks.search(&tuple(max))));
    let counts = &ks.counts()[lo..hi.max(lo)];
    let docs: u64 = counts.iter().sum();
    if min.len() < 2 || docs == 0 {
        return (docs, None);
    }
    let mut seen = 0;
    for (i, c) in counts.iter().enumerate() {
        seen += c;
        if seen * 2 >= docs {
            // The first value past the lower half starts the upper range (inclusive bound).
            let j = if seen * 2 == docs && i + 1 < counts.len() { i + 1 } else { i };
            return (docs, ks.value(lo + j).get(1).cloned());
        }
    }
    (docs, None)
}

/// The words of a value pinned to its zone: its share against the fair one, and the key's
/// next field offered to spread it.
fn pinned_words(
    res: &Residency,
    t: &Target,
    z: &crate::model::residency::ZoneRule,
    (docs, pct, fair, shards): (u64, f64, f64, usize),
    median: Option<&Bson>,
) -> String {
    let value = shell_value(&z.value);
    let head = format!(
        "{}: {value} holds {pct}% of the sampled documents ({} of {}), more than its zone's fair share ({fair}%: {} of {shards} shards); a zone range bounds {} only, so {value} stays on {} for good",
        res.field,
        fmt_count(docs),
        fmt_count(t.sampled),
        z.shards.len().max(1),
        res.field,
        if z.shards.is_empty() { format!("zone {}'s shards (not given: counted as 1)", z.zone) } else { z.shards.join(", ") }
    );
    let Some(next) = t.key.fields.get(1) else {
        return format!(
            "{head}, as one value in one chunk the balancer cannot split (jumbo); add a next field ({{{}: 1, <field>: 1}} or <field>: \"hashed\") so the zone can span more shards",
            res.field
        );
    };
    let more = format!(
        "add another shard allowed to hold {value} to zone {zone} (sh.addShardToZone(\"<shard>\", {zone:?})): the balancer splits {value}'s range on {} and spreads it over the zone's shards",
        next.path,
        zone = z.zone
    );
    match median {
        Some(m) => {
            let (min, max) = res.bounds(t.key, &z.value);
            let mut mid = min.clone();
            mid.insert(next.path.clone(), m.clone());
            for f in t.key.fields.iter().skip(2) {
                mid.insert(f.path.clone(), Bson::MinKey);
            }
            format!(
                "{head}. To spread it, {more}; or cut its range at the sampled median of {}: {} to {} in zone {zone} and {} to {} in a zone {zone}-2 on a second shard allowed to hold it (about half each)",
                next.path,
                shell_doc(&min),
                shell_doc(&mid),
                shell_doc(&mid),
                shell_doc(&max),
                zone = z.zone
            )
        }
        None if t.redact => format!(
            "{head}. To spread it, {more}; or cut its range in two at the sampled median of {} (a sampled value, hidden by --redact)",
            next.path
        ),
        None => format!("{head}. To spread it, {more}"),
    }
}

/// The zone commands, in the manual's order: every shard into its zones, then each value's
/// range. Run before `shardCollection`.
pub(crate) fn commands(res: &Residency, namespace: &str, key: &ShardKey) -> Vec<String> {
    let mut out = Vec::new();
    for z in &res.zones {
        for s in &z.shards {
            out.push(format!("sh.addShardToZone({s:?}, {:?})", z.zone));
        }
    }
    for z in &res.zones {
        let (min, max) = res.bounds(key, &z.value);
        out.push(format!("sh.updateZoneKeyRange({namespace:?}, {}, {}, {:?})", shell_doc(&min), shell_doc(&max), z.zone));
    }
    out
}

/// Put the zone commands where they belong in a recommendation's: before `shardCollection`
/// (zones defined first, as the manual orders it), after a refine or a keep (a range must name
/// the collection's key as it then is). Returns the note that goes with them.
pub(crate) fn place(res: &Residency, namespace: &str, key: &ShardKey, commands_so_far: &mut Vec<String>) -> String {
    let zone_cmds = commands(res, namespace, key);
    let n = zone_cmds.len();
    match commands_so_far.iter().position(|c| c.starts_with("sh.shardCollection(")) {
        Some(i) => {
            commands_so_far.splice(i..i, zone_cmds);
        }
        None if commands_so_far.iter().any(|c| c.contains("reshardCollection")) => {
            // reshardCollection takes the new key's zones in its own `zones` field (5.0+).
            return format!(
                "residency on {}: reshardCollection needs the zones of the new key in its zones field (5.0+): {}",
                res.field,
                zone_cmds.join("; ")
            );
        }
        None => commands_so_far.extend(zone_cmds),
    }
    format!(
        "residency on {}: {n} zone commands come first, as the manual's \"Segmenting Data by Location\" orders them (sh.addShardToZone per shard, sh.updateZoneKeyRange per value, bounds inclusive-exclusive with every later key field at MinKey and MaxKey); run them through mongos with the balancer on, which moves each value's chunks to its zone (the cluster model below spreads the data evenly: it does not model the zones)",
        res.field
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Bson {
        Bson::String(v.into())
    }

    /// 60 EU documents (userIds 0..60), 30 US, 10 APAC; 3 shards: EU's 60% is above 33.3%.
    #[test]
    fn shares_warning_and_commands_by_hand() {
        let res = Residency::parse("region=EU:shardEU,US:shardUS,APAC:shardAP").unwrap();
        let key = ShardKey::parse("{region: 1, userId: 1}").unwrap();
        let mut v: Vec<(Vec<Bson>, u64)> = Vec::new();
        v.extend((0..10).map(|i| (vec![s("APAC"), Bson::Int32(i)], 1)));
        v.extend((0..60).map(|i| (vec![s("EU"), Bson::Int32(i)], 1)));
        v.extend((0..30).map(|i| (vec![s("US"), Bson::Int32(i)], 1)));
        v.push((vec![s("ZZ"), Bson::Int32(0)], 5));
        let ks = KeySpace::from_values(v);
        let t = Target { key: &key, key_space: &ks, sampled: 105, num_shards: 3, redact: false };
        let z = zones(&res, &t).unwrap();
        assert_eq!(z.zones.iter().map(|z| z.documents).collect::<Vec<_>>(), [60, 30, 10]);
        assert_eq!(z.documents_outside_zones, 5);
        assert_eq!(z.warnings.len(), 1);
        let w = &z.warnings[0];
        assert_eq!((w.zone.as_str(), w.percentage, w.fair_share_percentage), ("EU", 57.1, 33.3));
        assert_eq!(w.split_at, Some(serde_json::json!(30)), "30 of 60 below it");
        assert!(
            w.message.starts_with(
                "region: \"EU\" holds 57.1% of the sampled documents (60 of 105), more than its zone's fair share (33.3%: 1 of 3 shards)"
            ),
            "{}",
            w.message
        );
        assert!(w.message.contains("{region: \"EU\", userId: MinKey} to {region: \"EU\", userId: 30} in zone EU"), "{}", w.message);
        let mut cmds = vec!["createIndex".to_string(), "sh.shardCollection(\"app.users\", {region: 1, userId: 1})".to_string()];
        place(&res, "app.users", &key, &mut cmds);
        assert_eq!(cmds[1], "sh.addShardToZone(\"shardEU\", \"EU\")");
        assert_eq!(
            cmds[4],
            "sh.updateZoneKeyRange(\"app.users\", {region: \"EU\", userId: MinKey}, {region: \"EU\", userId: MaxKey}, \"EU\")"
        );
        assert!(cmds[7].starts_with("sh.shardCollection("));
        // --redact: the median is a sampled value, never shown.
        let z = zones(&res, &Target { redact: true, ..t }).unwrap();
        assert!(z.warnings[0].split_at.is_none() && !z.warnings[0].message.contains("userId: 30"), "{}", z.warnings[0].message);
    }

    #[test]
    fn a_key_that_breaks_the_rule_gets_no_zones() {
        let res = Residency::parse("region=EU:shardEU").unwrap();
        let key = ShardKey::parse("{userId: 1}").unwrap();
        let ks = KeySpace::default();
        assert!(zones(&res, &Target { key: &key, key_space: &ks, sampled: 0, num_shards: 2, redact: false }).is_none());
    }
}
