//! The one place shardkey changes a server's settings (`shardkey sample`, behind
//! `--change-server-settings`): uniform query sampling for a while, then the previous
//! settings back.
//! - 7.0+: `configureQueryAnalyzer` (mode "full", samplesPerSecond) on the namespace,
//!   then the previous mode ("off" when there was none); the samples stay in
//!   `config.sampledQueries` (they expire after 7 days).
//! - 4.0–6.x: the database profiler at level 1 with `slowms: 0` and `sampleRate`, then the
//!   previous level, slowms, sampleRate (and filter, 4.4.2+). `slowms` and `sampleRate` are
//!   per mongod: while sampling, that fraction of all its operations is also written to
//!   its log. Run against the primary.

use super::profiler::ProfileSizes;
// app::sample names the settings here, where it changes them.
pub(crate) use super::profiler::ProfilerSettings;
use super::session::LiveSession;
use anyhow::Result;
use bson::{doc, Document};
use mongodb::options::{ReadPreference, SelectionCriteria};

/// The `configureQueryAnalyzer` command for a namespace (7.0+).
pub(crate) fn configure_query_analyzer(ns: &str, mode: &str, samples_per_second: Option<f64>) -> Document {
    let mut c = doc! {"configureQueryAnalyzer": ns, "mode": mode};
    if let Some(s) = samples_per_second {
        c.insert("samplesPerSecond", s);
    }
    c
}

/// The mean BSON size of profiler entries (what a capped profiler's size is counted in).
pub(crate) fn mean_bson_size(entries: &[Document]) -> Option<u64> {
    let bytes: u64 = entries.iter().map(|d| crate::bsonx::bson_size(d).unwrap_or(0) as u64).sum();
    bytes.checked_div(entries.len() as u64)
}

fn primary() -> SelectionCriteria {
    SelectionCriteria::ReadPreference(ReadPreference::Primary)
}

impl LiveSession {
    pub(crate) async fn version(&self) -> Result<(u32, u32)> {
        self.server_version().await
    }

    async fn on_primary(&self, db: &str, cmd: Document, what: &str) -> Result<Document> {
        let db = self.client.database(db);
        self.answer(what, async { db.run_command(cmd).selection_criteria(primary()).await }).await
    }

    /// The database's profiler settings (`{profile: -1}` reads, changes nothing).
    pub(crate) async fn profiler_settings(&self) -> Result<ProfilerSettings> {
        let r = self.on_primary(self.namespace.db(), doc! {"profile": -1}, "reading the profiler settings of").await?;
        Ok(ProfilerSettings::from_reply(&r))
    }

    /// WRITES: set the database's profiler.
    pub(crate) async fn set_profiler(&self, s: &ProfilerSettings) -> Result<()> {
        self.on_primary(self.namespace.db(), s.command(), "setting the profiler of").await.map(|_| ())
    }

    /// The namespace's current query analyzer configuration (7.0+), from `config.queryAnalyzers`.
    pub(crate) async fn query_analyzer(&self) -> Result<Option<(String, Option<f64>)>> {
        let coll = self.client.database("config").collection::<Document>("queryAnalyzers");
        let ns = self.namespace.to_string();
        let d = self
            .answer("reading config.queryAnalyzers on", async { coll.find_one(doc! {"_id": &ns}).selection_criteria(primary()).await })
            .await?;
        Ok(d.map(|d| (d.get_str("mode").unwrap_or("off").to_string(), d.get("samplesPerSecond").and_then(crate::bsonx::number::as_f64))))
    }

    /// WRITES: `configureQueryAnalyzer` on the namespace (7.0+).
    pub(crate) async fn set_query_analyzer(&self, mode: &str, samples_per_second: Option<f64>) -> Result<()> {
        let cmd = configure_query_analyzer(&self.namespace.to_string(), mode, samples_per_second);
        self.on_primary("admin", cmd, "configureQueryAnalyzer on").await.map(|_| ())
    }

    /// The primary's profiler after a window: its oldest entry's time (any namespace) and
    /// its size, or why the size could not be read.
    pub(crate) async fn profiler_after_window(&self) -> (Option<bson::DateTime>, std::result::Result<ProfileSizes, String>) {
        let coll = self.db.collection::<Document>("system.profile");
        let first = coll.find_one(doc! {}).sort(doc! {"$natural": 1}).projection(doc! {"ts": 1}).selection_criteria(primary());
        let oldest = self.answer("reading system.profile on", async { first.await }).await.ok().flatten();
        let oldest = oldest.and_then(|d| d.get_datetime("ts").ok().copied());
        (oldest, self.profile_sizes(&primary()).await)
    }

    /// The namespace's profiler entries from `since` (milliseconds since the epoch), in order.
    pub(crate) async fn profile_entries_since(&self, since_millis: i64) -> Result<Vec<Document>> {
        let coll = self.db.collection::<Document>("system.profile");
        let filter = doc! {"ns": self.namespace.to_string(), "ts": {"$gte": bson::DateTime::from_millis(since_millis)}};
        let cursor = coll.find(filter).sort(doc! {"$natural": 1}).max_time(self.max_time).selection_criteria(primary());
        let mut out = Vec::new();
        self.for_each_doc(cursor, "reading system.profile on", |d| out.push(d)).await?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_through_the_profile_reply() {
        // A 6.0 reply to {profile: -1}.
        let reply = doc! {"was": 0, "slowms": 100, "sampleRate": 1.0, "ok": 1.0};
        let s = ProfilerSettings::from_reply(&reply);
        assert_eq!(s, ProfilerSettings { level: 0, slowms: 100, sample_rate: 1.0, filter: None });
        assert_eq!(s.command(), doc! {"profile": 0, "slowms": 100i64, "sampleRate": 1.0});
        let with_filter =
            ProfilerSettings::from_reply(&doc! {"was": 1, "slowms": 50, "sampleRate": 0.5, "filter": {"op": "query"}, "note": "..."});
        assert_eq!(with_filter.command().get_document("filter").unwrap(), &doc! {"op": "query"});
    }

    #[test]
    fn the_query_analyzer_command_has_the_7_0_shape() {
        assert_eq!(
            configure_query_analyzer("shop.orders", "full", Some(10.0)),
            doc! {"configureQueryAnalyzer": "shop.orders", "mode": "full", "samplesPerSecond": 10.0}
        );
        assert_eq!(configure_query_analyzer("shop.orders", "off", None), doc! {"configureQueryAnalyzer": "shop.orders", "mode": "off"});
    }
}
