//! Query shapes: a filter normalised to its fields and operator classes
//! (`{projectId: eq, ts: range}`), so queries that differ only in values group together.

use bson::{Bson, Document};

fn op_class(v: &Bson) -> String {
    match v {
        Bson::RegularExpression(_) => "regex".into(),
        Bson::Document(d) if d.keys().next().is_some_and(|k| k.starts_with('$')) => {
            let mut classes: Vec<String> = d
                .iter()
                .filter(|(k, _)| k.as_str() != "$options")
                .map(|(k, a)| match k.as_str() {
                    "$eq" => "eq".to_string(),
                    "$in" => format!("in({})", a.as_array().map(|x| x.len()).unwrap_or(0)),
                    "$nin" => "nin".to_string(),
                    "$gt" | "$gte" | "$lt" | "$lte" => "range".to_string(),
                    "$ne" => "ne".to_string(),
                    "$exists" => "exists".to_string(),
                    "$regex" => "regex".to_string(),
                    other => other.trim_start_matches('$').to_string(),
                })
                .collect();
            classes.sort();
            classes.dedup();
            classes.join("+")
        }
        _ => "eq".into(),
    }
}

/// The normalised shape of a filter, e.g. `{country: eq, ts: range}`.
pub fn shape_of(filter: &Document) -> String {
    let mut parts: Vec<String> = filter
        .iter()
        .map(|(k, v)| match (k.as_str(), v) {
            ("$and" | "$or" | "$nor", Bson::Array(items)) => {
                let mut subs: Vec<String> = items.iter().filter_map(|x| x.as_document()).map(shape_of).collect();
                subs.sort();
                subs.dedup();
                format!("{k}: [{}]", subs.join(", "))
            }
            ("$expr", _) => "$expr".to_string(),
            _ if k.starts_with('$') => k.clone(),
            _ => format!("{k}: {}", op_class(v)),
        })
        .collect();
    parts.sort();
    format!("{{{}}}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn values_are_dropped_operators_kept() {
        assert_eq!(shape_of(&doc! {"b": 1, "a": {"$gte": 2, "$lt": 5}}), "{a: range, b: eq}");
        assert_eq!(shape_of(&doc! {"a": {"$in": [1, 2, 3]}}), "{a: in(3)}");
        assert_eq!(shape_of(&doc! {"$or": [{"b": 1}, {"a": 2}]}), "{$or: [{a: eq}, {b: eq}]}");
        assert_eq!(shape_of(&doc! {}), "{}");
        assert_eq!(shape_of(&doc! {"a": {"$exists": true}}), "{a: exists}");
    }
}
