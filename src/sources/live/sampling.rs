//! The document sample: projected to the candidates' fields, streamed in
//! batches from a reader task while the caller analyses the previous batch.

use super::collection::CollectionInfo;
use super::session::LiveSession;
use crate::model::{DocBody, SampledDoc, ShardKey};
use crate::sources::Batches;
use crate::util::progress::progress;
use anyhow::Result;
use bson::{doc, Document, RawDocumentBuf};
use mongodb::options::Hint;

impl LiveSession {
    /// Stream the sample for the candidates, projected to their fields, into `f`:
    /// - a collection no larger than `sample_size` is read whole, in natural
    ///   (recordId, i.e. insertion) order, with `showRecordId`;
    /// - from 4.4 on, any smaller sample: a `$sampleRate` scan in natural order,
    ///   uniform per document (see `sampling_method`), in insertion order;
    /// - before 4.4: `$sample`, in random order (see `stream_in_order`).
    ///
    /// A reader task fetches and decodes batches while the caller analyses the
    /// previous one, so the two cores work in parallel.
    pub fn stream_sample(
        &self,
        rt: &tokio::runtime::Runtime,
        keys: &[ShardKey],
        info: &CollectionInfo,
        sample_size: u64,
        f: &mut Batches,
    ) -> Result<()> {
        let projection = projection_for(keys);
        match sampling_method(info, sample_size) {
            SamplingMethod::Whole => self.stream_natural(rt, info, projection, None, info.count.max(1), f),
            SamplingMethod::RateScan(rate) => self.stream_natural(rt, info, projection, Some(rate), sample_size, f),
            SamplingMethod::Sample => {
                let pipeline = vec![doc! {"$sample": {"size": sample_size as i64}}, doc! {"$project": projection}];
                let coll = self.coll();
                let (max_time, read) = (self.max_time, self.read.clone());
                let open = async move {
                    coll.aggregate(pipeline)
                        .with_type::<RawDocumentBuf>()
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
        f: &mut Batches,
    ) -> Result<bool> {
        if sampling_method(info, sample_size) != SamplingMethod::Sample || info.server_version < (4, 4) {
            return Ok(false);
        }
        let rate = (order_size.min(sample_size) as f64 / info.count as f64).min(1.0);
        self.stream_natural(rt, info, projection_for(keys), Some(rate), order_size.min(sample_size), f)?;
        Ok(true)
    }

    fn stream_natural(
        &self,
        rt: &tokio::runtime::Runtime,
        info: &CollectionInfo,
        projection: Document,
        rate: Option<f64>,
        expect: u64,
        f: &mut Batches,
    ) -> Result<()> {
        let open = self.natural_find::<RawDocumentBuf>(info, projection, rate);
        self.pump(rt, open, expect, "reading in natural order", "find on", f)
    }

    /// The natural-order `find` of `stream_natural`, as a cursor of `T`. Natural order
    /// is recordId order on WiredTiger: insertion order. A time-series collection is a
    /// view over its buckets, which refuses `showRecordId` and a `$natural` hint: its
    /// measurements come unhinted, in bucket order (each bucket's `_id` starts with its
    /// earliest time, so about time order within each series).
    fn natural_find<T: Send + Sync + serde::de::DeserializeOwned + 'static>(
        &self,
        info: &CollectionInfo,
        projection: Document,
        rate: Option<f64>,
    ) -> impl std::future::Future<Output = mongodb::error::Result<mongodb::Cursor<T>>> + Send + 'static {
        let view = info.options.time_series.is_some();
        let filter = match rate {
            Some(r) => rate_filter(r, info.server_version, view),
            None => doc! {},
        };
        let coll = self.db.collection::<T>(&self.coll_name);
        let (max_time, read) = (self.max_time, self.read.clone());
        async move {
            let find = coll.find(filter).projection(projection).max_time(max_time).batch_size(10_000).selection_criteria(read);
            if view {
                find.await
            } else {
                find.hint(Hint::Keys(doc! {"$natural": 1})).show_record_id(true).await
            }
        }
    }

    /// The benchmark's I/O floor (docs/performance.md): the very `find` a whole or
    /// `$sampleRate` sample makes, read as raw BSON batches and decoded not at all.
    /// Returns the documents read; None when the sample would use `$sample`.
    pub fn read_raw(
        &self,
        rt: &tokio::runtime::Runtime,
        keys: &[ShardKey],
        info: &CollectionInfo,
        sample_size: u64,
    ) -> Result<Option<u64>> {
        let rate = match sampling_method(info, sample_size) {
            SamplingMethod::Whole => None,
            SamplingMethod::RateScan(r) => Some(r),
            SamplingMethod::Sample => return Ok(None),
        };
        let open = self.natural_find::<bson::RawDocumentBuf>(info, projection_for(keys), rate);
        rt.block_on(async {
            let mut cur = open.await.map_err(|e| self.err("find on", e))?;
            let mut n = 0u64;
            while cur.advance().await.map_err(|e| self.err("find on", e))? {
                n += 1;
            }
            Ok(Some(n))
        })
    }

    /// Run a cursor on a reader task and feed its documents to `f` in batches.
    fn pump(
        &self,
        rt: &tokio::runtime::Runtime,
        open: impl std::future::Future<Output = mongodb::error::Result<mongodb::Cursor<RawDocumentBuf>>> + Send + 'static,
        expect: u64,
        label: &str,
        what: &str,
        f: &mut Batches,
    ) -> Result<()> {
        const BATCH: usize = 2048;
        // None: the server did not answer within the deadline.
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Option<mongodb::error::Result<Vec<SampledDoc>>>>(8);
        let wait = super::session::deadline(self.max_time);
        let reader = rt.spawn(async move {
            let mut cur = match tokio::time::timeout(wait, open).await {
                Ok(Ok(c)) => c,
                Ok(Err(e)) => {
                    let _ = tx.send(Some(Err(e))).await;
                    return;
                }
                Err(_) => {
                    let _ = tx.send(None).await;
                    return;
                }
            };
            let mut batch = Vec::with_capacity(BATCH);
            loop {
                let Ok(next) = tokio::time::timeout(wait, cur.advance()).await else {
                    let _ = tx.send(None).await;
                    return;
                };
                // Raw BSON, copied out of the reply: the sample looks up only the key paths.
                // Its top level is checked here, as decoding it would have: element sizes
                // first (cheap), each element parsed only when they do not settle it.
                let next = next.and_then(|more| {
                    if !more {
                        return Ok(None);
                    }
                    let doc = cur.current();
                    if !crate::bsonx::path::sizes_hold(doc) {
                        for el in doc {
                            el?;
                        }
                    }
                    Ok(Some(doc.to_raw_document_buf()))
                });
                match next {
                    // The server projected the documents: their size is the collection's average (`facts`).
                    Ok(Some(doc)) => {
                        batch.push(SampledDoc { body: DocBody::Raw(doc), bson_size: 0 });
                        if batch.len() == BATCH
                            && tx.send(Some(Ok(std::mem::replace(&mut batch, Vec::with_capacity(BATCH))))).await.is_err()
                        {
                            return;
                        }
                    }
                    Ok(None) => {
                        if !batch.is_empty() {
                            let _ = tx.send(Some(Ok(batch))).await;
                        }
                        return;
                    }
                    Err(e) => {
                        let _ = tx.send(Some(Err(e))).await;
                        return;
                    }
                }
            }
        });
        let pb = progress(expect, label);
        let result = (|| {
            while let Some(batch) = rx.blocking_recv() {
                let batch = batch.ok_or_else(|| self.no_answer(what))?.map_err(|e| self.err(what, e))?;
                f(&batch)?;
                pb.inc(batch.len() as u64);
            }
            Ok(())
        })();
        pb.finish_and_clear();
        drop(rx);
        // A reader task that panicked closed its channel early: never a short sample.
        if let Err(e) = rt.block_on(reader) {
            if e.is_panic() && result.is_ok() {
                return Err(anyhow::anyhow!("the cursor reader failed while reading {}", self.redacted));
            }
        }
        result
    }
}

/// How a live sample is read (see `LiveSession::stream_sample`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum SamplingMethod {
    Whole,
    RateScan(f64),
    Sample,
}

/// Every sample from 4.4 on is one scan that keeps each document with probability r
/// (`rate_filter`: a hash threshold from 5.0, else `$sampleRate`). `$sampleRate` is
/// `{$match: {$expr: {$lt: [{$rand: {}}, r]}}}` (the manual's `$sampleRate` page), an
/// independent coin per document, so every document is in with probability r however
/// storage lays it out (a Bernoulli sample of expected size `sample_size`). `$sample` under
/// 5% of the collection reads a pseudo-random cursor (the manual's `$sample` "Behavior"),
/// which picks from storage, not from documents: measured on 6.0.5, documents inserted
/// recently (8.49% of the collection) were 0.18% of its sample (issue 47). The scan reads
/// every page but returns few, so it costs about one collection scan. Before 4.4 (no
/// `$sampleRate`) `$sample` is all there is.
pub(crate) fn sampling_method(info: &CollectionInfo, sample_size: u64) -> SamplingMethod {
    if info.count <= sample_size {
        SamplingMethod::Whole
    } else if info.server_version >= (4, 4) {
        SamplingMethod::RateScan(sample_size as f64 / info.count as f64)
    } else {
        SamplingMethod::Sample
    }
}

/// The filter that keeps each document with probability `r`. From 5.0, a threshold on
/// `$toHashedIndexKey` of `_id` (the hashed index's hash64, md5-based: SERVER-49214, used by
/// 5.0's resharding to sample): `_id` is unique and its hash does not depend on where the
/// document sits in storage, so each document is in with probability `r` as with
/// `$sampleRate`, and the same data gives the same sample on every run (a DBA who reruns a
/// plan gets the same keys: with `$sampleRate`, keys within a point of each other traded
/// places between runs). 4.4, and a time-series view (whose measurements' `_id` the
/// application may leave out), keep `$sampleRate`'s coin per document.
fn rate_filter(r: f64, server_version: (u32, u32), view: bool) -> Document {
    if server_version >= (5, 0) && !view {
        // hash64 values are uniform over the i64 range: keep those below the r-quantile.
        let threshold = (i64::MIN as f64 + r.clamp(0.0, 1.0) * 18_446_744_073_709_551_616.0) as i64;
        doc! {"$expr": {"$lt": [{"$toHashedIndexKey": "$_id"}, threshold]}}
    } else {
        doc! {"$sampleRate": r}
    }
}

/// Project only the candidates' fields (a parent path covers its children).
pub(crate) fn projection_for(keys: &[ShardKey]) -> Document {
    let mut paths: Vec<String> = keys.iter().flat_map(|k| k.paths().map(str::to_string)).collect();
    paths.sort();
    paths.dedup();
    let kept: Vec<&String> = paths.iter().filter(|p| !paths.iter().any(|q| q != *p && p.starts_with(&format!("{q}.")))).collect();
    let mut d = Document::new();
    for p in &kept {
        d.insert(p.as_str(), 1);
    }
    // `_id` stays (the default): an ObjectId carries the creation time the insert-order
    // analysis needs (metrics::insert_order).
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_samples_use_the_uniform_rate_scan_from_4_4() {
        let info = |count, server_version| CollectionInfo {
            count,
            server_version,
            size_bytes: 0,
            index_bytes: 0,
            default_collation: None,
            indexes: vec![],
            options: Default::default(),
        };
        assert_eq!(sampling_method(&info(4_000_000, (6, 0)), 100_000), SamplingMethod::RateScan(0.025));
        assert_eq!(sampling_method(&info(4_000_000, (4, 2)), 100_000), SamplingMethod::Sample);
        assert_eq!(sampling_method(&info(50_000, (6, 0)), 100_000), SamplingMethod::Whole);
    }

    #[test]
    fn the_rate_filter_is_a_hash_threshold_from_5_0() {
        // 5% of the i64 range above its minimum, by hand: -2^63 + 0.05 * 2^64.
        let f = rate_filter(0.05, (6, 0), false);
        let t = f.get_document("$expr").unwrap().get_array("$lt").unwrap()[1].as_i64().unwrap();
        assert!((t - (-8_301_034_833_169_298_227i64)).abs() < 4096, "{t}");
        assert_eq!(
            rate_filter(1.0, (6, 0), false).get_document("$expr").unwrap().get_array("$lt").unwrap()[1],
            bson::Bson::Int64(i64::MAX)
        );
        assert_eq!(rate_filter(0.05, (4, 4), false), doc! {"$sampleRate": 0.05});
        assert_eq!(rate_filter(0.05, (6, 0), true), doc! {"$sampleRate": 0.05});
    }

    #[test]
    fn projection_keeps_parents_only() {
        let keys = [ShardKey::parse("{a: 1}").unwrap(), ShardKey::parse("{\"a.b\": 1, c: 1}").unwrap()];
        assert_eq!(projection_for(&keys), doc! {"a": 1, "c": 1});
        let keys = [ShardKey::parse("{_id: \"hashed\"}").unwrap()];
        assert_eq!(projection_for(&keys), doc! {"_id": 1});
    }
}
