//! What a collection is, beyond its documents: its options as `listCollections` (live) or a
//! mongodump `<coll>.metadata.json` (offline) gives them, and its indexes. The validity
//! rules (`crate::rules`) read these facts.

use super::index::{truthy, IndexSpec};
use anyhow::{anyhow, Result};
use bson::{Bson, Document};

/// A time-series collection's fields (`timeseries` option, 5.0+).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TimeSeries {
    pub(crate) time_field: String,
    pub(crate) meta_field: Option<String>,
    pub(crate) granularity: Option<String>,
}

/// What kind of namespace it is, and the options that decide whether it can be sharded.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CollectionOptions {
    /// `type: "view"`: the namespace it reads (`viewOn`).
    pub(crate) view_on: Option<String>,
    pub(crate) capped: bool,
    pub(crate) time_series: Option<TimeSeries>,
    /// A clustered collection (5.3+: `clusteredIndex`).
    pub(crate) clustered: bool,
    /// Its clustered index as an index (`{_id: 1}`, unique), when the options give it.
    pub(crate) clustered_index: Option<IndexSpec>,
    /// The default collation, when not simple.
    pub(crate) collation: Option<Document>,
    /// The collection has a validator (documents must match it).
    pub(crate) validator: bool,
    /// The top-level fields its `$jsonSchema` validator requires (`required`), in its order.
    pub(crate) validator_required: Vec<String>,
}

impl CollectionOptions {
    /// From one `listCollections` entry (or a metadata.json document: same `type` and `options`).
    pub(crate) fn from_entry(entry: &Document) -> CollectionOptions {
        let o = entry.get_document("options").cloned().unwrap_or_default();
        let is_view = entry.get_str("type").is_ok_and(|t| t == "view") || o.contains_key("viewOn");
        CollectionOptions {
            view_on: if is_view { Some(o.get_str("viewOn").unwrap_or("").to_string()) } else { None },
            capped: truthy(o.get("capped")),
            time_series: o.get_document("timeseries").ok().map(|t| TimeSeries {
                time_field: t.get_str("timeField").unwrap_or("").to_string(),
                meta_field: t.get_str("metaField").ok().map(str::to_string),
                granularity: t.get_str("granularity").ok().map(str::to_string),
            }),
            clustered: o.get("clusteredIndex").is_some_and(|c| !matches!(c, Bson::Boolean(false))),
            clustered_index: match o.get("clusteredIndex") {
                Some(Bson::Document(c)) => {
                    let mut ix = IndexSpec::from_list_indexes(c);
                    ix.unique = true; // the server requires unique: true
                    if ix.name.is_empty() {
                        ix.name = "_id_".into();
                    }
                    Some(ix)
                }
                // `clusteredIndex: true` (time-series buckets): not a user index.
                _ => None,
            },
            collation: o.get_document("collation").ok().filter(|c| c.get_str("locale").is_ok_and(|l| l != "simple")).cloned(),
            validator: o.get_document("validator").is_ok_and(|v| !v.is_empty()),
            validator_required: o
                .get_document("validator")
                .and_then(|v| v.get_document("$jsonSchema"))
                .and_then(|s| s.get_array("required"))
                .map(|r| r.iter().filter_map(|f| f.as_str().map(str::to_string)).collect())
                .unwrap_or_default(),
        }
    }
}

/// A mongodump `<coll>.metadata.json`: the collection's options and index specs, in
/// canonical Extended JSON.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DumpMetadata {
    pub(crate) options: CollectionOptions,
    pub(crate) indexes: Vec<IndexSpec>,
}

impl DumpMetadata {
    /// Parse the text of a metadata.json file, or the output of `db.coll.getIndexes()` (an
    /// array of index specs, relaxed or canonical Extended JSON; options then unknown).
    pub(crate) fn parse(text: &str) -> Result<DumpMetadata> {
        let v: serde_json::Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|e| anyhow!("not JSON: {e}"))?;
        let b = Bson::try_from(v).map_err(|e| anyhow!("not Extended JSON: {e}"))?;
        let (entry, list) = match b {
            Bson::Document(d) => {
                let list = d.get_array("indexes").cloned().unwrap_or_default();
                (d, list)
            }
            Bson::Array(a) => (Document::new(), a),
            _ => return Err(anyhow!("expected a metadata.json object or an array of index specs")),
        };
        let mut indexes = Vec::with_capacity(list.len());
        for ix in &list {
            let d = ix.as_document().ok_or_else(|| anyhow!("an index spec is not an object"))?;
            if d.get_document("key").is_err() {
                return Err(anyhow!("an index spec has no key"));
            }
            indexes.push(IndexSpec::from_list_indexes(d));
        }
        Ok(DumpMetadata { options: CollectionOptions::from_entry(&entry), indexes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As mongodump 100.x writes it (canonical Extended JSON), from a 6.0.5 collection with
    /// two unique indexes, one of them compound.
    const ACCOUNTS: &str = r#"{"indexes":[{"v":{"$numberInt":"2"},"key":{"_id":{"$numberInt":"1"}},"name":"_id_"},{"v":{"$numberInt":"2"},"key":{"email":{"$numberInt":"1"}},"name":"email_1","unique":true},{"v":{"$numberInt":"2"},"key":{"tenantId":{"$numberInt":"1"},"username":{"$numberInt":"1"}},"name":"tenantId_1_username_1","unique":true}],"uuid":"d5e05f7ae68c4f698e73e2f1ed0d3729","collectionName":"accounts","type":"collection"}"#;

    #[test]
    fn a_dump_metadata_file_gives_indexes_and_options() {
        let m = DumpMetadata::parse(ACCOUNTS).unwrap();
        let names: Vec<(&str, bool)> = m.indexes.iter().map(|i| (i.name.as_str(), i.unique)).collect();
        assert_eq!(names, [("_id_", true), ("email_1", true), ("tenantId_1_username_1", true)]);
        assert_eq!(m.options, CollectionOptions::default());
    }

    #[test]
    fn options_of_capped_time_series_and_views() {
        let ts = DumpMetadata::parse(r#"{"indexes":[],"collectionName":"m","type":"timeseries","options":{"timeseries":{"timeField":"ts","metaField":"meta","granularity":"seconds","bucketMaxSpanSeconds":{"$numberInt":"3600"}}}}"#).unwrap();
        assert_eq!(
            ts.options.time_series,
            Some(TimeSeries { time_field: "ts".into(), meta_field: Some("meta".into()), granularity: Some("seconds".into()) })
        );
        let capped = DumpMetadata::parse(r#"{"indexes":[],"options":{"capped":true,"size":{"$numberInt":"1048576"}}}"#).unwrap();
        assert!(capped.options.capped);
        let view = DumpMetadata::parse(r#"{"type":"view","options":{"viewOn":"accounts","pipeline":[]}}"#).unwrap();
        assert_eq!(view.options.view_on.as_deref(), Some("accounts"));
        let coll = DumpMetadata::parse(r#"{"options":{"collation":{"locale":"fr","strength":{"$numberInt":"2"}}}}"#).unwrap();
        assert!(coll.options.collation.is_some());
        // listCollections' options of a clustered collection on mongod 6.0.5.
        let clustered = DumpMetadata::parse(
            r#"{"indexes":[],"options":{"clusteredIndex":{"v":{"$numberInt":"2"},"key":{"_id":{"$numberInt":"1"}},"name":"_id_","unique":true}}}"#,
        )
        .unwrap();
        assert!(clustered.options.clustered);
        let ix = clustered.options.clustered_index.unwrap();
        assert_eq!((ix.name.as_str(), ix.unique, ix.key), ("_id_", true, bson::doc! {"_id": 1}));
    }

    #[test]
    fn get_indexes_output_reads_as_index_specs() {
        let m =
            DumpMetadata::parse(r#"[{"v":2,"key":{"_id":1},"name":"_id_"},{"v":2,"key":{"sku":"hashed"},"name":"sku_hashed"}]"#).unwrap();
        assert_eq!(m.indexes.len(), 2);
        assert!(!m.indexes[1].unique);
        assert!(DumpMetadata::parse("[1]").is_err());
        assert!(DumpMetadata::parse("{").is_err());
    }
}
