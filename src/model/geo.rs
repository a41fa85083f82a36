//! Geospatial values and predicates. A shard key's index is a B-tree (a geo index cannot
//! be one: manual "Shard Keys", shard key indexes), so a geo predicate bounds nothing on it
//! (explain on mongod 6.0.5 with a `{location: 1}` index: `$geoWithin` gives
//! `[MinKey, MaxKey]`; `$near` finds no index to run on). A geo field in a key targets no
//! query of its own, and a moved point moves its document to another shard.

use bson::{Bson, Document};

/// The query operators that read a field as a location.
const GEO_OPERATORS: [&str; 6] = ["$near", "$nearSphere", "$geoWithin", "$geoIntersects", "$within", "$geoNear"];

/// `{$near: …}`, `{$geoWithin: …}`: a condition that reads the field as a location.
pub(crate) fn is_geo_predicate(v: &Bson) -> bool {
    v.as_document().is_some_and(|d| d.keys().any(|k| GEO_OPERATORS.contains(&k.as_str())))
}

/// A GeoJSON object: `{type: "Point", coordinates: [...]}` (or `geometries`).
pub(crate) fn is_geojson(d: &Document) -> bool {
    d.get_str("type").is_ok() && (d.get_array("coordinates").is_ok() || d.get_array("geometries").is_ok())
}

/// The fields a filter reads as locations (`$and`/`$or`/`$nor` branches included).
pub(crate) fn geo_paths(filter: &Document) -> Vec<&str> {
    let mut out = Vec::new();
    for (k, v) in filter {
        match (k.as_str(), v) {
            ("$and" | "$or" | "$nor", Bson::Array(items)) => {
                out.extend(items.iter().filter_map(|x| x.as_document()).flat_map(geo_paths));
            }
            _ if !k.starts_with('$') && is_geo_predicate(v) => out.push(k.as_str()),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn geo_predicates_and_values() {
        let near = doc! {"city": "x", "$or": [{"location": {"$near": {"$geometry": {"type": "Point", "coordinates": [2.0, 48.0]}}}}]};
        assert_eq!(geo_paths(&near), vec!["location"]);
        assert_eq!(geo_paths(&doc! {"location": {"$geoWithin": {"$centerSphere": [[2.0, 48.0], 0.01]}}}), vec!["location"]);
        assert!(geo_paths(&doc! {"location": {"type": "Point"}, "n": {"$gt": 1}}).is_empty());
        assert!(is_geojson(&doc! {"type": "Point", "coordinates": [2.0, 48.0]}));
        assert!(!is_geojson(&doc! {"type": "Point"}));
    }
}
