//! A residency rule, as the DBA states it: "this field's values must stay on these shards"
//! (`--residency region=EU:shardEU,US:shardUS`, or a policy's `residency`). Each value gets
//! its own zone, named after it, holding the shards given; the manual's "Segmenting Data by
//! Location" (https://www.mongodb.com/docs/manual/tutorial/sharding-segmenting-data-by-location/)
//! does the same with `sh.addShardToZone` per shard and `sh.updateZoneKeyRange` per value.
//!
//! A zone range bounds the whole key ("Specify each field of the shard key", manual
//! `sh.updateZoneKeyRange`), so only a key whose first field is the zone field, ranged, can
//! keep one value's documents inside one range: `{region: "EU", userId: MinKey}` (inclusive)
//! to `{region: "EU", userId: MaxKey}` (exclusive), hashed fields after it likewise.

use super::shard_key::{KeyKind, ShardKey};
use bson::{Bson, Document};

/// One value of the zone field and where its documents must stay.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ZoneRule {
    pub(crate) value: Bson,
    /// The zone's name: the value as written.
    pub(crate) zone: String,
    /// Shards (as `config.shards` names them) that the zone holds.
    pub(crate) shards: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Residency {
    /// The zone field (a dotted path for a nested one).
    pub(crate) field: String,
    pub(crate) zones: Vec<ZoneRule>,
}

/// How a key stands against the rule.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Honours {
    Yes,
    /// Why not, in words that name the rule.
    No(String),
}

impl Residency {
    /// `FIELD=VALUE[@ZONE]:SHARD[+SHARD...],...`, or `VALUE@ZONE` alone for a zone whose
    /// shards are already set (`sh.addShardToZone` run before). A value of digits (with an
    /// optional sign) is a number, one in double quotes a string, anything else a string as
    /// written; the zone is named after the value unless `@ZONE` names it.
    pub(crate) fn parse(text: &str) -> Result<Residency, String> {
        let form = "expected FIELD=VALUE:SHARD,VALUE:SHARD (e.g. region=EU:shardEU,US:shardUS; several shards as shardA+shardB; VALUE@ZONE names an existing zone)";
        let (field, rest) = text.split_once('=').ok_or_else(|| format!("{text:?}: {form}"))?;
        let field = field.trim();
        if field.is_empty() || field.starts_with('$') || field.split('.').any(str::is_empty) {
            return Err(format!("{text:?}: {field:?} is not a field name; {form}"));
        }
        let mut zones: Vec<ZoneRule> = Vec::new();
        for part in rest.split(',') {
            let (lhs, shards) = match part.rsplit_once(':') {
                Some((l, s)) => (l, s.split('+').map(|s| s.trim().to_string()).collect()),
                None => (part, Vec::new()),
            };
            let (value, named_zone) = match lhs.split_once('@') {
                Some((v, z)) => (v.trim(), Some(z.trim())),
                None => (lhs.trim(), None),
            };
            if value.is_empty() {
                return Err(format!("{text:?}: a value is empty; {form}"));
            }
            if named_zone.is_none() && shards.is_empty() {
                return Err(format!("{text:?}: {:?} names no shard and no zone; {form}", part.trim()));
            }
            if named_zone == Some("") || shards.iter().any(String::is_empty) {
                return Err(format!("{text:?}: value {value} names an empty shard or zone; {form}"));
            }
            let (value, zone) = typed(value);
            let zone = named_zone.map(str::to_string).unwrap_or(zone);
            if zones.iter().any(|z| z.value == value) {
                return Err(format!("{text:?}: value {zone} is given twice"));
            }
            zones.push(ZoneRule { value, zone, shards });
        }
        Ok(Residency { field: field.to_string(), zones })
    }

    /// Every shard the rule names, each once, in the order given.
    pub(crate) fn shards(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for s in self.zones.iter().flat_map(|z| &z.shards) {
            if !out.contains(&s.as_str()) {
                out.push(s);
            }
        }
        out
    }

    /// Err (one line) naming a shard the rule gives that the cluster does not have
    /// (`config.shards`, when the deployment was read).
    pub(crate) fn check_shards(&self, cluster: &[String]) -> Result<(), String> {
        match self.shards().into_iter().find(|s| !cluster.iter().any(|c| c == s)) {
            Some(s) => Err(format!("--residency: shard {s:?} is not one of the cluster's shards (config.shards: {})", cluster.join(", "))),
            None => Ok(()),
        }
    }

    /// Whether a zone range can keep each value's documents on its shards under `key`.
    pub(crate) fn honoured_by(&self, key: &ShardKey) -> Honours {
        match key.fields.first() {
            Some(f) if f.path == self.field && f.kind == KeyKind::Range => Honours::Yes,
            Some(f) if f.path == self.field => Honours::No(format!(
                "breaks the residency rule on {}: a hashed {} scatters each value's documents by hash, so no zone range holds one value's documents; key on {{{}: 1, ...}}",
                self.field, self.field, self.field
            )),
            _ if key.paths().any(|p| p == self.field) => Honours::No(format!(
                "breaks the residency rule on {}: it is not the key's first field, so a zone range (bounded on the whole key, from its first field) cannot hold one {} value's documents; key on {{{}: 1, ...}}",
                self.field, self.field, self.field
            )),
            _ => Honours::No(format!(
                "breaks the residency rule on {}: the key does not hold {}, so no zone range can keep its values on their shards; key on {{{}: 1, ...}}",
                self.field, self.field, self.field
            )),
        }
    }

    /// The range of one value under `key` (which `honoured_by`): the zone field at the
    /// value, every later field at MinKey for the inclusive lower bound and MaxKey for the
    /// exclusive upper one (hashed fields too: their bounds are MinKey/MaxKey as for any field).
    pub(crate) fn bounds(&self, key: &ShardKey, value: &Bson) -> (Document, Document) {
        let at = |rest: Bson| {
            let mut d = Document::new();
            for (i, f) in key.fields.iter().enumerate() {
                d.insert(f.path.clone(), if i == 0 { value.clone() } else { rest.clone() });
            }
            d
        };
        (at(Bson::MinKey), at(Bson::MaxKey))
    }
}

/// A value as typed: a number, or a string (quotes taken off), and the zone's name.
fn typed(v: &str) -> (Bson, String) {
    if let Some(s) = v.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        return (Bson::String(s.to_string()), s.to_string());
    }
    let digits = v.strip_prefix('-').unwrap_or(v);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = v.parse::<i64>() {
            let b = i32::try_from(n).map(Bson::Int32).unwrap_or(Bson::Int64(n));
            return (b, v.to_string());
        }
    }
    (Bson::String(v.to_string()), v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::shell::shell_doc;

    #[test]
    fn parses_values_shards_and_zones() {
        let r = Residency::parse("region=EU:shardEU+shardEU2, US:shardUS,APAC:shardAP").unwrap();
        assert_eq!(r.field, "region");
        assert_eq!(r.zones.len(), 3);
        assert_eq!(r.zones[0].value, Bson::String("EU".into()));
        assert_eq!(r.zones[0].shards, ["shardEU", "shardEU2"]);
        assert_eq!(r.zones[1].zone, "US");
        assert_eq!(r.shards(), ["shardEU", "shardEU2", "shardUS", "shardAP"]);
        let cluster: Vec<String> = ["shardEU", "shardUS", "shardAP"].map(String::from).to_vec();
        assert_eq!(
            r.check_shards(&cluster).unwrap_err(),
            "--residency: shard \"shardEU2\" is not one of the cluster's shards (config.shards: shardEU, shardUS, shardAP)"
        );
        let z = Residency::parse("region=EU@eu-zone,US@us:shardUS").unwrap();
        assert_eq!((z.zones[0].zone.as_str(), z.zones[0].shards.len()), ("eu-zone", 0), "an existing zone's shards are not given");
        assert_eq!((z.zones[1].zone.as_str(), z.zones[1].shards.as_slice()), ("us", &["shardUS".to_string()][..]));
        let n = Residency::parse("tenant=7:s1,\"8\":s2").unwrap();
        assert_eq!(n.zones[0].value, Bson::Int32(7));
        assert_eq!(n.zones[1].value, Bson::String("8".into()));
    }

    #[test]
    fn bad_input_is_one_line_each() {
        for bad in [
            "region",
            "=EU:s",
            "region=EU",
            "region=EU:",
            "region=:s",
            "region=EU:s,EU:t",
            "$r=EU:s",
            "region=EU:a+",
            "region=EU@",
            "region=EU@:s",
        ] {
            let e = Residency::parse(bad).unwrap_err();
            assert!(!e.contains('\n') && e.starts_with('"'), "{bad}: {e}");
        }
    }

    /// The manual's "Segmenting Data by Location": `{country: "US", userid: MinKey}` to
    /// `{country: "US", userid: MaxKey}`.
    #[test]
    fn bounds_and_which_keys_honour_it() {
        let r = Residency::parse("region=EU:shardEU").unwrap();
        let key = ShardKey::parse("{region: 1, userId: \"hashed\"}").unwrap();
        assert_eq!(r.honoured_by(&key), Honours::Yes);
        let (min, max) = r.bounds(&key, &Bson::String("EU".into()));
        assert_eq!(shell_doc(&min), "{region: \"EU\", userId: MinKey}");
        assert_eq!(shell_doc(&max), "{region: \"EU\", userId: MaxKey}");
        for k in ["{userId: 1, region: 1}", "{region: \"hashed\"}", "{_id: \"hashed\"}"] {
            assert!(matches!(r.honoured_by(&ShardKey::parse(k).unwrap()), Honours::No(_)), "{k}");
        }
    }
}
