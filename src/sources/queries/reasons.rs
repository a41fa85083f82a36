//! Why a record is left out: the `skipped` reasons the readers count under (nothing is dropped
//! without one), and shardkey's own operations, which are not the application's.

pub(crate) const NOT_SLOW_QUERY: &str = "log lines other than \"Slow query\"";
/// mongod 4.4+ logs one line (id 51802) per transaction that is slow, with its session.
pub(crate) const TXN_LINES: &str = "transaction summary lines (id 51802)";
pub(crate) const NOT_CRUD: &str = "operations that are not find/aggregate/count/distinct/update/delete/findAndModify/insert";
pub(crate) const UNKNOWN: &str = "records in no known format";
/// Lines that are not JSON a log writes (garbled, or cut where a copy was taken).
pub(crate) const MALFORMED_LINES: &str = "malformed lines (not valid JSON or not UTF-8)";
/// The file's last line, cut: the log was copied while mongod was writing it.
pub(crate) const CUT_LAST_LINE: &str = "a cut last line (the log was copied while being written)";
/// shardkey's own reads (its sampling finds and aggregates) are not the application's.
pub(crate) const OWN_OPERATIONS: &str = "shardkey's own operations (appName \"shardkey\")";

/// The client name shardkey's driver connections give (`sources::live`), unless the URI names another.
pub(crate) const OWN_APP_NAME: &str = "shardkey";

pub(super) fn is_own(app_name: Option<&str>) -> bool {
    app_name == Some(OWN_APP_NAME)
}
