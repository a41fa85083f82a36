//! `shardkey workload`: read query logs (any format) and summarise every operation
//! per namespace and query shape. Reads files only; the sample of `analyze` is not used.

use super::request::WorkloadRequest;
use crate::error::input_error;
use crate::metrics::workload::WorkloadCounter;
use crate::model::namespace::is_server_own as internal;
use crate::report::{write_workload, ToolInfo, WorkloadReport, SCHEMA_VERSION};
use crate::sources::queries::{read_query_file_into, OpSink, QueryLog};
use anyhow::Result;
use std::collections::BTreeMap;
use std::io::Write;

/// The sink that feeds the counter every operation the reader finds.
#[derive(Debug, Default)]
struct Sink(WorkloadCounter);

impl OpSink for Sink {
    fn op(&mut self, q: &crate::model::Query) {
        self.0.add(q);
    }
    fn fresh(&self) -> Box<dyn OpSink> {
        Box::new(Sink::default())
    }
    /// `WorkloadCounter::add` reads an operation's command, namespace, filter and figures.
    fn figures_only(&self) -> bool {
        true
    }
    /// `WorkloadCounter::add` reads of a filter only its shape.
    fn takes_shapes(&self) -> bool {
        true
    }
    fn op_shaped(&mut self, op: &crate::model::OpFigures, shape: &str) {
        self.0.add_shaped(op, shape);
    }
    fn merge(&mut self, other: Box<dyn OpSink>) {
        if let Ok(s) = other.as_any().downcast::<Sink>() {
            self.0.merge(s.0);
        }
    }
    fn as_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// A namespace pattern: `*` matches any run of characters (`app.*`, `*.events`).
pub(crate) fn matches(pattern: &str, ns: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == ns;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !ns.starts_with(first) || !ns[first.len()..].ends_with(last) || ns.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &ns[first.len()..ns.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

/// Does the pattern name the internal `ns` by its own words: the database for the server's
/// (`'local.*'`), `system.profile` for a profiler (`'shop.system.profile'`)? `'shop.*'` means
/// the application's collections, not the reads of whoever exported the profiler.
fn names_internal(pattern: &str, ns: &str) -> bool {
    if ns.split_once('.').is_some_and(|(_, coll)| coll == "system.profile") {
        pattern.contains("system.profile")
    } else {
        !pattern.starts_with('*')
    }
}

pub(super) fn run(r: &WorkloadRequest, out: &mut dyn Write) -> Result<()> {
    // Every operation goes to the counter; none needs to be kept.
    let mut log = QueryLog::default();
    log.limit = 0;
    log.window = r.window;
    log.sink = Some(Box::new(Sink::default()));
    super::overlap::refuse_repeated_files(&r.queries.iter().collect::<Vec<_>>())?;
    for path in &r.queries {
        // `analyze` and `plan` read `--queries profile|sampled` live; workload reads files only.
        if matches!(path.to_str(), Some("profile" | "sampled")) && !path.exists() {
            return Err(crate::error::usage_error(format!(
                "workload reads files: --queries {0} is the live source of analyze and plan (with --uri); export it first ({1} -o {0}.json) and give the file",
                path.display(),
                if path.to_str() == Some("profile") { "mongoexport -d DB -c system.profile" } else { "mongoexport -d config -c sampledQueries" },
            )));
        }
        let (t, records) = (std::time::Instant::now(), log.records);
        read_query_file_into(path, &mut log)?;
        crate::util::term::detail(format!(
            "read {}: {} records in {:.2} s",
            path.display(),
            log.records - records,
            t.elapsed().as_secs_f64()
        ));
    }
    let counter = match log.sink.take().map(|s| s.as_any().downcast::<Sink>()) {
        Some(Ok(s)) => s.0,
        _ => return Err(input_error("internal: the workload counter was lost")),
    };
    let pattern = r.namespace.clone();
    // The server's own databases and collections are not the application's workload: shown
    // only when --namespace names them.
    let keep = move |ns: &str| match pattern.as_deref() {
        Some(p) => matches(p, ns) && (!internal(ns) || names_internal(p, ns)),
        None => !internal(ns),
    };
    let left_internal: u64 = log.by_namespace.iter().filter(|(ns, _)| internal(ns) && !keep(ns)).map(|(_, n)| *n).sum();
    // The headline counts the operations the summary reports: not those on the server's own
    // databases (skipped, above) nor those --namespace leaves out.
    let reported: u64 = log.by_namespace.iter().filter(|(ns, _)| keep(ns)).map(|(_, n)| *n).sum();
    let namespaces = counter.finish(&keep, r.top, r.sort);
    let mut filters = BTreeMap::new();
    if let Some(p) = &r.namespace {
        filters.insert("namespace".to_string(), p.clone());
    }
    for (k, v) in [("since", &r.since_text), ("until", &r.until_text)] {
        if let Some(v) = v {
            filters.insert(k.to_string(), v.clone());
        }
    }
    let mut skipped = log.skipped.clone();
    if left_internal > 0 {
        skipped.insert(format!("{}; --namespace 'local.*' shows them", crate::model::namespace::SERVER_OWN_OPERATIONS), left_internal);
    }
    skipped.retain(|_, v| *v > 0);
    let report = WorkloadReport {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo::this(),
        sources: r.queries.iter().map(|p| p.display().to_string()).collect(),
        records_read: log.records,
        operations_read: reported,
        skipped,
        filters,
        namespaces,
    };
    write_workload(&report, r.format, out)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{internal, matches, names_internal};

    /// The server's databases and every database's profiler; not a time-series collection's
    /// buckets (the application's writes), nor a collection that merely holds "system" in its name.
    #[test]
    fn the_servers_own_namespaces() {
        for ns in ["local.oplog.rs", "config.transactions", "admin.system.users", "market.system.profile"] {
            assert!(internal(ns), "{ns}");
        }
        for ns in ["market.orders", "testdb.system.buckets.ts_minutes", "market.systems", "localstore.items", "market.ops.system.profile"] {
            assert!(!internal(ns), "{ns}");
        }
    }

    /// Shown only when the pattern names them: a database's `*` is its application's collections.
    #[test]
    fn internal_namespaces_named() {
        assert!(names_internal("local.*", "local.oplog.rs") && !names_internal("*.rs", "local.oplog.rs"));
        assert!(!names_internal("resv.*", "resv.system.profile") && !names_internal("*", "resv.system.profile"));
        assert!(names_internal("resv.system.profile", "resv.system.profile") && names_internal("*.system.profile", "resv.system.profile"));
    }

    #[test]
    fn namespace_patterns() {
        assert!(matches("app.*", "app.events"));
        assert!(matches("*.events", "app.events"));
        assert!(matches("a*.e*s", "app.events"));
        assert!(!matches("app.*", "shop.events"));
        assert!(matches("app.events", "app.events") && !matches("app.event", "app.events"));
        assert!(!matches("ab*ba", "aba"));
    }
}
