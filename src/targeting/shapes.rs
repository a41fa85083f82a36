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

/// `shape_of` written into `out` (cleared first), the same text. A filter whose fields are
/// all plain and compared by value (most logged filters: every part `k: eq`) is written with
/// no allocation once `out` has room; any other takes `shape_of`. (`workload` shapes every
/// operation: `shape_of`'s strings and `format!`s were 10% of its profile, issue 52.)
pub(crate) fn shape_into(filter: &Document, out: &mut String) {
    out.clear();
    let mut keys: [&str; 16] = [""; 16];
    let mut n = 0;
    for (k, v) in filter {
        // `op_class`'s "eq": not a regex, not an operator document.
        let eq = match v {
            Bson::RegularExpression(_) => false,
            Bson::Document(d) => !d.keys().next().is_some_and(|k| k.starts_with('$')),
            _ => true,
        };
        if k.starts_with('$') || !eq || n == keys.len() {
            out.push_str(&shape_of(filter));
            return;
        }
        keys[n] = k;
        n += 1;
    }
    plain_shape_into(&mut keys[..n], out);
}

/// The shape of a filter whose fields `keys` (distinct, none starting with `$`, at most 16)
/// are all compared by value, written into `out` (cleared first): `shape_into`'s fast path,
/// also taken from a filter's text (`workload`'s light read, `sources::queries::light`).
pub(crate) fn plain_shape_into(keys: &mut [&str], out: &mut String) {
    out.clear();
    // Ordered as `shape_of` orders its parts: by the text "k: eq" ("a-b: eq" before "a: eq").
    fn part(k: &str) -> impl Iterator<Item = u8> + '_ {
        k.bytes().chain(*b": eq")
    }
    keys.sort_unstable_by(|a, b| part(a).cmp(part(b)));
    out.push('{');
    for (i, k) in keys.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(k);
        out.push_str(": eq");
    }
    out.push('}');
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

    /// `shape_into` writes what `shape_of` returns, on its fast path (plain equality filters,
    /// ordered by the part's text, not the key's) and off it.
    #[test]
    fn shape_into_writes_what_shape_of_returns() {
        let filters = [
            doc! {},
            doc! {"b": 1, "a": "x"},
            doc! {"a": 1, "a-b": 2, "a b": 3, "ab": 4, "A": 5, "é": 6},
            doc! {"storeId": 28, "_id": 12228},
            doc! {"a": {"x": 1}, "b": {}, "c": [1, 2], "d": null},
            doc! {"a": {"$gte": 2}, "b": 1},
            doc! {"a": bson::Regex { pattern: "^x".into(), options: String::new() }},
            doc! {"$or": [{"b": 1}, {"a": 2}]},
            doc! {"$expr": {"$eq": ["$a", 1]}, "c": 1},
            (0..20).map(|i| (format!("f{i}"), Bson::Int32(i))).collect::<Document>(),
        ];
        let mut out = String::from("left over");
        for f in &filters {
            shape_into(f, &mut out);
            assert_eq!(out, shape_of(f), "{f}");
        }
    }
}
