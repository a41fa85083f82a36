//! The database a plan covers and its collections: a mongodump database directory's files,
//! or a live database's `listCollections` (and then the session that listed them).

use crate::app::request::PlanRequest;
use crate::app::version::Detected;
use crate::error::{input_error, usage_error};
use crate::model::collection::CollectionOptions;
use crate::model::Namespace;
use crate::plan::input::CollectionKind;
use crate::sources::live::{LiveOptions, LiveSession};
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The database planned: its collections, and where they are read.
pub(super) struct Database {
    pub(super) name: String,
    pub(super) targets: Vec<Target>,
    /// `--dump`: the database's directory in the mongodump.
    pub(super) dump_dir: Option<PathBuf>,
    /// Live: the session that listed the collections.
    pub(super) session: Option<LiveSession>,
}

/// One collection to analyse: where its documents are (offline) and what it is.
pub(super) struct Target {
    pub(super) name: String,
    pub(super) kind: CollectionKind,
    pub(super) bson: Option<PathBuf>,
}

/// The database's collections: a dump's files (its prelude.json's version into `detected`),
/// or a live database's listCollections.
pub(super) fn open(req: &PlanRequest, rt: &tokio::runtime::Runtime, detected: &mut Detected) -> Result<Database> {
    let input = &req.input;
    match (&req.dump, &input.uri) {
        (Some(dir), _) => {
            let (db_dir, name) = crate::sources::dump::database_dir(dir, req.database.as_deref())?;
            detected.dump = crate::sources::dump::prelude_version(&db_dir);
            let targets = dump_targets(&db_dir)?;
            Ok(Database { name, targets, dump_dir: Some(db_dir), session: None })
        }
        (None, Some(uri)) => {
            let name = req
                .database
                .clone()
                .ok_or_else(|| usage_error("--uri needs --database DB (or the database in the URI: mongodb://host/DB)"))?;
            let ns = Namespace::parse(&format!("{name}.system.profile"))
                .map_err(|_| usage_error(format!("--database {name}: not a database name")))?;
            let lo = LiveOptions {
                uri: uri.clone(),
                namespace: ns,
                server_selection_timeout: input.server_selection_timeout,
                max_time: input.max_time,
            };
            let session = rt.block_on(LiveSession::open(&lo))?;
            let listed = rt.block_on(session.list_collections())?;
            if listed.is_empty() {
                return Err(rt.block_on(session.no_collection_in(&name)));
            }
            let targets = listed
                .into_iter()
                .map(|(name, typ, options)| {
                    let o = CollectionOptions::from_entry(&bson::doc! {"type": typ.clone(), "options": options});
                    Target { name, kind: kind_of(&typ, &o), bson: None }
                })
                .collect();
            Ok(Database { name, targets, dump_dir: None, session: Some(session) })
        }
        (None, None) => Err(usage_error("give --dump DIR (a mongodump database directory) or --uri URI with --database DB")),
    }
}

fn kind_of(typ: &str, options: &CollectionOptions) -> CollectionKind {
    if typ == "view" || options.view_on.is_some() {
        CollectionKind::View
    } else if typ == "timeseries" || options.time_series.is_some() {
        CollectionKind::TimeSeries
    } else if options.capped {
        CollectionKind::Capped
    } else {
        CollectionKind::Collection
    }
}

/// The collections of a mongodump database directory: `<coll>.bson` and `<coll>.metadata.json`.
fn dump_targets(dir: &Path) -> Result<Vec<Target>> {
    let entries = std::fs::read_dir(dir).map_err(|e| input_error(format!("--dump {}: {e}", dir.display())))?;
    let mut by_name: BTreeMap<String, Target> = BTreeMap::new();
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().to_string();
        let (name, is_bson) = if let Some(n) = file.strip_suffix(".bson").or_else(|| file.strip_suffix(".bson.gz")) {
            (n.to_string(), true)
        } else if let Some(n) = file.strip_suffix(".metadata.json").or_else(|| file.strip_suffix(".metadata.json.gz")) {
            (n.to_string(), false)
        } else {
            continue;
        };
        if name.starts_with("system.") {
            continue;
        }
        let t = by_name.entry(name.clone()).or_insert(Target { name, kind: CollectionKind::Collection, bson: None });
        if is_bson {
            t.bson = Some(e.path());
        } else {
            let m = crate::sources::files::read_metadata(&e.path())?;
            t.kind = kind_of("", &m.options);
        }
    }
    if by_name.is_empty() {
        return Err(input_error(format!(
            "--dump {}: no <collection>.bson or .metadata.json files (a mongodump database directory)",
            dir.display()
        )));
    }
    Ok(by_name.into_values().collect())
}
