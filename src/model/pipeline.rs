//! The filter mongos targets an aggregation with: the `$match` predicates the server's
//! optimiser moves to the front of the pipeline. Checked against mongod 6.0.5's explain (the
//! `$cursor` stage's `parsedQuery`, `tests/edge_cases.rs`): a `$match` swaps ahead of `$sort`
//! (not past a `$limit`), of `$addFields`/`$set`/`$project`/`$unset` for the predicates on
//! fields the stage does not change, of `$lookup` unless it reads the `as` field, and of
//! `$unwind` unless it reads the unwound path (mongodb/mongo
//! src/mongo/db/pipeline/document_source_sort.cpp, document_source_single_document_transformation.cpp,
//! document_source_lookup.cpp and document_source_unwind.cpp `doOptimizeAt`, with
//! document_source_match.cpp `splitSourceBy`). Any other stage ends the search.

use bson::{Bson, Document};

/// What the stages passed so far change.
#[derive(Default)]
struct Changed {
    /// Paths a stage set or removed.
    paths: Vec<String>,
    /// An inclusion `$project` kept only these (and `_id`): every other path changed.
    kept_only: Option<Vec<String>>,
}

fn related(a: &str, b: &str) -> bool {
    a == b || a.starts_with(&format!("{b}.")) || b.starts_with(&format!("{a}."))
}

impl Changed {
    fn touches(&self, path: &str) -> bool {
        self.paths.iter().any(|p| related(p, path))
            || self.kept_only.as_ref().is_some_and(|k| !k.iter().any(|p| path == p || path.starts_with(&format!("{p}."))))
    }

    /// Whether a top-level predicate reads only unchanged fields (an operator at the top,
    /// `$or` or `$expr`, moves only while nothing has changed).
    fn leaves(&self, name: &str) -> bool {
        if name.starts_with('$') {
            return self.paths.is_empty() && self.kept_only.is_none();
        }
        !self.touches(name)
    }
}

/// The `$match` predicates that run first, `$and`-ed as one filter (empty: none).
pub(crate) fn leading_match(pipeline: &[Bson]) -> Document {
    let mut moved: Vec<Document> = Vec::new();
    let mut changed = Changed::default();
    for stage in pipeline.iter().filter_map(Bson::as_document) {
        let Some((name, spec)) = stage.iter().next() else { break };
        match (name.as_str(), spec) {
            ("$match", Bson::Document(m)) => {
                let parts: Vec<Document> = match m.get_array("$and") {
                    Ok(items) if m.len() == 1 => items.iter().filter_map(|x| x.as_document().cloned()).collect(),
                    _ => m.iter().map(|(k, v)| Document::from_iter([(k.clone(), v.clone())])).collect(),
                };
                for p in parts {
                    if p.keys().all(|k| changed.leaves(k)) {
                        moved.push(p);
                    }
                }
            }
            ("$sort", _) => {}
            ("$addFields" | "$set", Bson::Document(d)) => changed.paths.extend(d.keys().cloned()),
            ("$unset", Bson::String(s)) => changed.paths.push(s.clone()),
            ("$unset", Bson::Array(a)) => changed.paths.extend(a.iter().filter_map(|x| x.as_str().map(str::to_string))),
            ("$project", Bson::Document(d)) => {
                let excluded = |v: &Bson| {
                    matches!(v, Bson::Boolean(false) | Bson::Int32(0) | Bson::Int64(0)) || matches!(v, Bson::Double(f) if *f == 0.0)
                };
                let included = |v: &Bson| {
                    matches!(v, Bson::Boolean(true) | Bson::Int32(1) | Bson::Int64(1)) || matches!(v, Bson::Double(f) if *f == 1.0)
                };
                let fields: Vec<(&String, &Bson)> = d.iter().filter(|(k, _)| k.as_str() != "_id").collect();
                if !fields.is_empty() && fields.iter().all(|(_, v)| excluded(v)) {
                    changed.paths.extend(fields.iter().map(|(k, _)| (*k).clone()));
                } else {
                    // Inclusion: only the fields kept as they are survive unchanged.
                    let kept: Vec<String> = fields.iter().filter(|(_, v)| included(v)).map(|(k, _)| (*k).clone()).collect();
                    changed.paths.extend(fields.iter().filter(|(_, v)| !included(v)).map(|(k, _)| (*k).clone()));
                    changed.kept_only = Some(match changed.kept_only.take() {
                        Some(before) => before.into_iter().filter(|p| kept.contains(p)).collect(),
                        None => kept,
                    });
                }
            }
            ("$lookup", Bson::Document(l)) => match l.get_str("as") {
                Ok(a) => changed.paths.push(a.to_string()),
                Err(_) => break,
            },
            ("$unwind", Bson::String(p)) => changed.paths.push(p.trim_start_matches('$').to_string()),
            ("$unwind", Bson::Document(u)) => match u.get_str("path") {
                Ok(p) => {
                    changed.paths.push(p.trim_start_matches('$').to_string());
                    if let Ok(ix) = u.get_str("includeArrayIndex") {
                        changed.paths.push(ix.to_string());
                    }
                }
                Err(_) => break,
            },
            _ => break,
        }
    }
    match moved.len() {
        0 => Document::new(),
        1 => moved.pop().unwrap_or_default(),
        // Top-level predicates on distinct fields read as one document, else an `$and`.
        _ => {
            let mut one = Document::new();
            if moved.iter().all(|d| d.keys().all(|k| !k.starts_with('$'))) && {
                let mut names: Vec<&String> = moved.iter().flat_map(|d| d.keys()).collect();
                let n = names.len();
                names.sort();
                names.dedup();
                names.len() == n
            } {
                for d in moved {
                    one.extend(d);
                }
                one
            } else {
                one.insert("$and", Bson::Array(moved.into_iter().map(Bson::Document).collect()));
                one
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    fn of(p: Vec<Document>) -> Document {
        leading_match(&p.into_iter().map(Bson::Document).collect::<Vec<_>>())
    }

    /// The `parsedQuery` mongod 6.0.5's explain gave for each (tests/edge_cases.rs runs them).
    #[test]
    fn matches_move_first_as_the_server_moves_them() {
        let m = doc! {"$match": {"customerId": "c1"}};
        assert_eq!(of(vec![doc! {"$sort": {"createdAt": -1}}, m.clone()]), doc! {"customerId": "c1"});
        assert_eq!(
            of(vec![doc! {"$addFields": {"t2": {"$multiply": ["$total", 2]}}}, doc! {"$match": {"customerId": "c1", "t2": {"$gt": 3}}}]),
            doc! {"customerId": "c1"}
        );
        assert_eq!(of(vec![doc! {"$set": {"customerId": "x"}}, m.clone()]), doc! {});
        assert_eq!(of(vec![doc! {"$project": {"customerId": 1, "total": 1}}, m.clone()]), doc! {"customerId": "c1"});
        assert_eq!(of(vec![doc! {"$project": {"total": 1}}, m.clone()]), doc! {});
        assert_eq!(of(vec![doc! {"$project": {"total": 0}}, m.clone()]), doc! {"customerId": "c1"});
        let lookup = doc! {"$lookup": {"from": "customers", "localField": "customerId", "foreignField": "_id", "as": "cust"}};
        assert_eq!(of(vec![lookup.clone(), m.clone()]), doc! {"customerId": "c1"});
        assert_eq!(of(vec![lookup, doc! {"$match": {"cust._id": "c1"}}]), doc! {});
        assert_eq!(of(vec![doc! {"$sort": {"createdAt": -1}}, doc! {"$limit": 5}, m.clone()]), doc! {});
        assert_eq!(of(vec![doc! {"$unwind": "$tags"}, m.clone()]), doc! {"customerId": "c1"});
        assert_eq!(of(vec![m.clone(), doc! {"$match": {"total": {"$gt": 1}}}]), doc! {"customerId": "c1", "total": {"$gt": 1}});
        assert_eq!(of(vec![m.clone(), doc! {"$match": {"customerId": "c2"}}]), doc! {"$and": [{"customerId": "c1"}, {"customerId": "c2"}]});
    }
}
