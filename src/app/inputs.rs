//! Opening the inputs of one analysis, files or a live deployment, and running
//! the pipeline on them: the one place that chooses query sources and candidates.

use super::request::{InputRequest, QuerySource};
use crate::error::{input_error, one_line, usage_error};
use crate::metrics::audit::audit;
use crate::metrics::Settings;
use crate::model::member::{MemberRead, MemberRole};
use crate::model::{Namespace, Query, ShardKey};
use crate::pipeline::{self, Candidates, Options, PRESCAN_DOCS};
use crate::propose::{self, Origin, Proposal};
use crate::report::Report;
use crate::sources::docs::namespace_from_dump_path;
use crate::sources::files::FileSource;
use crate::sources::files::{dump_metadata_beside, read_metadata};
use crate::sources::live::{server_compare, LiveOptions, LiveSession, LiveSource, ProfileRead, ProfileScope};
use crate::sources::queries::{read_query_file_into, QueryLog};
use anyhow::Result;

fn options(input: &InputRequest, candidates: Candidates, namespace: Option<&Namespace>) -> Options {
    Options {
        candidates,
        namespace: namespace.map(Namespace::to_string),
        settings: Settings {
            chunk_size_bytes: input.chunk_size_bytes,
            num_most_common: input.top,
            default_collation: input.collation.clone(),
            shards: input.shards,
            redact: input.redact,
        },
        total_docs: input.total_docs,
        memory_limit: input.memory_limit,
        residency: input.residency.clone(),
        rules_version: input.rules_version.clone(),
        queries_unread: None,
        // A mongodump's prelude.json names the server's version (the docs file beside its metadata.json).
        server_version: input
            .docs
            .as_deref()
            .filter(|d| dump_metadata_beside(d).is_some())
            .and_then(|d| crate::sources::dump::prelude_version(d.parent()?)),
    }
}

/// A namespace the logs hold no operation on while they hold many on one spelt nearly alike
/// (`iot.reading` for `iot.readings`): refused with the name, as live, rather than analysed
/// on no queries (a confident answer, or a gate passed on "0 operations").
fn refuse_misspelt_namespace(ns: Option<&Namespace>, log: &QueryLog) -> Result<()> {
    let Some(ns) = ns.map(Namespace::to_string) else { return Ok(()) };
    if log.by_namespace.get(&ns).copied().unwrap_or(0) > 0 {
        return Ok(());
    }
    // The collection names of the same database compared (the shared "db." would make any
    // two names look alike).
    let (db, coll) = ns.split_once('.').unwrap_or(("", &ns));
    let colls: Vec<String> = log.by_namespace.keys().filter_map(|n| n.strip_prefix(db)?.strip_prefix('.').map(str::to_string)).collect();
    match crate::util::text::closest(coll, &colls) {
        Some(near) => {
            let near = format!("{db}.{near}");
            let n = crate::util::text::fmt_count(log.by_namespace[&near]);
            Err(usage_error(format!("{ns}: the query logs hold no operation on it, and {n} on {near}: did you mean {near}?")))
        }
        None => Ok(()),
    }
}

/// One report for a namespace: named keys, or proposals when there are none.
pub(super) fn build_report(
    input: &InputRequest,
    namespace: Option<Namespace>,
    candidates: Candidates,
    compare_server: bool,
) -> Result<Report> {
    build_report_with(input, namespace, candidates, compare_server, None)
}

/// Query logs already read (`plan` reads them once for every collection), and their names.
pub(super) type SharedLog<'a> = (&'a QueryLog, &'a [String]);

/// `build_report`, with the query logs already read when `shared` is given.
pub(super) fn build_report_with(
    input: &InputRequest,
    namespace: Option<Namespace>,
    candidates: Candidates,
    compare_server: bool,
    shared: Option<SharedLog>,
) -> Result<Report> {
    // --docs wins over a URI (MONGODB_URI may be set in the environment); queries alone
    // give a queries-only analysis.
    let offline = input.docs.is_some() || (input.uri.is_none() && !input.queries.is_empty());
    let mut r = match (&input.docs, &input.uri) {
        (docs, _) if offline => {
            let namespace = match (namespace, docs) {
                (Some(ns), _) => Some(ns),
                (None, Some(docs)) => namespace_from_dump_path(docs).and_then(|ns| Namespace::parse(&ns).ok()),
                (None, None) => None,
            };
            let mut log = QueryLog::for_namespace(namespace.as_ref().map(Namespace::to_string));
            log.window = input.window;
            log.keep_times = input.queries.len() > 1;
            let mut names = Vec::new();
            let mut file_members = Vec::new();
            let queries = if shared.is_some() { &[][..] } else { &input.queries[..] };
            super::overlap::refuse_repeated_files(&files_of(queries))?;
            for q in queries {
                let path = match q {
                    QuerySource::File(p) => p.clone(),
                    // A file that happens to be called `profile` is still a file.
                    QuerySource::Profile | QuerySource::Sampled => {
                        let word = if *q == QuerySource::Profile { "profile" } else { "sampled" };
                        if !std::path::Path::new(word).exists() {
                            return Err(usage_error(format!("--queries {word} reads from a live deployment: give --uri")));
                        }
                        word.into()
                    }
                };
                let (t, records, found) = (std::time::Instant::now(), log.records, log.found);
                file_members.push(read_log_file(&path, namespace.as_ref(), &mut log)?);
                crate::util::term::detail(format!(
                    "read {}: {} records, {} operations in {:.2} s",
                    path.display(),
                    log.records - records,
                    log.found - found,
                    t.elapsed().as_secs_f64()
                ));
                names.push(path.display().to_string());
            }
            if shared.is_none() {
                refuse_misspelt_namespace(namespace.as_ref(), &log)?;
            }
            let opts = options(input, candidates, namespace.as_ref());
            let t = std::time::Instant::now();
            let (log, names) = match shared {
                Some((l, n)) => (l, n.to_vec()),
                None => (&log, names),
            };
            if shared.is_none() && names.len() > 1 {
                super::overlap::refuse_log_and_profile(log, &names)?;
            }
            let r = match docs {
                Some(docs) => {
                    let metadata = match input.indexes.clone().or_else(|| dump_metadata_beside(docs)) {
                        Some(path) => Some(read_metadata(&path)?),
                        None => None,
                    };
                    pipeline::run(&mut FileSource::new(docs.clone()).with_metadata(metadata), log, names, &opts)?
                }
                None => pipeline::run(&mut crate::sources::NoDocuments, log, names, &opts)?,
            };
            let mut r = r;
            r.notes.extend(log_file_note(&file_members));
            r.inputs.queries.members = file_members;
            crate::util::term::detail(format!(
                "sampled {} documents from {} and measured {} candidates in {:.2} s",
                r.inputs.documents.num_docs_read,
                r.inputs.documents.source,
                r.candidates.len(),
                t.elapsed().as_secs_f64()
            ));
            r
        }
        (_, Some(uri)) => {
            let ns = namespace.ok_or_else(|| usage_error("--uri needs --collection db.coll"))?;
            run_live(input, uri, &ns, candidates, compare_server, shared)?
        }
        (_, None) => {
            return Err(usage_error("give --docs FILE, --uri URI (or set MONGODB_URI), or --queries FILE for a queries-only analysis"))
        }
    };
    if input.redact {
        r.notes.push(
            "--redact: values are shown as <BSON type>#<hash>; the hash is stable across runs, not secret for values that are easy to guess"
                .into(),
        );
    }
    Ok(r)
}

/// The live path: connect, read what the deployment holds, then the same pipeline.
fn run_live(
    input: &InputRequest,
    uri: &str,
    ns: &Namespace,
    candidates: Candidates,
    compare_server: bool,
    shared: Option<SharedLog>,
) -> Result<Report> {
    let lo = LiveOptions {
        uri: uri.to_string(),
        namespace: ns.clone(),
        server_selection_timeout: input.server_selection_timeout,
        max_time: input.max_time,
    };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let mut notes = Vec::new();
    let t = std::time::Instant::now();
    let session = rt.block_on(LiveSession::open(&lo))?;
    let info = rt.block_on(session.collection_info())?;
    crate::util::term::detail(format!(
        "connected to {} (MongoDB {}.{}): {} holds {} documents, {} indexes ({:.2} s)",
        session.redacted,
        info.server_version.0,
        info.server_version.1,
        ns,
        info.count,
        info.indexes.len(),
        t.elapsed().as_secs_f64()
    ));
    if let Some(ts) = &info.options.time_series {
        notes.push(format!(
            "{ns} is a time-series collection (timeField {}, metaField {}): its {} measurements are sampled through the collection's view, in bucket order; keys are proposed and judged by the time-series rules (docs/reference.md \"Rules\")",
            ts.time_field,
            ts.meta_field.as_deref().unwrap_or("none"),
            info.count
        ));
    }
    let mut opts = options(input, Candidates::FromPrescan, Some(ns));
    if opts.settings.default_collation.is_none() {
        opts.settings.default_collation = info.default_collation.clone();
    }
    // Already sharded? Then audit its chunks and analyse its key beside the candidates.
    let sharding = match rt.block_on(session.read_sharding(input.config_uri.as_deref(), lo.server_selection_timeout)) {
        Ok(m) => m,
        Err(e) if input.config_uri.is_none() => {
            notes.push(format!("sharding metadata not read: {}", one_line(&e)));
            None
        }
        Err(e) => return Err(e),
    };
    if let Some(m) = &sharding {
        notes.push(format!(
            "{ns} is sharded on {} ({} chunks on {} shards, config.chunks by {}); the current key is analysed on its real chunks",
            m.key,
            m.chunks.len(),
            m.shards.len(),
            m.chunk_format
        ));
    }
    let read;
    let shard_hosts: Vec<String> = sharding.iter().flat_map(|m| m.shard_hosts.clone()).collect();
    let (log, query_sources, members) = match shared {
        Some((l, n)) => (l, n.to_vec(), Vec::new()),
        None => {
            read = read_live_queries(input, &session, &rt, ns, &shard_hosts, info.server_version, &mut notes)?;
            opts.queries_unread = read.unread.clone();
            (&read.log, read.sources.clone(), read.members.clone())
        }
    };

    // Candidates: named (plus the current key), or proposed from a pre-scan, the filters, the indexes and the current key.
    let current: Vec<Proposal> = sharding.iter().map(|m| Proposal { key: m.key.clone(), origin: Origin::CurrentShardKey }).collect();
    let mut prescan = Vec::new();
    opts.candidates = match candidates {
        Candidates::Named(mut keys) => {
            if let Some(m) = &sharding {
                if !keys.is_empty() && !keys.contains(&m.key) {
                    keys.push(m.key.clone());
                }
            }
            if keys.is_empty() {
                Candidates::Proposed(current)
            } else {
                Candidates::Named(keys)
            }
        }
        Candidates::Proposed(p) => Candidates::Proposed(propose::merge([current, p])),
        Candidates::FromPrescan | Candidates::FromPrescanAnd(_) => {
            let more = match candidates {
                Candidates::FromPrescanAnd(more) => more,
                _ => Vec::new(),
            };
            prescan = rt.block_on(session.prescan(PRESCAN_DOCS))?;
            let ns_text = ns.to_string();
            let queries: Vec<&Query> = log.queries.iter().filter(|q| q.ns == ns_text).collect();
            let proposed = if prescan.is_empty() {
                propose::for_empty_collection(&queries, &info.indexes, Some(&info.options))
            } else {
                let p = propose::for_collection(&prescan, &queries, &info.indexes, Some(&info.options), Some(info.count));
                notes.extend(p.cap_note());
                p.list
            };
            Candidates::Proposed(propose::merge([current, proposed, more]))
        }
    };
    let keys: Vec<ShardKey> = match &opts.candidates {
        Candidates::Named(k) => k.clone(),
        Candidates::Proposed(p) => p.iter().map(|p| p.key.clone()).collect(),
        Candidates::FromPrescan | Candidates::FromPrescanAnd(_) => vec![],
    };
    let mut source = LiveSource {
        name: format!("{} ({ns})", session.redacted),
        session: &session,
        rt: &rt,
        keys,
        info: info.clone(),
        sample_size: input.sample_size,
        order_size: crate::sample::limits_for(input.memory_limit, 1).1 as u64,
        prescan,
        sharding: sharding.clone(),
    };
    let mut r = pipeline::run(&mut source, log, query_sources, &opts)?;
    for caveat in [windows_caveat(&members), slow_part_caveat(&members)].into_iter().flatten() {
        caveat_said(&mut r, caveat);
    }
    r.inputs.queries.members = members;
    r.notes.extend(notes);
    r.audit = sharding.as_ref().map(|m| audit(m, input.redact));
    if compare_server {
        if info.server_version >= (7, 0) {
            for c in &mut r.candidates {
                match rt.block_on(session.analyze_shard_key(&c.key)).and_then(|reply| server_compare::summarize_reply(&reply)) {
                    Ok(v) => c.server_analyze_shard_key = Some(v),
                    Err(e) => r.notes.push(format!("analyzeShardKey for {}: {}", c.key, one_line(&e))),
                }
            }
        } else {
            r.notes.push(format!(
                "--compare-server: the server is MongoDB {}.{}; analyzeShardKey needs 7.0 or newer",
                info.server_version.0, info.server_version.1
            ));
        }
    }
    Ok(r)
}

/// Query logs on a deployment: what was asked for, or whatever exists (and is readable).
fn read_live_queries(
    input: &InputRequest,
    session: &LiveSession,
    rt: &tokio::runtime::Runtime,
    ns: &Namespace,
    shard_hosts: &[String],
    server_version: (u32, u32),
    notes: &mut Vec<String>,
) -> Result<LiveQueries> {
    let mut log = QueryLog::for_namespace(Some(ns.to_string()));
    log.window = input.window;
    let mut sources = Vec::new();
    let auto = input.queries.is_empty();
    // Looked at on our own and not readable (privileges): never called "empty".
    let mut unreadable: Vec<&str> = Vec::new();
    // Sampled queries exist from 7.0 on: before, looking for them only adds a note.
    let wanted = match (auto, server_version >= (7, 0)) {
        (true, true) => vec![QuerySource::Profile, QuerySource::Sampled],
        (true, false) => vec![QuerySource::Profile],
        (false, _) => input.queries.clone(),
    };
    super::overlap::refuse_repeated_files(&files_of(&wanted))?;
    log.keep_times = wanted.len() > 1;
    let mut members = Vec::new();
    let mut files = Vec::new();
    // What the profilers' settings say about an empty read ("" when they say nothing).
    let mut empty_why = String::new();
    for q in &wanted {
        match q {
            QuerySource::Profile => {
                let mut l = QueryLog::for_namespace(Some(ns.to_string()));
                l.window = input.window;
                l.keep_times = wanted.len() > 1;
                let read = rt.block_on(session.read_profiles(ProfileScope::Namespace, shard_hosts, &mut l));
                let n = read.operations();
                if let Some(why) = read.none_readable() {
                    // Looking on our own: a user who may not read the profile still gets an analysis.
                    if !auto {
                        return Err(input_error(format!("system.profile not read: {why}")));
                    }
                    unreadable.push("system.profile");
                } else if n > 0 || !auto {
                    sources.push(format!("{}.system.profile", ns.db()));
                    log.merge(l);
                }
                notes.extend(member_notes(&read, ns));
                if n == 0 {
                    empty_why = read.why_empty();
                }
                members = read.members;
            }
            QuerySource::Sampled => match rt.block_on(session.read_sampled()) {
                Ok((l, how)) => {
                    let n = l.queries.len() + l.diffs.len();
                    if n > 0 || !auto {
                        sources.push(how.to_string());
                        notes.push(format!("read {n} sampled queries and diffs on {ns} through {how}"));
                        log.merge(l);
                    }
                }
                Err(e) if auto => {
                    unreadable.push("sampled queries");
                    notes.push(format!("sampled queries not read: {}", one_line(&e)))
                }
                Err(e) => return Err(e),
            },
            QuerySource::File(path) => {
                sources.push(path.display().to_string());
                files.push(read_log_file(path, Some(ns), &mut log)?);
            }
        }
    }
    if sources.len() > 1 {
        super::overlap::refuse_log_and_profile(&log, &sources)?;
    }
    notes.extend(log_file_note(&files));
    members.extend(files);
    let mut unread = None;
    if auto && sources.is_empty() {
        let looked = wanted.len();
        let why = match (unreadable.len(), looked) {
            (0, 1) if !empty_why.is_empty() => format!("system.profile holds none: {empty_why}"),
            (0, 1) => "system.profile is empty".to_string(),
            (0, _) if !empty_why.is_empty() => format!("system.profile holds none: {empty_why}; sampled queries are empty"),
            (0, _) => "system.profile and sampled queries are empty".to_string(),
            (1, 1) => "system.profile could not be read".to_string(),
            (2, _) => "neither system.profile nor sampled queries could be read".to_string(),
            _ => format!("{} could not be read, and the other is empty", unreadable[0]),
        };
        notes.push(format!(
            "no query sample found for {ns} ({why}): targeting is not measured; give a slow-query log (--queries mongod.log)"
        ));
        unread = (!unreadable.is_empty()).then_some(why);
    }
    Ok(LiveQueries { log, sources, members, unread })
}

/// The files among the query sources.
fn files_of(queries: &[QuerySource]) -> Vec<&std::path::PathBuf> {
    queries.iter().filter_map(|q| if let QuerySource::File(p) = q { Some(p) } else { None }).collect()
}

/// One query file into `log`, and what it held as one mongod's log: the operations on the
/// namespace (on every namespace without one) and the mongod from its startup line.
fn read_log_file(path: &std::path::Path, namespace: Option<&Namespace>, log: &mut QueryLog) -> Result<MemberRead> {
    let on_ns = |log: &QueryLog| match namespace {
        Some(ns) => log.by_namespace.get(&ns.to_string()).copied().unwrap_or(0),
        None => log.found,
    };
    let before = on_ns(log);
    read_query_file_into(path, log)?;
    Ok(MemberRead {
        host: crate::sources::queries::log_host(path),
        set: None,
        role: MemberRole::Unknown,
        source: path.display().to_string(),
        operations: on_ns(log) - before,
        from: None,
        to: None,
        profiler: None,
        error: None,
    })
}

/// A workload read only from level-1 profilers is the slow part of it: said beside the answer,
/// not only among the notes (a DBA's trial: 126 slow operations of one read shape recommended a
/// key under which the application's uniform sample had 56% of updates refused).
fn slow_part_caveat(members: &[MemberRead]) -> Option<String> {
    let with_ops: Vec<&MemberRead> = members.iter().filter(|m| m.operations > 0).collect();
    let slow: Vec<&crate::model::member::ProfilerState> =
        with_ops.iter().filter_map(|m| m.profiler.as_ref()).filter(|p| p.level == 1 && p.slowms > 0).collect();
    if with_ops.is_empty() || slow.len() < with_ops.len() {
        return None;
    }
    let n: u64 = with_ops.iter().map(|m| m.operations).sum();
    let mut slowms: Vec<i64> = slow.iter().map(|p| p.slowms).collect();
    slowms.sort_unstable();
    slowms.dedup();
    let ms = slowms.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(" or ");
    Some(format!(
        "this choice rests on the slow part of the workload only: the profiler is at level 1 ({} slower than {ms} ms); the faster reads and writes it did not record can change it: `shardkey sample` records a uniform sample of every operation",
        crate::util::text::count_of(n, "operation", "operations")
    ))
}

/// Members whose profilers were full kept only their latest operations, while the others
/// reach further back: the members' shares of the workload are then not as they ran (a new
/// user's secondaries, 1 MiB profilers, kept 954 of the 6,803 reads they served). Said beside
/// the answer; the notes name each profiler's state.
fn windows_caveat(members: &[MemberRead]) -> Option<String> {
    let read: Vec<&MemberRead> = members.iter().filter(|m| m.error.is_none() && m.profiler.is_some()).collect();
    let full: Vec<String> = read.iter().filter(|m| m.profiler.as_ref().and_then(|p| p.full) == Some(true)).map(|m| m.label()).collect();
    if full.is_empty() || read.iter().filter(|m| m.operations > 0).count() < 2 {
        return None;
    }
    let (whose, was) = if full.len() == 1 { ("profiler", "was") } else { ("profilers", "were") };
    Some(format!(
        "the {whose} of {} {was} full: older operations are gone there while other members' reach further back, so the operations each member served do not weigh as they ran; give each member's log, or a larger profiler on each (the notes say how)",
        crate::util::text::and_list(&full)
    ))
}

/// The caveat leads; the recommended key's own first warning (what the answer showed without a
/// caveat) stays beside it.
fn caveat_said(r: &mut crate::report::Report, caveat: String) {
    let Some(rec) = r.recommendation.as_mut() else { return };
    if rec.caveats.is_empty() {
        rec.caveats.extend(r.candidates.iter().find(|c| c.key == rec.key).and_then(crate::report::text::own_warning));
    }
    rec.caveats.insert(0, caveat);
}

/// Each mongod writes its own log: with several, what each held.
fn log_file_note(files: &[MemberRead]) -> Option<String> {
    if files.len() < 2 {
        return None;
    }
    let each: Vec<String> =
        files.iter().map(|m| format!("{} {}", m.label(), crate::util::text::count_of(m.operations, "operation", "operations"))).collect();
    Some(format!("each mongod writes its own log: {}", each.join(", ")))
}

/// The query logs read from a deployment, and per member what its profiler held.
struct LiveQueries {
    log: QueryLog,
    sources: Vec<String>,
    members: Vec<MemberRead>,
    /// Nothing read because what was looked for could not be read (privileges): why.
    unread: Option<String>,
}

/// One line per member read (operations, span, profiler state) and per member not read.
pub(super) fn member_notes(read: &ProfileRead, ns: &dyn std::fmt::Display) -> Vec<String> {
    let mut out = Vec::new();
    for m in read.members.iter().filter(|m| m.error.is_none()) {
        let span = match (&m.from, &m.to) {
            (Some(f), Some(t)) => format!(" from {f} to {t}"),
            _ => String::new(),
        };
        let state = match &m.profiler {
            Some(p) => {
                let mut s = format!("; profiling level {}, slowms {}, sampleRate {}", p.level, p.slowms, p.sample_rate);
                if let (Some(size), Some(max)) = (p.size_bytes, p.max_size_bytes) {
                    s.push_str(&format!(", system.profile {} of {}", crate::util::text::bytes(size), crate::util::text::bytes(max)));
                }
                match (p.full, &p.full_unknown) {
                    (Some(true), _) => s.push_str(&format!(
                        ": full, older operations are gone (it reaches back to {}; a larger profiler: db.setProfilingLevel(0), drop system.profile, createCollection(\"system.profile\", {{capped: true, size: ...}}))",
                        p.oldest.as_deref().unwrap_or("its oldest entry")
                    )),
                    (Some(false), _) => {}
                    (None, why) => s.push_str(&format!(
                        "; whether system.profile is full (older operations gone): unknown ({})",
                        why.as_deref().unwrap_or("not reported")
                    )),
                }
                // Level 1 keeps what was slow: the workload seen is the slow part of it.
                if p.level == 1 {
                    s.push_str(&format!(
                        "; level 1 holds only operations slower than {} ms{}: the workload seen is its slow part, not all of it",
                        p.slowms,
                        if p.sample_rate < 1.0 { format!(", {}% of them", (p.sample_rate * 1000.0).round() / 10.0) } else { String::new() }
                    ));
                }
                s
            }
            None => "; profiler settings not readable".to_string(),
        };
        out.push(format!(
            "system.profile of {}: {} on {ns}{span}{state}",
            m.label(),
            crate::util::text::count_of(m.operations, "operation", "operations")
        ));
    }
    out.extend(read.notes.iter().cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::member::{MemberRole, ProfilerState};

    #[test]
    fn a_profiler_whose_size_could_not_be_read_is_unknown_never_not_full() {
        let mut p = ProfilerState::new(1, 100, 1.0);
        p.full_unknown = Some("not authorized: collStats on shop.system.profile".into());
        let read = ProfileRead {
            members: vec![MemberRead {
                host: Some("db1:27017".into()),
                set: Some("rs0".into()),
                role: MemberRole::Primary,
                source: "shop.system.profile".into(),
                operations: 12,
                from: None,
                to: None,
                profiler: Some(p),
                error: None,
            }],
            notes: vec![],
        };
        let n = member_notes(&read, &"shop.orders").join("\n");
        assert!(
            n.contains(
                "whether system.profile is full (older operations gone): unknown (not authorized: collStats on shop.system.profile)"
            ),
            "{n}"
        );
        assert!(n.contains("level 1 holds only operations slower than 100 ms: the workload seen is its slow part"), "{n}");
    }
}
