//! The same operations given twice would count twice: the same log file named twice (or a
//! copy of it), or a mongod's log beside its own profiler for the same window. Both are
//! refused, one line, exit 2, saying which to keep.
//!
//! Why refused rather than merged: the server writes an operation to its log (when slower
//! than slowms) and to its profiler (at the level set) from the same place, at its end, but
//! neither entry carries an id the other has (a 6.0.5 slow-query line has the connection and
//! the client's port, the profiler's entry the client's address without it; no opid in
//! either). Measured on the real mongod 6.0.5 (tests/plan_inputs.rs): every operation is in
//! both, with the same namespace, command and filter, at the same millisecond or the next
//! one. That finds that two sources overlap, but not which operations of a busy server are
//! the same one.

use crate::error::usage_error;
use crate::model::{Query, QueryOrigin};
use crate::sources::queries::QueryLog;
use anyhow::Result;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What identifies a file's content cheaply: its size and its first and last MiB.
fn content_id(path: &Path) -> Option<(u64, u64)> {
    use std::hash::{Hash, Hasher};
    use std::io::{Read, Seek, SeekFrom};
    let meta = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
    let mut f = std::fs::File::open(path).ok()?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mut buf = Vec::new();
    (&mut f).take(1 << 20).read_to_end(&mut buf).ok()?;
    buf.hash(&mut h);
    if meta.len() > 2 << 20 {
        f.seek(SeekFrom::End(-(1 << 20))).ok()?;
        buf.clear();
        f.take(1 << 20).read_to_end(&mut buf).ok()?;
        buf.hash(&mut h);
    }
    Some((meta.len(), h.finish()))
}

/// A file read: as given, where it really is, and what it holds.
struct Seen<'a> {
    given: &'a PathBuf,
    canonical: PathBuf,
    content: Option<(u64, u64)>,
}

/// Refuse a query file given twice, under one name or two (a copy, a link): its operations
/// would count twice. Standard input and pipes are read once and not compared.
pub(super) fn refuse_repeated_files(paths: &[&PathBuf]) -> Result<()> {
    let mut seen: Vec<Seen> = Vec::new();
    for p in paths {
        let Some(canonical) = p.canonicalize().ok().filter(|c| c.is_file()) else { continue };
        let content = content_id(&canonical);
        for s in &seen {
            if s.canonical == canonical {
                let what = if s.given == *p {
                    format!("--queries {} is given twice", p.display())
                } else {
                    format!("--queries {} and {} are the same file", s.given.display(), p.display())
                };
                return Err(usage_error(format!("{what}: its operations would count twice; give it once")));
            }
            if content.is_some() && s.content == content {
                return Err(usage_error(format!(
                    "--queries {} and {} hold the same log ({} bytes, the same first and last MiB): its operations would count twice; give it once",
                    s.given.display(),
                    p.display(),
                    content.map(|c| c.0).unwrap_or(0)
                )));
            }
        }
        seen.push(Seen { given: p, canonical, content });
    }
    Ok(())
}

/// What makes an operation the same one in a log and a profiler: namespace, command and
/// filter (numbers as relaxed Extended JSON writes them, so a log's 3 and a profiler's
/// NumberLong(3) agree).
fn op_key(q: &Query) -> (String, &'static str, String) {
    let filter = bson::Bson::Document(q.filter.clone()).into_relaxed_extjson().to_string();
    (q.ns.clone(), q.op.name(), filter)
}

fn time(q: &Query) -> Option<i64> {
    q.stats.as_ref().and_then(|s| s.ts_millis)
}

/// Operations kept from the profiler that the slow-query log holds too (the same operation
/// at the same millisecond or the next, as mongod writes both), and the span they cover.
pub(super) fn twins(log: &QueryLog) -> (u64, Option<(i64, i64)>) {
    let mut logged: HashMap<(String, &'static str, String), Vec<i64>> = HashMap::new();
    for q in log.queries.iter().filter(|q| q.origin == QueryOrigin::SlowQueryLog) {
        if let Some(t) = time(q) {
            logged.entry(op_key(q)).or_default().push(t);
        }
    }
    if logged.is_empty() {
        return (0, None);
    }
    let (mut n, mut span): (u64, Option<(i64, i64)>) = (0, None);
    for q in log.queries.iter().filter(|q| q.origin == QueryOrigin::Profiler) {
        let Some(t) = time(q) else { continue };
        if logged.get(&op_key(q)).is_some_and(|ts| ts.iter().any(|x| (x - t).abs() <= 1)) {
            n += 1;
            span = Some(span.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
        }
    }
    (n, span)
}

fn iso(ms: i64) -> String {
    bson::DateTime::from_millis(ms).try_to_rfc3339_string().unwrap_or_else(|_| ms.to_string())
}

/// Refuse a log read beside a profiler (live, or exported) that recorded the same
/// operations; `sources` as the report names them.
pub(super) fn refuse_log_and_profile(log: &QueryLog, sources: &[String]) -> Result<()> {
    let (n, span) = twins(log);
    let Some((from, to)) = span else { return Ok(()) };
    Err(usage_error(format!(
        "the query sources {} hold the same operations ({n} of those read from a profiler are in a log too, from {} to {}: the same command at the same millisecond): each would count twice; give the log or the profiler, not both (a log recorded with slowms -1 shows transactions whole; the profiler does not tie update statements to theirs)",
        sources.join(" and "),
        iso(from),
        iso(to)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Op, OpStats};
    use bson::doc;

    fn op(origin: QueryOrigin, filter: bson::Document, ts: i64) -> Query {
        let mut q = Query::new(Op::Find, "shop.orders", filter, origin);
        q.stats = Some(Box::new(OpStats { ts_millis: Some(ts), ..Default::default() }));
        q
    }

    /// The same find in the log and the profiler a millisecond apart is one operation seen
    /// twice; two milliseconds apart, or with another value, it is not.
    #[test]
    fn twins_are_the_same_command_within_a_millisecond() {
        let mut log = QueryLog::default();
        log.queries = vec![
            op(QueryOrigin::SlowQueryLog, doc! {"customerId": 3}, 1000),
            op(QueryOrigin::Profiler, doc! {"customerId": 3i64}, 1001),
            op(QueryOrigin::SlowQueryLog, doc! {"customerId": 4}, 2000),
            op(QueryOrigin::Profiler, doc! {"customerId": 4}, 2002),
            op(QueryOrigin::Profiler, doc! {"customerId": 5}, 1000),
        ];
        assert_eq!(twins(&log), (1, Some((1001, 1001))));
        log.queries.retain(|q| q.origin == QueryOrigin::Profiler);
        assert_eq!(twins(&log), (0, None));
    }

    #[test]
    fn a_file_given_twice_or_copied_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.log");
        let b = dir.path().join("b.log");
        let c = dir.path().join("c.log");
        std::fs::write(&a, "{\"t\":1}\n").unwrap();
        std::fs::write(&b, "{\"t\":1}\n").unwrap();
        std::fs::write(&c, "{\"t\":2}\n").unwrap();
        let e = refuse_repeated_files(&[&a, &a]).unwrap_err().to_string();
        assert!(e.contains("is given twice"), "{e}");
        let e = refuse_repeated_files(&[&a, &c, &b]).unwrap_err().to_string();
        assert!(e.contains("hold the same log (8 bytes"), "{e}");
        assert!(refuse_repeated_files(&[&a, &c]).is_ok());
    }
}
