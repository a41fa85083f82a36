//! What the plan was made from (`plan::basis`): each collection's kind, indexes, default
//! collation and current key, read from the dump's metadata.json files or the deployment
//! (`listCollections`, `listIndexes`). A collection whose indexes cannot be read has none
//! recorded, and a script does not check them.

use crate::model::collection::CollectionOptions;
use crate::model::ShardKey;
use crate::plan::basis::{Basis, CollectionBasis};
use crate::sources::files::read_metadata;
use crate::sources::live::LiveSession;
use std::path::Path;

/// One collection of the plan: its name in the database, and its current key.
pub(super) struct Planned<'a> {
    pub(super) name: &'a str,
    pub(super) current_key: Option<&'a ShardKey>,
}

/// The basis of a plan of `db`, from a dump's database directory or a live session.
pub(super) fn read(
    db: &str,
    planned: &[Planned],
    dump: Option<&Path>,
    session: Option<&LiveSession>,
    rt: &tokio::runtime::Runtime,
) -> Basis {
    let mut collections = Vec::new();
    let listed = session.map(|s| rt.block_on(s.list_collections()).unwrap_or_default()).unwrap_or_default();
    for p in planned {
        let namespace = format!("{db}.{}", p.name);
        let mut c = match (dump, session) {
            (Some(dir), _) => {
                let meta = [".metadata.json", ".metadata.json.gz"]
                    .iter()
                    .map(|ext| dir.join(format!("{}{ext}", p.name)))
                    .find(|f| f.is_file())
                    .and_then(|f| read_metadata(&f).ok());
                match meta {
                    Some(m) => CollectionBasis::new(namespace, "", &m.options, Some(m.indexes)),
                    None => CollectionBasis::new(namespace, "", &CollectionOptions::default(), None),
                }
            }
            (None, Some(s)) => {
                let (typ, options) = listed
                    .iter()
                    .find(|(n, _, _)| n == p.name)
                    .map(|(_, t, o)| (t.clone(), CollectionOptions::from_entry(&bson::doc! {"type": t.clone(), "options": o.clone()})))
                    .unwrap_or_default();
                let indexes = if typ == "view" { Some(Vec::new()) } else { rt.block_on(s.indexes_of(p.name)).ok() };
                CollectionBasis::new(namespace, &typ, &options, indexes)
            }
            (None, None) => continue,
        };
        c.shard_key = p.current_key.cloned();
        collections.push(c);
    }
    Basis { collections }
}
