//! The command line: `args` holds the clap definitions; this module turns them into the
//! typed requests `app` runs (flag checks included). Nothing below this module sees clap.

mod args;
mod connection;
mod man;

use crate::app::{
    AnalyzeRequest, CheckRequest, GivenChoice, InputRequest, PlanRequest, QuerySource, Request, SampleRequest, WorkloadRequest,
};
use crate::error::{usage_error, Exit, Outcome};
use crate::model::version::ServerVersion;
use crate::model::{relaxed, Namespace, ShardKey};
use anyhow::Result;
pub use args::Cli;
use args::{ColorArg, Command, ConnectionArgs, InputArgs};
use clap::Parser;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Parse the process's arguments. Help and version are printed here (exit 0);
/// a clap error becomes one line on stderr (exit 2).
pub fn parse() -> Result<Cli, Exit> {
    Cli::try_parse().map_err(|e| {
        use clap::error::ErrorKind;
        match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                let _ = e.print();
                Exit::Success
            }
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                let _ = e.print();
                Exit::UserError
            }
            _ => {
                let text = e.to_string();
                let first = text.lines().next().unwrap_or("invalid arguments").trim_start_matches("error: ");
                let secrets = crate::util::uri::secrets_in_environment();
                eprintln!("shardkey: {} (see shardkey --help)", crate::util::uri::scrub(&crate::error::printable(first), &secrets));
                Exit::UserError
            }
        }
    })
}

impl Cli {
    /// Check every flag, run the request, write its report to `out`.
    pub fn run(self, out: &mut dyn Write) -> Result<Outcome> {
        let req = self.into_request()?;
        crate::app::run(&req, out)
    }

    /// The typed request, every flag checked.
    pub(crate) fn into_request(self) -> Result<Request> {
        let color = match self.color {
            ColorArg::Auto => crate::util::term::ColorMode::Auto,
            ColorArg::Always => crate::util::term::ColorMode::Always,
            ColorArg::Never => crate::util::term::ColorMode::Never,
        };
        crate::util::term::set(color, self.quiet, self.verbose);
        Ok(match self.command {
            Command::Completions { shell } => {
                use clap::CommandFactory;
                let mut buf = Vec::new();
                clap_complete::generate(shell, &mut Cli::command(), "shardkey", &mut buf);
                Request::Text(String::from_utf8_lossy(&buf).into_owned())
            }
            Command::Man { page, out_dir } => {
                let pages = man::pages()?;
                match (page, out_dir) {
                    (_, Some(dir)) => Request::Files(pages.into_iter().map(|(name, roff)| (dir.join(name), roff)).collect()),
                    (Some(p), None) => {
                        let want = format!("shardkey-{p}.1");
                        let names: Vec<&str> =
                            pages.iter().skip(1).map(|x| x.0.trim_start_matches("shardkey-").trim_end_matches(".1")).collect();
                        let Some((_, roff)) = pages.iter().find(|x| x.0 == want) else {
                            return Err(usage_error(format!("man {p}: no such subcommand (one of: {})", names.join(", "))));
                        };
                        Request::Text(roff.clone())
                    }
                    (None, None) => Request::Text(pages[0].1.clone()),
                }
            }
            Command::Analyze(a) => {
                if a.fail_under.is_some_and(|s| s > 100) {
                    return Err(usage_error("--fail-under takes a score from 0 to 100"));
                }
                let keys = a.keys.iter().map(|k| parse_key(k)).collect::<Result<Vec<_>>>()?;
                let format = match (a.format, a.wide) {
                    (args::FormatArg::Table, true) => crate::report::Format::WideTable,
                    (f, false) => f.into(),
                    (_, true) => return Err(usage_error("--wide shapes the table output: leave out --format, or use --format table")),
                };
                let mut input = input_request(&a.input)?;
                input.residency = a
                    .residency
                    .as_deref()
                    .map(crate::model::residency::Residency::parse)
                    .transpose()
                    .map_err(|e| usage_error(format!("--residency {e}")))?;
                Request::Analyze(AnalyzeRequest { input, keys, compare_server: a.compare_server, format, fail_under: a.fail_under })
            }
            Command::Sample(a) => {
                let uri = connection::connection_uri(&a.conn, true, false)?
                    .ok_or_else(|| usage_error("give --uri URI or --host HOST (or set MONGODB_URI)"))?;
                let namespace = Namespace::parse(&a.collection)
                    .map_err(|_| usage_error(format!("--collection {}: expected db.collection", a.collection)))?;
                if !(a.rate > 0.0 && a.rate <= 1.0) {
                    return Err(usage_error("--rate takes a share of operations above 0 and at most 1, e.g. 0.01"));
                }
                if !(a.samples_per_second > 0.0 && a.samples_per_second <= 50.0) {
                    return Err(usage_error("--samples-per-second takes a rate above 0 and at most 50 (the server's limit)"));
                }
                let duration = parse_duration(&a.duration)?;
                let out = a.out.clone().unwrap_or_else(|| PathBuf::from(format!("shardkey-sample-{namespace}.ndjson")));
                Request::Sample(SampleRequest {
                    uri,
                    namespace,
                    rate: a.rate,
                    samples_per_second: a.samples_per_second,
                    duration,
                    out,
                    change_server_settings: a.change_server_settings,
                    server_selection_timeout: Duration::from_secs(a.server_selection_timeout.max(1)),
                    max_time: Duration::from_millis(a.max_time_ms.max(1)),
                })
            }
            Command::Plan(p) => {
                let target_version = p.target_version.as_deref().map(target_version).transpose()?;
                let as_input = InputArgs {
                    docs: None,
                    indexes: None,
                    conn: ConnectionArgs::default(),
                    queries: p.queries.clone(),
                    collection: None,
                    collation: None,
                    chunk_size: p.chunk_size,
                    // The plan resolves its version first and gives it to every analysis.
                    target_version: None,
                    shards: p.shards,
                    total_docs: None,
                    sample_size: p.sample_size,
                    config_uri: None,
                    server_selection_timeout: p.server_selection_timeout,
                    max_time_ms: p.max_time_ms,
                    top: 5,
                    redact: false,
                    memory_limit: p.memory_limit.clone(),
                    since: p.since.clone(),
                    until: p.until.clone(),
                };
                let mut input = input_request(&as_input)?;
                // A host list names no database: said before a password is asked for.
                if p.dump.is_none() && p.database.is_none() && (p.conn.host.is_some() || p.conn.port.is_some()) {
                    let flag = if p.conn.host.is_some() { "--host" } else { "--port" };
                    return Err(usage_error(format!("{flag} needs --database DB (a host names no database)")));
                }
                input.uri = connection::connection_uri(&p.conn, p.dump.is_none(), false)?;
                // `--uri mongodb://host/shop`: the URI's database, as mongosh takes it.
                let uri_db = uri_database(input.uri.as_deref());
                if p.dump.is_none() && p.database.is_none() && uri_db.is_none() && input.uri.is_some() {
                    return Err(usage_error(format!(
                        "{} needs --database DB (or the database in the URI: mongodb://host/DB)",
                        connection::uri_flag(&p.conn)
                    )));
                }
                let shard_size_bytes = match p.shard_size.as_deref() {
                    Some(t) => Some(
                        parse_size(t)
                            .filter(|b| *b > 0)
                            .ok_or_else(|| usage_error(format!("--shard-size {t}: give a size such as 500G or 2T")))?,
                    ),
                    None => None,
                };
                if p.shard_ops.is_some_and(|x| !(x > 0.0 && x.is_finite())) {
                    return Err(usage_error("--shard-ops takes a positive number of operations per second"));
                }
                let mut given = Vec::new();
                for k in &p.keys {
                    given.push(GivenChoice::parse_key(k).map_err(usage_error)?);
                }
                for u in p.unsharded.iter().map(|u| u.trim()) {
                    if u.is_empty() {
                        return Err(usage_error("--unsharded: name the collection (db.coll, or a collection of the plan's database)"));
                    }
                    given.push(GivenChoice { origin: "--unsharded", collection: u.to_string(), key: None });
                }
                Request::Plan(PlanRequest {
                    input,
                    database: p.database.or(uri_db.filter(|_| p.dump.is_none())),
                    dump: p.dump,
                    target_version,
                    shard_size_bytes,
                    shard_ops_per_second: p.shard_ops,
                    given,
                    format: p.format.into(),
                })
            }
            Command::Workload(w) => Request::Workload(WorkloadRequest {
                queries: w.queries,
                namespace: w.namespace,
                window: window(w.since.as_deref(), w.until.as_deref())?,
                since_text: w.since,
                until_text: w.until,
                top: w.top,
                sort: w.sort.into(),
                format: w.format.into(),
            }),
            Command::Check(c) => Request::Check(CheckRequest {
                // `--init` needs no input (and must not prompt for a password); a dump is the
                // deployment, not $MONGODB_URI.
                input: match (c.init, &c.dump) {
                    (true, _) => InputRequest { uri: None, ..input_request_unchecked(&c.input) },
                    (false, Some(_)) => {
                        InputRequest { uri: connection::connection_uri(&c.input.conn, false, false)?, ..input_request(&c.input)? }
                    }
                    (false, None) => input_request(&c.input)?,
                },
                dump: c.dump,
                policy: match (c.policy, c.init) {
                    (Some(p), _) => p,
                    (None, true) => PathBuf::from("shardkey.toml"),
                    (None, false) => find_policy()?,
                },
                init: c.init,
                baseline: c.baseline,
                changed_files: c.changed_files,
                write_baseline: c.write_baseline,
                output_file: c.output_file,
                format: c.format.into(),
            }),
        })
    }
}

/// `shardkey.toml` in the current directory or the nearest parent that has one (as cargo finds Cargo.toml).
fn find_policy() -> Result<PathBuf> {
    let cwd = std::env::current_dir()?;
    // Shown relative to the current directory: shardkey.toml, ../shardkey.toml, ...
    let mut rel = PathBuf::new();
    for dir in cwd.ancestors() {
        if dir.join("shardkey.toml").is_file() {
            return Ok(rel.join("shardkey.toml"));
        }
        rel.push("..");
    }
    Err(usage_error(format!(
        "no shardkey.toml in {} or any parent directory: give --policy FILE (shardkey check --init prints one)",
        cwd.display()
    )))
}

/// A duration: 90, 90s, 10m, 1h.
fn parse_duration(text: &str) -> Result<Duration> {
    let t = text.trim();
    let (n, unit) = t.find(|c: char| !c.is_ascii_digit()).map(|i| t.split_at(i)).unwrap_or((t, "s"));
    let secs = match (n.parse::<u64>(), unit) {
        (Ok(n), "s") => Some(n),
        (Ok(n), "m") => n.checked_mul(60),
        (Ok(n), "h") => n.checked_mul(3600),
        _ => None,
    };
    match secs {
        Some(s) if s > 0 && s <= 7 * 86_400 => Ok(Duration::from_secs(s)),
        _ => Err(usage_error(format!("--duration {text}: expected a duration from 1s to 7 days, such as 30s, 10m or 1h"))),
    }
}

/// A time for --since/--until: RFC 3339, or a date (midnight UTC), in milliseconds since the epoch.
fn parse_time(flag: &str, text: &str) -> Result<i64> {
    let t = text.trim();
    let full = if t.len() == 10 { format!("{t}T00:00:00Z") } else { t.to_string() };
    bson::DateTime::parse_rfc3339_str(&full)
        .map(|d| d.timestamp_millis())
        .map_err(|_| usage_error(format!("{flag} {text}: expected a time such as 2024-06-01 or 2024-06-01T10:00:00Z")))
}

fn window(since: Option<&str>, until: Option<&str>) -> Result<(Option<i64>, Option<i64>)> {
    let s = since.map(|t| parse_time("--since", t)).transpose()?;
    let u = until.map(|t| parse_time("--until", t)).transpose()?;
    if let (Some(a), Some(b)) = (s, u) {
        if a >= b {
            return Err(usage_error("--since must be before --until"));
        }
    }
    Ok((s, u))
}

fn parse_key(text: &str) -> Result<ShardKey> {
    ShardKey::parse(text).map_err(|e| usage_error(e.to_string()))
}

fn parse_collation(text: &str) -> Result<bson::Document> {
    let v = relaxed::parse(text).map_err(|e| usage_error(format!("--collation {text}: {e}")))?;
    match bson::Bson::try_from(v) {
        Ok(bson::Bson::Document(d)) => {
            if !d.is_empty() && d.get_str("locale").is_err() {
                return Err(usage_error(format!("--collation {text}: a collation needs a locale")));
            }
            Ok(d)
        }
        _ => Err(usage_error(format!("--collation {text}: expected an object such as {{locale: \"en\", strength: 2}}"))),
    }
}

fn input_request_unchecked(a: &InputArgs) -> InputRequest {
    InputRequest {
        docs: a.docs.clone(),
        indexes: a.indexes.clone(),
        uri: None,
        queries: a.queries.iter().map(|q| QuerySource::parse(q)).collect(),
        namespace: None,
        collation: None,
        chunk_size_bytes: a.chunk_size.saturating_mul(1024 * 1024),
        shards: a.shards,
        total_docs: a.total_docs,
        sample_size: a.sample_size,
        config_uri: a.config_uri.clone(),
        server_selection_timeout: Duration::from_secs(a.server_selection_timeout.max(1)),
        max_time: Duration::from_millis(a.max_time_ms.max(1)),
        top: a.top,
        redact: a.redact,
        memory_limit: parse_size(&a.memory_limit).unwrap_or(crate::app::DEFAULT_MEMORY_LIMIT),
        window: (None, None),
        residency: None,
        rules_version: None,
    }
}

/// `--target-version 7.0` (or `8`): major and minor.
fn target_version(v: &str) -> Result<(u32, u32)> {
    let mut it = v.split('.').map(|x| x.trim().parse::<u32>());
    match (it.next(), it.next()) {
        (Some(Ok(a)), Some(Ok(b))) => Ok((a, b)),
        (Some(Ok(a)), None) => Ok((a, 0)),
        _ => Err(usage_error(format!("--target-version {v}: expected a version such as 7.0 or 8.0"))),
    }
}

/// `512M`, `2G`, `1048576`: bytes (K, M, G, T in powers of 1024).
fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mult) = match t.chars().last()?.to_ascii_uppercase() {
        'K' => (&t[..t.len() - 1], 1u64 << 10),
        'M' => (&t[..t.len() - 1], 1 << 20),
        'G' => (&t[..t.len() - 1], 1 << 30),
        'T' => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

/// The URI's default database (`mongodb://host/shop` → `shop`), as mongosh takes it.
fn uri_database(uri: Option<&str>) -> Option<String> {
    uri.and_then(crate::util::uri::ConnectionString::parse).and_then(|c| c.database())
}

/// `--collection`: `db.coll`, or a bare collection name in the URI's database
/// (`--uri mongodb://host/shop --collection orders` is `shop.orders`, as in mongosh).
fn collection_namespace(text: &str, uri: Option<&str>) -> Result<Namespace> {
    let uri_db = uri_database(uri);
    let full = match uri_db {
        Some(db) if !text.contains('.') => format!("{db}.{text}"),
        _ => text.to_string(),
    };
    Namespace::parse(&full).map_err(|_| {
        usage_error(format!("--collection {text}: expected db.collection (or a collection name with the database in the URI)"))
    })
}

fn input_request(a: &InputArgs) -> Result<InputRequest> {
    if a.chunk_size == 0 {
        return Err(usage_error("--chunk-size must be at least 1 MiB"));
    }
    // The server allows chunk sizes of 1 to 1024 MiB.
    if a.chunk_size > 1024 {
        return Err(usage_error("--chunk-size takes 1 to 1024 MiB (the range MongoDB allows)"));
    }
    if a.sample_size == 0 {
        return Err(usage_error("--sample-size must be at least 1"));
    }
    if parse_size(&a.memory_limit).is_none_or(|b| b < (64 << 20)) {
        return Err(usage_error(format!("--memory-limit {}: give a size of at least 64M, such as 512M or 2G", a.memory_limit)));
    }
    if a.shards.is_some_and(|n| n == 0 || n > 10_000) {
        return Err(usage_error("--shards takes a number of shards from 1 to 10000"));
    }
    let mut r = input_request_unchecked(a);
    r.rules_version = a.target_version.as_deref().map(target_version).transpose()?.map(|(major, minor)| ServerVersion::given(major, minor));
    // `--docs -` and `--queries -` read standard input: the password cannot come from there too.
    let stdin_busy = a.docs.as_deref().is_some_and(|d| d == std::path::Path::new("-")) || a.queries.iter().any(|q| q == "-");
    r.uri = connection::connection_uri(&a.conn, a.docs.is_none(), stdin_busy)?;
    r.window = window(a.since.as_deref(), a.until.as_deref())?;
    r.collation = a.collation.as_deref().map(parse_collation).transpose()?.filter(|d| !d.is_empty());
    r.namespace = a.collection.as_deref().map(|ns| collection_namespace(ns, r.uri.as_deref())).transpose()?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Format;

    fn request(args: &[&str]) -> Result<Request> {
        let mut all = vec!["shardkey"];
        all.extend_from_slice(args);
        Cli::try_parse_from(all).map_err(|e| anyhow::anyhow!(e.to_string()))?.into_request()
    }

    #[test]
    fn flags_become_a_typed_request() {
        let r = request(&[
            "analyze",
            "--docs",
            "d.json",
            "--queries",
            "profile",
            "--queries",
            "q.log",
            "--key",
            "{a: 1}",
            "--collection",
            "x.y",
            "--format",
            "json",
        ])
        .unwrap();
        let Request::Analyze(a) = r else { panic!("analyze") };
        assert_eq!(a.input.queries, vec![QuerySource::Profile, QuerySource::File("q.log".into())]);
        assert_eq!(a.keys[0].to_string(), "{a: 1}");
        assert_eq!(a.input.namespace.unwrap().to_string(), "x.y");
        assert_eq!(a.input.chunk_size_bytes, 128 * 1024 * 1024);
        assert_eq!(a.format, Format::Json);
        assert_eq!(a.input.memory_limit, 1 << 30);
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("99999999999T"), None, "overflow");
    }

    #[test]
    fn every_command_that_connects_takes_mongoshs_flags() {
        let conn = ["--host", "db1:27018", "-u", "dba", "-p", "pw-1", "--authenticationDatabase", "admin"];
        let want = "mongodb://dba:pw-1@db1:27018/?authSource=admin";
        let with = |first: &[&'static str]| -> Vec<&'static str> { [first, &conn[..]].concat() };
        let Request::Sample(s) = request(&with(&["sample", "--collection", "a.b"])).unwrap() else { panic!("sample") };
        assert_eq!(s.uri, want);
        let Request::Plan(p) = request(&with(&["plan", "--database", "shop"])).unwrap() else { panic!("plan") };
        assert_eq!(p.input.uri.as_deref(), Some(want));
        let Request::Check(c) = request(&with(&["check", "--policy", "p.toml"])).unwrap() else { panic!("check") };
        assert_eq!(c.input.uri.as_deref(), Some(want));
        let Request::Analyze(a) = request(&with(&["analyze", "--collection", "a.b"])).unwrap() else { panic!("analyze") };
        assert_eq!(a.input.uri.as_deref(), Some(want));
        // the URI's database counts for a bare collection name, and for plan
        let Request::Analyze(a) = request(&["analyze", "--uri", "mongodb://h/shop?authSource=admin", "--collection", "orders"]).unwrap()
        else {
            panic!("analyze")
        };
        assert_eq!(a.input.namespace.unwrap().to_string(), "shop.orders");
        let Request::Analyze(a) = request(&["analyze", "--uri", "mongodb://h/shop", "--collection", "app.orders"]).unwrap() else {
            panic!("analyze")
        };
        assert_eq!(a.input.namespace.unwrap().to_string(), "app.orders", "db.coll wins");
        let Request::Plan(p) = request(&["plan", "--uri", "mongodb://h/shop"]).unwrap() else { panic!("plan") };
        assert_eq!(p.database.as_deref(), Some("shop"));
        let e = request(&["analyze", "--uri", "mongodb://h/", "--collection", "orders"]).unwrap_err();
        assert!(e.to_string().contains("database in the URI"), "{e}");
        // a file input and a deployment are one or the other
        assert!(request(&["analyze", "--docs", "d.json", "--host", "h"]).is_err());
        assert!(request(&["plan", "--dump", "dump/shop", "--host", "h"]).is_err());
    }

    #[test]
    fn plan_keys_and_unsharded_collections_are_given_choices() {
        let Request::Plan(p) = request(&[
            "plan",
            "--dump",
            "d",
            "--key",
            "shop.orders={customerId: 1, _id: 1}",
            "--key",
            "a=b={x: 1}",
            "--unsharded",
            "events",
        ])
        .unwrap() else {
            panic!("plan")
        };
        let key = |s: &str| Some(ShardKey::parse(s).unwrap());
        assert_eq!(
            p.given,
            [
                GivenChoice { origin: "--key", collection: "shop.orders".into(), key: key("{customerId: 1, _id: 1}") },
                // The key starts after the first '=' that opens a document.
                GivenChoice { origin: "--key", collection: "a=b".into(), key: key("{x: 1}") },
                GivenChoice { origin: "--unsharded", collection: "events".into(), key: None },
            ]
        );
        for (arg, needle) in
            [("orders", "expected COLL={field: 1, ...}"), ("={a: 1}", "name the collection"), ("o={a: -1}", "--key o={a: -1}: ")]
        {
            let e = request(&["plan", "--dump", "d", "--key", arg]).unwrap_err();
            assert!(e.to_string().contains(needle), "{arg}: {e}");
            assert_eq!(crate::error::exit_code(&e), Exit::UserError, "{arg}");
        }
    }

    #[test]
    fn bad_flags_are_usage_errors() {
        for (args, needle) in [
            (&["analyze", "--docs", "d", "--chunk-size", "0"][..], "--chunk-size"),
            (&["analyze", "--docs", "d", "--chunk-size", "17592186044416"][..], "1 to 1024 MiB"),
            (&["analyze", "--docs", "d", "--sample-size", "0"][..], "--sample-size"),
            (&["analyze", "--docs", "d", "--shards", "0"][..], "--shards"),
            (&["analyze", "--docs", "d", "--fail-under", "101"][..], "--fail-under"),
            (&["analyze", "--docs", "d", "--key", "{a: -1}"][..], "descending"),
            (&["analyze", "--docs", "d", "--collection", "nodot"][..], "expected db.collection"),
            (&["analyze", "--docs", "d", "--collation", "{strength: 2}"][..], "needs a locale"),
            (&["analyze", "--docs", "d", "--memory-limit", "lots"][..], "--memory-limit"),
            (&["analyze", "--docs", "d", "--memory-limit", "1M"][..], "at least 64M"),
        ] {
            let e = request(args).unwrap_err();
            assert!(e.to_string().contains(needle), "{args:?}: {e}");
            assert_eq!(crate::error::exit_code(&e), Exit::UserError, "{args:?}");
        }
    }
}
