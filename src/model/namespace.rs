//! A collection namespace, `db.collection`, validated once for every input
//! (`--collection`, the policy file, a mongodump path).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Namespace {
    db: String,
    coll: String,
}

impl Namespace {
    /// `db.collection`: a database name without `/ \ " $` or spaces, a non-empty collection name.
    pub fn parse(text: &str) -> Result<Namespace, String> {
        match text.split_once('.') {
            Some((db, coll)) if !db.is_empty() && !coll.is_empty() && !db.contains(['/', '\\', ' ', '"', '$', '\0']) => {
                Ok(Namespace { db: db.to_string(), coll: coll.to_string() })
            }
            _ => Err(format!("{text}: expected db.collection")),
        }
    }

    pub(crate) fn db(&self) -> &str {
        &self.db
    }

    pub(crate) fn coll(&self) -> &str {
        &self.coll
    }
}

impl fmt::Display for Namespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.db, self.coll)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_dot_collection() {
        let ns = Namespace::parse("shop.orders.archive").unwrap();
        assert_eq!((ns.db(), ns.coll()), ("shop", "orders.archive"));
        assert_eq!(ns.to_string(), "shop.orders.archive");
        for bad in ["orders", ".orders", "shop.", "sh op.orders", "a/b.c", "$x.y"] {
            assert!(Namespace::parse(bad).is_err(), "{bad}");
        }
    }
}
