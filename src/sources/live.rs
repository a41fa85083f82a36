//! A live deployment through the official driver. Read-only: it runs
//! `$collStats`, `listCollections`, `listIndexes`, `explain`, `$sample`, `find`
//! and reads `system.profile` / sampled queries; it never writes, builds an
//! index or changes the profiler.

use crate::analyze::DocumentSource;
use crate::error::input_error;
use crate::model::index::{supporting_index, IndexSpec};
use crate::model::ShardKey;
use crate::report::SupportingIndexReport;
use crate::sources::queries::{add_record, QueryLog};
use crate::sources::sharding::ShardingMetadata;
use anyhow::Result;
use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use indicatif::{ProgressBar, ProgressStyle};

use mongodb::options::{ClientOptions, Hint, ReadPreference, SelectionCriteria};
use mongodb::{Client, Collection, Database};
use std::io::IsTerminal;
use std::time::Duration;

/// Connection settings from the command line.
#[derive(Debug, Clone)]
pub struct LiveOptions {
    pub uri: String,
    pub namespace: String,
    pub server_selection_timeout: Duration,
    pub max_time: Duration,
}

/// A URI with its credentials removed, safe to print.
pub fn redact_uri(uri: &str) -> String {
    match uri.split_once("://") {
        Some((scheme, rest)) => {
            let (hosts_part, tail) = match rest.find('/') {
                Some(i) => (&rest[..i], &rest[i..]),
                None => (rest, ""),
            };
            let hosts = hosts_part.rsplit_once('@').map(|(_, h)| h).unwrap_or(hosts_part);
            // Drop the query string: it may hold credentials or tokens too.
            let path = tail.split('?').next().unwrap_or("");
            format!("{scheme}://{hosts}{path}")
        }
        None => "<uri>".into(),
    }
}

/// Every form of the URI's password (raw and percent-decoded), to scrub from messages.
pub fn secrets_of(uri: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((_, rest)) = uri.split_once("://") {
        let hosts_part = rest.split('/').next().unwrap_or("");
        if let Some((userinfo, _)) = hosts_part.rsplit_once('@') {
            if let Some((_, pw)) = userinfo.split_once(':') {
                if !pw.is_empty() {
                    out.push(pw.to_string());
                    let decoded = percent_decode(pw);
                    if decoded != pw {
                        out.push(decoded);
                    }
                }
            }
        }
    }
    out
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Replace every secret in a message.
pub fn scrub(msg: &str, secrets: &[String]) -> String {
    let mut m = msg.to_string();
    for s in secrets {
        if s.len() >= 2 {
            m = m.replace(s.as_str(), "****");
        }
    }
    m
}

/// A driver error as a one-line user error (exit code 2), with no credentials in it.
fn driver_error(what: &str, e: mongodb::error::Error, secrets: &[String]) -> anyhow::Error {
    use mongodb::error::ErrorKind;
    let detail = match *e.kind {
        ErrorKind::Authentication { ref message, .. } => format!("authentication failed: {message}"),
        ErrorKind::InvalidArgument { ref message, .. } => message.clone(),
        ErrorKind::Command(ref c) => format!("{} ({})", c.message, c.code_name),
        ErrorKind::ServerSelection { .. } => {
            "no server reachable within the server selection timeout (is the host up and the URI right?)".to_string()
        }
        _ => e.to_string(),
    };
    input_error(scrub(&format!("{what}: {}", detail.replace('\n', " ")), secrets))
}

/// A client for a URI, with our timeouts and read preference; plus the URI
/// redacted for display and the secrets to scrub from messages.
async fn connect(uri: &str, timeout: Duration) -> Result<(Client, SelectionCriteria, String, Vec<String>)> {
    let secrets = secrets_of(uri);
    let redacted = redact_uri(uri);
    let mut opts = ClientOptions::parse(uri).await.map_err(|e| driver_error(&format!("invalid URI {redacted}"), e, &secrets))?;
    opts.server_selection_timeout = Some(timeout);
    opts.connect_timeout = Some(timeout);
    opts.app_name.get_or_insert_with(|| "shardkey".to_string());
    if opts.selection_criteria.is_none() {
        opts.selection_criteria = Some(SelectionCriteria::ReadPreference(ReadPreference::SecondaryPreferred { options: None }));
    }
    let read = opts.selection_criteria.clone().expect("set above");
    let client = Client::with_options(opts).map_err(|e| driver_error(&format!("cannot use {redacted}"), e, &secrets))?;
    Ok((client, read, redacted, secrets))
}

pub struct LiveSession {
    client: Client,
    db: Database,
    coll_name: String,
    pub namespace: String,
    pub redacted: String,
    secrets: Vec<String>,
    max_time: Duration,
    read: SelectionCriteria,
}

/// What we learn about the collection before sampling.
#[derive(Debug, Clone)]
pub struct CollectionInfo {
    pub count: u64,
    pub size_bytes: u64,
    pub default_collation: Option<Document>,
    pub indexes: Vec<IndexSpec>,
    pub server_version: (u32, u32),
}

impl CollectionInfo {
    pub fn avg_doc_size(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.size_bytes / self.count
        }
    }
}

/// A progress bar on stderr when it is a terminal; nothing otherwise.
pub fn progress(len: u64, what: &str) -> ProgressBar {
    progress_with(len, what, "{pos}/{len} {per_sec}")
}

/// The same, counting bytes.
pub fn progress_bytes(len: u64, what: &str) -> ProgressBar {
    progress_with(len, what, "{bytes}/{total_bytes} {bytes_per_sec}")
}

fn progress_with(len: u64, what: &str, counts: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(&format!("{{msg:>22}} [{{bar:40}}] {counts} eta {{eta}}"))
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

impl LiveSession {
    pub async fn open(o: &LiveOptions) -> Result<LiveSession> {
        let (db_name, coll_name) = o
            .namespace
            .split_once('.')
            .filter(|(d, c)| !d.is_empty() && !c.is_empty())
            .ok_or_else(|| input_error(format!("--collection {}: expected db.collection", o.namespace)))?;
        let (client, read, redacted, secrets) = connect(&o.uri, o.server_selection_timeout).await?;
        let db = client.database(db_name);
        let s = LiveSession {
            client,
            db,
            coll_name: coll_name.to_string(),
            namespace: o.namespace.clone(),
            redacted,
            secrets,
            max_time: o.max_time,
            read,
        };
        // Fail fast (within the selection timeout) on a wrong host or password.
        s.command(&s.client.database("admin"), doc! {"ping": 1}, "cannot connect to").await?;
        Ok(s)
    }

    /// Sharding metadata for the namespace, from this deployment (mongos) or
    /// from `config_uri` (the config servers). None when it is not sharded.
    pub async fn read_sharding(&self, config_uri: Option<&str>, timeout: Duration) -> Result<Option<ShardingMetadata>> {
        let other;
        let (client, redacted, secrets) = match config_uri {
            Some(u) => {
                let (c, _, r, sec) = connect(u, timeout).await?;
                other = c;
                (&other, r, sec)
            }
            None => (&self.client, self.redacted.clone(), self.secrets.clone()),
        };
        let err = |what: &str, e: mongodb::error::Error| driver_error(&format!("{what} on {redacted}"), e, &secrets);
        let config = client.database("config");
        let find_all = |name: &'static str, filter: Document| {
            let coll: Collection<Document> = config.collection(name);
            let max_time = self.max_time;
            async move {
                let mut cur = coll.find(filter).max_time(max_time).await?;
                let mut out = Vec::new();
                while let Some(d) = cur.try_next().await? {
                    out.push(d);
                }
                Ok::<Vec<Document>, mongodb::error::Error>(out)
            }
        };
        let colls = find_all("collections", doc! {"_id": &self.namespace}).await.map_err(|e| err("reading config.collections", e))?;
        let Some(coll) = colls.into_iter().find(|c| !c.get_bool("dropped").unwrap_or(false)) else {
            return Ok(None);
        };
        let by_uuid = match coll.get("uuid") {
            Some(u) => find_all("chunks", doc! {"uuid": u.clone()}).await.map_err(|e| err("reading config.chunks", e))?,
            None => vec![],
        };
        let by_ns = if by_uuid.is_empty() {
            find_all("chunks", doc! {"ns": &self.namespace}).await.map_err(|e| err("reading config.chunks", e))?
        } else {
            vec![]
        };
        let shards = find_all("shards", doc! {}).await.map_err(|e| err("reading config.shards", e))?;
        let meta = crate::sources::sharding::parse(&coll, &by_uuid, &by_ns, &shards)
            .map_err(|e| input_error(format!("sharding metadata for {}: {e}", self.namespace)))?;
        Ok(Some(meta))
    }

    fn err(&self, what: &str, e: mongodb::error::Error) -> anyhow::Error {
        driver_error(&format!("{what} {}", self.redacted), e, &self.secrets)
    }

    async fn command(&self, db: &Database, mut cmd: Document, what: &str) -> Result<Document> {
        let name = cmd.keys().next().cloned().unwrap_or_default();
        if !matches!(name.as_str(), "ping" | "buildInfo" | "explain") {
            cmd.insert("maxTimeMS", self.max_time.as_millis() as i64);
        }
        db.run_command(cmd).selection_criteria(self.read.clone()).await.map_err(|e| self.err(what, e))
    }

    fn coll(&self) -> Collection<Document> {
        self.db.collection(&self.coll_name)
    }

    async fn server_version(&self) -> Result<(u32, u32)> {
        let bi = self.command(&self.client.database("admin"), doc! {"buildInfo": 1}, "buildInfo on").await?;
        let v = bi.get_str("version").unwrap_or("0.0");
        let mut it = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
        Ok((it.next().unwrap_or(0), it.next().unwrap_or(0)))
    }

    /// Existence, count, size, default collation and indexes. Errors on a
    /// missing collection or a view.
    pub async fn collection_info(&self) -> Result<CollectionInfo> {
        let server_version = self.server_version().await?;
        let lc = self
            .command(&self.db, doc! {"listCollections": 1, "filter": {"name": &self.coll_name}}, "listCollections on")
            .await?;
        let first = lc
            .get_document("cursor")
            .ok()
            .and_then(|c| c.get_array("firstBatch").ok())
            .and_then(|b| b.first())
            .and_then(|d| d.as_document())
            .cloned();
        let Some(entry) = first else {
            return Err(input_error(format!("collection {} does not exist on {}", self.namespace, self.redacted)));
        };
        if entry.get_str("type").unwrap_or("collection") == "view" {
            return Err(input_error(format!("{} is a view; analyse the collection it reads", self.namespace)));
        }
        let default_collation = entry
            .get_document("options")
            .ok()
            .and_then(|o| o.get_document("collation").ok())
            .filter(|c| c.get_str("locale").map(|l| l != "simple").unwrap_or(false))
            .cloned();

        // $collStats sums over shards when run through mongos.
        let mut count = 0u64;
        let mut size = 0u64;
        let mut cur = self
            .coll()
            .aggregate(vec![doc! {"$collStats": {"storageStats": {}}}])
            .max_time(self.max_time)
            .selection_criteria(self.read.clone())
            .await
            .map_err(|e| self.err("$collStats on", e))?;
        while let Some(d) = cur.try_next().await.map_err(|e| self.err("$collStats on", e))? {
            if let Ok(ss) = d.get_document("storageStats") {
                count += num(ss.get("count"));
                size += num(ss.get("size"));
            }
        }

        let li = self.command(&self.db, doc! {"listIndexes": &self.coll_name}, "listIndexes on").await?;
        let mut indexes: Vec<IndexSpec> = li
            .get_document("cursor")
            .ok()
            .and_then(|c| c.get_array("firstBatch").ok())
            .map(|b| b.iter().filter_map(|d| d.as_document()).map(IndexSpec::from_list_indexes).collect())
            .unwrap_or_default();
        for ix in &mut indexes {
            if !ix.sparse && !ix.partial {
                ix.multikey = self.is_multikey(&ix.name).await?;
            }
        }
        Ok(CollectionInfo { count, size_bytes: size, default_collation, indexes, server_version })
    }

    /// listIndexes does not say whether an index is multikey; explain does.
    async fn is_multikey(&self, index: &str) -> Result<Option<bool>> {
        let cmd = doc! {
            "explain": {"find": &self.coll_name, "filter": {}, "hint": index, "limit": 1, "maxTimeMS": self.max_time.as_millis() as i64},
            "verbosity": "queryPlanner",
        };
        let reply = self.command(&self.db, cmd, "explain on").await?;
        fn find(d: &Document) -> Option<bool> {
            if let Ok(b) = d.get_bool("isMultiKey") {
                return Some(b);
            }
            for (_, v) in d {
                match v {
                    Bson::Document(x) => {
                        if let Some(b) = find(x) {
                            return Some(b);
                        }
                    }
                    Bson::Array(a) => {
                        for x in a.iter().filter_map(|x| x.as_document()) {
                            if let Some(b) = find(x) {
                                return Some(b);
                            }
                        }
                    }
                    _ => {}
                }
            }
            None
        }
        Ok(reply.get_document("queryPlanner").ok().and_then(find))
    }

    /// Up to `n` whole documents picked by `$sample` (for proposing candidates).
    pub async fn prescan(&self, n: usize) -> Result<Vec<Document>> {
        let mut cur = self
            .coll()
            .aggregate(vec![doc! {"$sample": {"size": n as i64}}])
            .max_time(self.max_time)
            .selection_criteria(self.read.clone())
            .await
            .map_err(|e| self.err("$sample on", e))?;
        let mut out = Vec::new();
        while let Some(d) = cur.try_next().await.map_err(|e| self.err("$sample on", e))? {
            out.push(d);
        }
        Ok(out)
    }

    /// Stream the sample for the candidates, projected to their fields, into `f`:
    /// - a collection no larger than `sample_size` is read whole, in natural
    ///   (recordId, i.e. insertion) order, with `showRecordId`;
    /// - a sample of at least 5% of the collection: a `$sampleRate` scan in
    ///   natural order. `$sample` would scan and randomly sort the whole
    ///   collection at that size anyway; the scan gives the same uniform sample
    ///   in one read, in insertion order;
    /// - a smaller sample: `$sample`, which then uses a random cursor (cheap),
    ///   in random order (see `stream_in_order`).
    ///
    /// A reader task fetches and decodes batches while the caller analyses the
    /// previous one, so the two cores work in parallel.
    pub fn stream_sample(
        &self,
        rt: &tokio::runtime::Runtime,
        keys: &[ShardKey],
        info: &CollectionInfo,
        sample_size: u64,
        f: &mut dyn FnMut(&Document) -> Result<()>,
    ) -> Result<()> {
        let projection = projection_for(keys);
        match sampling_method(info, sample_size) {
            SamplingMethod::Whole => self.stream_natural(rt, projection, None, info.count.max(1), f),
            SamplingMethod::RateScan(rate) => self.stream_natural(rt, projection, Some(rate), sample_size, f),
            SamplingMethod::Sample => {
                let pipeline = vec![doc! {"$sample": {"size": sample_size as i64}}, doc! {"$project": projection}];
                let coll = self.coll();
                let (max_time, read) = (self.max_time, self.read.clone());
                let open = async move {
                    coll.aggregate(pipeline)
                        .max_time(max_time)
                        .allow_disk_use(true)
                        .batch_size(10_000)
                        .selection_criteria(read)
                        .await
                };
                self.pump(rt, open, sample_size, "sampling ($sample)", "$sample on", f)
            }
        }
    }

    /// When `stream_sample` used `$sample`, a second, insertion-ordered sample for
    /// monotonicity (aggregation cannot return recordIds, so `$sample` loses the
    /// order): a `$sampleRate` scan in natural order of about `order_size` documents.
    /// Returns false when `stream_sample` already was in insertion order.
    pub fn stream_in_order(
        &self,
        rt: &tokio::runtime::Runtime,
        keys: &[ShardKey],
        info: &CollectionInfo,
        sample_size: u64,
        order_size: u64,
        f: &mut dyn FnMut(&Document) -> Result<()>,
    ) -> Result<bool> {
        if sampling_method(info, sample_size) != SamplingMethod::Sample || info.server_version < (4, 4) {
            return Ok(false);
        }
        let rate = (order_size.min(sample_size) as f64 / info.count as f64).min(1.0);
        self.stream_natural(rt, projection_for(keys), Some(rate), order_size.min(sample_size), f)?;
        Ok(true)
    }

    fn stream_natural(
        &self,
        rt: &tokio::runtime::Runtime,
        projection: Document,
        rate: Option<f64>,
        expect: u64,
        f: &mut dyn FnMut(&Document) -> Result<()>,
    ) -> Result<()> {
        let filter = match rate {
            Some(r) => doc! {"$sampleRate": r},
            None => doc! {},
        };
        let coll = self.coll();
        let (max_time, read) = (self.max_time, self.read.clone());
        // Natural order is recordId order on WiredTiger: insertion order.
        let open = async move {
            coll.find(filter)
                .projection(projection)
                .hint(Hint::Keys(doc! {"$natural": 1}))
                .show_record_id(true)
                .max_time(max_time)
                .batch_size(10_000)
                .selection_criteria(read)
                .await
        };
        self.pump(rt, open, expect, "reading in natural order", "find on", f)
    }

    /// Run a cursor on a reader task and feed its documents to `f` in batches.
    fn pump(
        &self,
        rt: &tokio::runtime::Runtime,
        open: impl std::future::Future<Output = mongodb::error::Result<mongodb::Cursor<Document>>> + Send + 'static,
        expect: u64,
        label: &str,
        what: &str,
        f: &mut dyn FnMut(&Document) -> Result<()>,
    ) -> Result<()> {
        const BATCH: usize = 2048;
        let (tx, mut rx) = tokio::sync::mpsc::channel::<mongodb::error::Result<Vec<Document>>>(8);
        let reader = rt.spawn(async move {
            let mut cur = match open.await {
                Ok(c) => c,
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            };
            let mut batch = Vec::with_capacity(BATCH);
            loop {
                match cur.try_next().await {
                    Ok(Some(d)) => {
                        batch.push(d);
                        if batch.len() == BATCH && tx.send(Ok(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))).await.is_err() {
                            return;
                        }
                    }
                    Ok(None) => {
                        if !batch.is_empty() {
                            let _ = tx.send(Ok(batch)).await;
                        }
                        return;
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e)).await;
                        return;
                    }
                }
            }
        });
        let pb = progress(expect, label);
        let result = (|| {
            while let Some(batch) = rx.blocking_recv() {
                let batch = batch.map_err(|e| self.err(what, e))?;
                for d in &batch {
                    f(d)?;
                }
                pb.inc(batch.len() as u64);
            }
            Ok(())
        })();
        pb.finish_and_clear();
        drop(rx);
        let _ = rt.block_on(reader);
        result
    }

    /// `<db>.system.profile` entries for the namespace.
    pub async fn read_profile(&self) -> Result<QueryLog> {
        let coll: Collection<Document> = self.db.collection("system.profile");
        let mut log = QueryLog::default();
        let mut cur = coll
            .find(doc! {"ns": &self.namespace})
            .max_time(self.max_time)
            .selection_criteria(self.read.clone())
            .await
            .map_err(|e| self.err("reading system.profile on", e))?;
        while let Some(d) = cur.try_next().await.map_err(|e| self.err("reading system.profile on", e))? {
            log.records += 1;
            add_record(&mut log, &d);
        }
        Ok(log)
    }

    /// Sampled queries: `$listSampledQueries` (7.0+, on mongos), else the
    /// `config.sampledQueries` / `config.sampledQueriesDiff` collections.
    pub async fn read_sampled(&self) -> Result<(QueryLog, &'static str)> {
        let mut log = QueryLog::default();
        let admin = self.client.database("admin");
        let listed = admin
            .aggregate(vec![doc! {"$listSampledQueries": {"namespace": &self.namespace}}])
            .max_time(self.max_time)
            .await;
        if let Ok(mut cur) = listed {
            let mut ok = true;
            loop {
                match cur.try_next().await {
                    Ok(Some(d)) => {
                        log.records += 1;
                        add_record(&mut log, &d);
                    }
                    Ok(None) => break,
                    Err(_) => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                return Ok((log, "$listSampledQueries"));
            }
            log = QueryLog::default();
        }
        let config = self.client.database("config");
        for name in ["sampledQueries", "sampledQueriesDiff"] {
            let coll: Collection<Document> = config.collection(name);
            let mut cur = coll
                .find(doc! {"ns": &self.namespace})
                .max_time(self.max_time)
                .selection_criteria(self.read.clone())
                .await
                .map_err(|e| self.err(&format!("reading config.{name} on"), e))?;
            while let Some(d) = cur.try_next().await.map_err(|e| self.err(&format!("reading config.{name} on"), e))? {
                log.records += 1;
                add_record(&mut log, &d);
            }
        }
        Ok((log, "config.sampledQueries"))
    }

    /// The server's own `analyzeShardKey` for a key (7.0+).
    pub async fn analyze_shard_key(&self, key: &ShardKey) -> Result<Document> {
        let cmd = doc! {
            "analyzeShardKey": &self.namespace,
            "key": key.to_document(),
            "keyCharacteristics": true,
            "readWriteDistribution": true,
        };
        self.command(&self.client.database("admin"), cmd, "analyzeShardKey on").await
    }
}

fn num(v: Option<&Bson>) -> u64 {
    match v {
        Some(Bson::Int32(i)) => (*i).max(0) as u64,
        Some(Bson::Int64(i)) => (*i).max(0) as u64,
        Some(Bson::Double(f)) => f.max(0.0) as u64,
        _ => 0,
    }
}

/// How a live sample is read (see `LiveSession::stream_sample`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SamplingMethod {
    Whole,
    RateScan(f64),
    Sample,
}

/// The server switches `$sample` from a random cursor to a scan and random
/// sort at 5% of the collection; so do we, to a `$sampleRate` scan.
pub fn sampling_method(info: &CollectionInfo, sample_size: u64) -> SamplingMethod {
    // `$sampleRate` exists from 4.4 on.
    if info.count <= sample_size {
        SamplingMethod::Whole
    } else if sample_size as f64 >= 0.05 * info.count as f64 && info.server_version >= (4, 4) {
        SamplingMethod::RateScan(sample_size as f64 / info.count as f64)
    } else {
        SamplingMethod::Sample
    }
}

/// Project only the candidates' fields (a parent path covers its children).
pub fn projection_for(keys: &[ShardKey]) -> Document {
    let mut paths: Vec<String> = keys.iter().flat_map(|k| k.paths().map(str::to_string)).collect();
    paths.sort();
    paths.dedup();
    let kept: Vec<&String> = paths
        .iter()
        .filter(|p| !paths.iter().any(|q| q != *p && p.starts_with(&format!("{q}."))))
        .collect();
    let mut d = Document::new();
    for p in &kept {
        d.insert(p.as_str(), 1);
    }
    if !kept.iter().any(|p| p.as_str() == "_id") {
        d.insert("_id", 0);
    }
    d
}

/// A live collection as a `DocumentSource`: documents stream from the server
/// during the pass, never all held at once.
pub struct LiveSource<'a> {
    pub name: String,
    pub coll_name: String,
    pub session: &'a LiveSession,
    pub rt: &'a tokio::runtime::Runtime,
    /// The candidates, for the projection.
    pub keys: Vec<ShardKey>,
    pub info: CollectionInfo,
    pub sample_size: u64,
    pub prescan: Vec<Document>,
    pub sharding: Option<ShardingMetadata>,
}

impl DocumentSource for LiveSource<'_> {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn prescan(&mut self, n: usize) -> Result<Vec<Document>> {
        Ok(self.prescan.iter().take(n).cloned().collect())
    }

    fn scan(&mut self, f: &mut dyn FnMut(&Document, usize) -> Result<()>) -> Result<()> {
        self.session.stream_sample(self.rt, &self.keys, &self.info, self.sample_size, &mut |d| f(d, 0))
    }

    fn num_docs_total(&self) -> Option<u64> {
        Some(self.info.count)
    }

    fn avg_doc_size_bytes(&self) -> Option<u64> {
        Some(self.info.avg_doc_size())
    }

    fn supporting_index(&self, key: &ShardKey) -> Option<SupportingIndexReport> {
        Some(supporting_index(key, &self.coll_name, &self.info.indexes))
    }

    fn actual_chunks(&self, key: &ShardKey) -> Option<crate::predict::ActualChunks> {
        self.sharding.as_ref().filter(|m| &m.key == key).map(|m| m.actual_chunks())
    }

    fn scan_in_insertion_order(&mut self, f: &mut dyn FnMut(&Document, usize) -> Result<()>) -> Result<bool> {
        let order_size = crate::sample::RESERVOIR as u64;
        self.session.stream_in_order(self.rt, &self.keys, &self.info, self.sample_size, order_size, &mut |d| f(d, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_redacted_and_passwords_found() {
        let u = "mongodb://alice:s%40cret@db1:27017,db2/app?authSource=admin&tls=true";
        assert_eq!(redact_uri(u), "mongodb://db1:27017,db2/app");
        assert_eq!(secrets_of(u), vec!["s%40cret".to_string(), "s@cret".to_string()]);
        assert_eq!(redact_uri("mongodb+srv://u:p@cluster0.x.net"), "mongodb+srv://cluster0.x.net");
        assert!(secrets_of("mongodb://localhost").is_empty());
        assert_eq!(scrub("bad s@cret here", &secrets_of(u)), "bad **** here");
    }

    #[test]
    fn projection_keeps_parents_only() {
        let keys = [ShardKey::parse("{a: 1, \"a.b\": 1}").err(), None];
        assert!(keys[0].is_some(), "overlapping fields are rejected earlier");
        let keys = [ShardKey::parse("{a: 1}").unwrap(), ShardKey::parse("{\"a.b\": 1, c: 1}").unwrap()];
        assert_eq!(projection_for(&keys), doc! {"a": 1, "c": 1, "_id": 0});
        let keys = [ShardKey::parse("{_id: \"hashed\"}").unwrap()];
        assert_eq!(projection_for(&keys), doc! {"_id": 1});
    }
}
