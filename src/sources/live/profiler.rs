//! A database profiler as read: its settings (`{profile: -1}`) and `system.profile`'s size.
//! Read per member (`members.rs`) and around a sampling window (`query_sampling.rs`).

use crate::model::member::ProfilerState;
use bson::{doc, Document};

/// The profiler settings `{profile: -1}` reports.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProfilerSettings {
    pub(crate) level: i32,
    pub(crate) slowms: i64,
    pub(crate) sample_rate: f64,
    /// 4.4.2+: a filter replacing slowms/sampleRate; restored as it was.
    pub(crate) filter: Option<Document>,
}

impl ProfilerSettings {
    /// The command that sets these settings on a database.
    pub(crate) fn command(&self) -> Document {
        let mut c = doc! {"profile": self.level, "slowms": self.slowms, "sampleRate": self.sample_rate};
        if let Some(f) = &self.filter {
            c.insert("filter", f.clone());
        }
        c
    }

    /// From the reply of `{profile: -1}`.
    pub(crate) fn from_reply(d: &Document) -> ProfilerSettings {
        let num = |k: &str| d.get(k).and_then(crate::bsonx::number::as_f64).unwrap_or(f64::NAN);
        ProfilerSettings {
            level: num("was") as i32,
            slowms: if num("slowms").is_nan() { 100 } else { num("slowms") as i64 },
            sample_rate: if num("sampleRate").is_nan() { 1.0 } else { num("sampleRate") },
            filter: d.get_document("filter").ok().cloned(),
        }
    }
}

/// `system.profile`'s size as read: data bytes, capped maximum, entries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ProfileSizes {
    pub(crate) bytes: Option<u64>,
    pub(crate) max_bytes: Option<u64>,
    pub(crate) entries: Option<u64>,
}

impl ProfileSizes {
    /// Full (dropping its oldest entries), when all three are known.
    pub(crate) fn full(&self) -> Option<bool> {
        Some(ProfilerState::is_full(self.bytes?, self.max_bytes?, self.entries?))
    }
}
