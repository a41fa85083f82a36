//! Dotted-path lookup with shard-key semantics: a missing field is null, and an
//! array anywhere along the path makes the value unusable as a shard key.

use bson::{Bson, Document};

#[derive(Debug, Clone, PartialEq)]
pub enum Lookup<'a> {
    Value(&'a Bson),
    Missing,
    /// An array on the path (or as the value): the server rejects such a document.
    Array,
}

pub fn lookup<'a>(doc: &'a Document, path: &str) -> Lookup<'a> {
    let mut parts = path.split('.');
    let first = parts.next().unwrap_or("");
    let mut cur = match field(doc, first) {
        Some(v) => v,
        None => return Lookup::Missing,
    };
    for part in parts {
        cur = match cur {
            Bson::Document(d) => match d.get(part) {
                Some(v) => v,
                None => return Lookup::Missing,
            },
            Bson::Array(_) => return Lookup::Array,
            _ => return Lookup::Missing,
        };
    }
    if matches!(cur, Bson::Array(_)) {
        Lookup::Array
    } else {
        Lookup::Value(cur)
    }
}

/// `doc.get(name)`; a small document (a projected sample document has a dozen fields)
/// is searched in order, cheaper than hashing the name.
#[inline]
pub fn field<'a>(doc: &'a Document, name: &str) -> Option<&'a Bson> {
    if doc.len() <= 16 {
        doc.iter().find(|(k, _)| k.as_str() == name).map(|(_, v)| v)
    } else {
        doc.get(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn dotted_paths_missing_and_arrays() {
        let d = doc! {"a": {"x": 1}, "b": [1, 2], "c": [{"x": 1}], "n": null};
        assert_eq!(lookup(&d, "a.x"), Lookup::Value(&Bson::Int32(1)));
        assert_eq!(lookup(&d, "a.y"), Lookup::Missing);
        assert_eq!(lookup(&d, "z"), Lookup::Missing);
        assert_eq!(lookup(&d, "b"), Lookup::Array);
        assert_eq!(lookup(&d, "c.x"), Lookup::Array);
        assert_eq!(lookup(&d, "n"), Lookup::Value(&Bson::Null));
        assert_eq!(lookup(&d, "n.x"), Lookup::Missing);
    }
}
