//! The values a statement's filter fixes by equality, top-level field by top-level field: what
//! links fields across collections and places a statement under a key's zones.

use bson::{Bson, Document};

/// Top-level fields a filter fixes by equality, with their values.
pub(crate) fn equalities(filter: &Document) -> Vec<(String, Bson)> {
    let mut out = Vec::new();
    for (k, v) in filter {
        if k == "$and" {
            if let Bson::Array(items) = v {
                for d in items.iter().filter_map(Bson::as_document) {
                    out.extend(equalities(d));
                }
            }
            continue;
        }
        if k.starts_with('$') {
            continue;
        }
        match v {
            Bson::Document(d) if d.keys().next().is_some_and(|x| x.starts_with('$')) => {
                if let Some(x) = d.get("$eq") {
                    out.push((k.clone(), x.clone()));
                }
            }
            Bson::Array(_) | Bson::RegularExpression(_) => {}
            _ => out.push((k.clone(), v.clone())),
        }
    }
    out
}

/// The value a filter fixes one top-level field to: `equalities(filter)`'s first pair for
/// that field, found in the same order without copying the others. The search asks it for
/// every statement under every combination it tries (perf: the copies were most of the
/// search's allocations on the 500 MB benchmark log).
pub(crate) fn equality<'a>(filter: &'a Document, field: &str) -> Option<&'a Bson> {
    for (k, v) in filter {
        if k == "$and" {
            if let Bson::Array(items) = v {
                if let Some(x) = items.iter().filter_map(Bson::as_document).find_map(|d| equality(d, field)) {
                    return Some(x);
                }
            }
            continue;
        }
        if k.starts_with('$') || k != field {
            continue;
        }
        match v {
            Bson::Document(d) if d.keys().next().is_some_and(|x| x.starts_with('$')) => {
                if let Some(x) = d.get("$eq") {
                    return Some(x);
                }
            }
            Bson::Array(_) | Bson::RegularExpression(_) => {}
            _ => return Some(v),
        }
    }
    None
}
