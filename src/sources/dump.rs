//! A mongodump output directory: `dump/<db>/<coll>.bson` with `<coll>.metadata.json`, and
//! (mongo-tools 100.12+) a `prelude.json` naming the server's version. `--dump` takes the
//! database's directory or the dump's root.

use crate::error::input_error;
use crate::model::version::{ServerVersion, VersionFrom};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Does the directory hold a collection's files (`.bson`, `.metadata.json`, gzipped or not)?
fn holds_collections(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            let n = n.strip_suffix(".gz").unwrap_or(&n);
            (n.ends_with(".bson") || n.ends_with(".metadata.json")) && !n.starts_with("system.")
        })
    })
}

/// The subdirectories of a dump's root that hold collections: its databases.
fn databases_in(root: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(root)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().is_dir() && holds_collections(&e.path()))
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The database directory `--dump DIR` names, and the database's name: DIR itself when it
/// holds collections, else `DIR/<database>` of a dump's root. A directory, or a database,
/// that is not there is an error naming the closest one that is ("did you mean").
pub(crate) fn database_dir(dir: &Path, database: Option<&str>) -> Result<(PathBuf, String)> {
    if !dir.is_dir() {
        let near = dir.parent().zip(dir.file_name()).and_then(|(parent, name)| {
            let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
            let names: Vec<String> = std::fs::read_dir(parent)
                .ok()?
                .flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect();
            crate::util::text::closest(&name.to_string_lossy(), &names).map(|n| dir.with_file_name(n))
        });
        let hint = near.map(|p| format!(": did you mean {}?", p.display())).unwrap_or_default();
        let what = if dir.exists() { "not a directory" } else { "no such directory" };
        return Err(input_error(format!("--dump {}: {what}{hint}", dir.display())));
    }
    let own_name = || dir.canonicalize().ok()?.file_name().map(|n| n.to_string_lossy().to_string());
    if holds_collections(dir) {
        let db = database.map(str::to_string).or_else(own_name).unwrap_or_default();
        return Ok((dir.to_path_buf(), db));
    }
    let dbs = databases_in(dir);
    let chosen = match (database, dbs.as_slice()) {
        (Some(db), _) if dbs.iter().any(|d| d == db) => db.to_string(),
        (Some(db), []) => {
            return Err(input_error(format!(
            "--dump {}: no collection of database {db} (no <collection>.bson or .metadata.json files; a mongodump directory holds them)",
            dir.display()
        )))
        }
        (Some(db), _) => {
            let hint = match crate::util::text::closest(db, &dbs) {
                Some(near) => format!("did you mean {near}?"),
                None => format!("it holds {}", dbs.join(", ")),
            };
            return Err(input_error(format!("--dump {}: no database {db} in this dump: {hint}", dir.display())));
        }
        (None, [one]) => one.clone(),
        (None, []) => {
            return Err(input_error(format!(
                "--dump {}: no <collection>.bson or .metadata.json files (a mongodump database directory, or a dump holding one)",
                dir.display()
            )))
        }
        (None, many) => {
            return Err(input_error(format!("--dump {}: holds the databases {}: give --database DB", dir.display(), many.join(", "))))
        }
    };
    Ok((dir.join(&chosen), chosen))
}

/// The version mongodump wrote in `prelude.json` (`{"ServerVersion": "6.0.5", "ToolVersion":
/// ...}`; gzipped with `--gzip`): at the dump's root, or in the database's directory when it
/// dumped one database (`--db`) (mongodb/mongo-tools 8fa3cfc `mongodump/mongodump.go`
/// `DumpPreludeMetadata`). Older mongodumps write none, and metadata.json holds no version.
pub(crate) fn prelude_version(db_dir: &Path) -> Option<ServerVersion> {
    let mut places = vec![db_dir.to_path_buf()];
    if let Some(parent) = db_dir.canonicalize().ok().and_then(|d| d.parent().map(Path::to_path_buf)) {
        places.push(parent);
    }
    for dir in places {
        for name in ["prelude.json", "prelude.json.gz"] {
            let path = dir.join(name);
            let Ok(bytes) = std::fs::read(&path) else { continue };
            let text = if bytes.starts_with(&[0x1f, 0x8b]) {
                use std::io::Read;
                let mut t = String::new();
                if flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_string(&mut t).is_err() {
                    continue;
                }
                t
            } else {
                String::from_utf8_lossy(&bytes).into_owned()
            };
            let v: Option<serde_json::Value> = serde_json::from_str(&text).ok();
            let version = v.as_ref().and_then(|v| v.get("ServerVersion")?.as_str());
            if let Some(sv) = version.and_then(|t| ServerVersion::parse(t, VersionFrom::DumpPrelude(path.display().to_string()))) {
                return Some(sv);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_root_a_database_and_the_prelude() {
        let root = tempfile::tempdir().unwrap();
        let saas = root.path().join("saas");
        std::fs::create_dir(&saas).unwrap();
        std::fs::write(saas.join("tenants.bson"), b"").unwrap();
        std::fs::create_dir(root.path().join("admin")).unwrap();
        std::fs::write(root.path().join("admin").join("system.version.bson"), b"").unwrap();
        // The root with one database: that one; named: that one; misspelt: did you mean.
        assert_eq!(database_dir(root.path(), None).unwrap(), (saas.clone(), "saas".to_string()));
        assert_eq!(database_dir(root.path(), Some("saas")).unwrap().1, "saas");
        let e = database_dir(root.path(), Some("Saas")).unwrap_err().to_string();
        assert!(e.ends_with("no database Saas in this dump: did you mean saas?"), "{e}");
        let e = database_dir(root.path(), Some("nosuchdb")).unwrap_err().to_string();
        assert!(e.ends_with("no database nosuchdb in this dump: it holds saas"), "{e}");
        // The database's own directory, misspelt.
        let e = database_dir(&root.path().join("sass"), None).unwrap_err().to_string();
        assert!(e.ends_with(&format!("no such directory: did you mean {}?", saas.display())), "{e}");
        // An empty directory holds no collection.
        let empty = root.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert!(database_dir(&empty, None).unwrap_err().to_string().contains("no <collection>.bson"));

        assert_eq!(prelude_version(&saas), None);
        std::fs::write(root.path().join("prelude.json"), r#"{"ServerVersion":"6.0.5","ToolVersion":"100.12.0"}"#).unwrap();
        let v = prelude_version(&saas).unwrap();
        assert_eq!((v.major, v.minor, v.text.as_str()), (6, 0, "6.0.5"));
        assert!(v.to_string().starts_with("MongoDB 6.0.5, from the mongodump's prelude.json ("), "{v}");
        // "unknown": mongodump could not ask the server.
        std::fs::write(saas.join("prelude.json"), r#"{"ServerVersion":"unknown","ToolVersion":"100.12.0"}"#).unwrap();
        assert_eq!(prelude_version(&saas).map(|v| v.text), Some("6.0.5".into()));
    }
}
