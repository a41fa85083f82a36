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

/// Databases the server keeps for itself.
pub(crate) const SERVER_DATABASES: [&str; 3] = ["local", "config", "admin"];

/// Why the operations `is_server_own` finds are not counted as the application's.
pub(crate) const SERVER_OWN_OPERATIONS: &str = "operations on the server's own databases and collections (local, config, admin: the oplog, config.transactions; <db>.system.profile: read by whoever exports the profiler)";

/// The server's own: its databases (the oplog a secondary tails, config.transactions) and
/// each database's profiler (`system.profile`, read by whoever exports it). Not every
/// `system.*`: a time-series collection's writes are logged on its `system.buckets.*`.
/// `workload` and `analyze` leave their operations out alike, unless asked for them.
pub(crate) fn is_server_own(ns: &str) -> bool {
    SERVER_DATABASES.iter().any(|db| ns.strip_prefix(db).is_some_and(|r| r.starts_with('.')))
        || ns.split_once('.').is_some_and(|(_, coll)| coll == "system.profile")
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
