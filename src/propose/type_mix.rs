//! A key field holding values of several BSON types (issue 49 item 2). Numbers of every type
//! compare equal in MongoDB (int 4163, long 4163 and double 4163.0 are one value), but a
//! string "4163" is another value than the number 4163: a query by one misses documents
//! holding the other, and each kind sorts apart in the key's order. Only kinds that never
//! compare equal are said: the server's canonical type order (mongodb/mongo d19d5cd
//! src/mongo/bson/bsontypes.h, canonicalizeBSONType; `bsonx::order::canonical_type` here).

/// A type code's canonical class (`canonicalizeBSONType`) and its `$type` name, by the slot
/// `sample::key` counts it in (the type code; minKey 30, maxKey 31).
fn kind(slot: usize) -> (i32, &'static str) {
    match slot {
        1 => (10, "double"),
        16 => (10, "int"),
        18 => (10, "long"),
        19 => (10, "decimal"),
        2 => (15, "string"),
        14 => (15, "symbol"),
        3 => (20, "object"),
        5 => (30, "binData"),
        6 => (0, "undefined"),
        7 => (35, "objectId"),
        8 => (40, "bool"),
        9 => (45, "date"),
        10 => (5, "null"),
        11 => (50, "regex"),
        12 => (55, "dbPointer"),
        13 => (60, "javascript"),
        15 => (65, "javascriptWithScope"),
        17 => (47, "timestamp"),
        30 => (-1, "minKey"),
        31 => (127, "maxKey"),
        _ => (0, "missing"),
    }
}

/// The class's name in words.
fn class_name(class: i32, types: &[(&str, u64)]) -> String {
    match class {
        10 => "numbers".to_string(),
        15 => "strings".to_string(),
        _ => types.first().map(|t| format!("{} values", t.0)).unwrap_or_default(),
    }
}

/// The words for one key field, when its values (`counts` by slot, over `sampled` documents)
/// fall in two or more classes that never compare equal (missing and null aside: the key's
/// null value, said elsewhere).
pub(crate) fn note(path: &str, counts: &[u64], sampled: u64) -> Option<String> {
    // (class, [(type, count)]) in the server's order.
    let mut classes: Vec<(i32, Vec<(&str, u64)>)> = Vec::new();
    for (slot, &c) in counts.iter().enumerate().filter(|(s, c)| **c > 0 && *s != 0 && *s != 10) {
        let (class, name) = kind(slot);
        match classes.iter_mut().find(|x| x.0 == class) {
            Some(x) => x.1.push((name, c)),
            None => classes.push((class, vec![(name, c)])),
        }
    }
    if classes.len() < 2 {
        return None;
    }
    classes.sort_by_key(|c| c.0);
    for c in &mut classes {
        c.1.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    }
    let total = |c: &(i32, Vec<(&str, u64)>)| c.1.iter().map(|t| t.1).sum::<u64>();
    let parts: Vec<String> = classes
        .iter()
        .map(|c| {
            let types = c.1.iter().map(|(n, k)| format!("{n} {k}")).collect::<Vec<_>>().join(", ");
            let equal = if c.1.len() > 1 { " (equal across these types: 4163 matches int, long and double 4163.0 alike)" } else { "" };
            format!("{}: {types}{equal}", class_name(c.0, &c.1))
        })
        .collect();
    let main = classes.iter().max_by_key(|c| total(c)).expect("two or more classes");
    let rest: Vec<&(i32, Vec<(&str, u64)>)> = classes.iter().filter(|c| c.0 != main.0).collect();
    let rest_docs: u64 = rest.iter().map(|c| total(c)).sum();
    let rest_types: Vec<&str> = rest.iter().flat_map(|c| c.1.iter().map(|t| t.0)).collect();
    let example = match (main.0, rest.first().map(|c| c.0)) {
        (10, Some(15)) => "the string \"4163\" is another value than the number 4163".to_string(),
        (15, Some(10)) => "the number 4163 is another value than the string \"4163\"".to_string(),
        _ => format!("a {} never equals a {}", class_name(main.0, &main.1), class_name(rest[0].0, &rest[0].1)),
    };
    Some(format!(
        "{path} holds values MongoDB never finds equal, in {sampled} sampled documents: {}. A query by one kind misses the others ({example}): the {rest_docs} documents holding {} are missed by queries for {}, and each kind sorts apart in the key's ranges; convert them (find them with {{\"{path}\": {{$type: [{}]}}}}) or query by every kind",
        parts.join("; "),
        rest_types.join(" or "),
        class_name(main.0, &main.1),
        rest_types.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_of_every_type_are_one_kind_and_strings_another() {
        let mut c = [0u64; 32];
        c[16] = 9_000;
        c[18] = 300;
        c[1] = 200;
        assert_eq!(note("acct", &c, 9_500), None, "numbers compare equal across types");
        c[2] = 500;
        c[10] = 7;
        let n = note("acct", &c, 10_007).unwrap();
        assert!(n.contains("numbers: int 9000, long 300, double 200"), "{n}");
        assert!(n.contains("strings: string 500"), "{n}");
        assert!(n.contains("the 500 documents holding string are missed by queries for numbers"), "{n}");
        assert!(n.contains("the string \"4163\" is another value than the number 4163"), "{n}");
        assert!(!n.contains("null"), "{n}");
    }
}
