//! One member of a deployment as a query source: the profiler is per mongod
//! (`system.profile` is a local collection, never replicated: manual "Database
//! Profiler"), so a replica set's workload is the union of what every data-bearing
//! member profiled, and a sharded cluster's that of every member of every shard
//! (mongos has no profiler). A log file is per mongod too.

use serde::Serialize;

/// What a member is in its replica set, as its own `isMaster` and the set's
/// configuration say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum MemberRole {
    Primary,
    Secondary,
    /// `hidden: true` (never in the driver's topology: reached only when listed by
    /// `replSetGetConfig`).
    Hidden,
    /// `secondaryDelaySecs` (5.0+) / `slaveDelay` above 0.
    Delayed,
    Standalone,
    /// A member that did not answer, or a log whose mongod is not known.
    Unknown,
}

impl MemberRole {
    pub(crate) fn as_str(&self) -> &'static str {
        match self {
            MemberRole::Primary => "primary",
            MemberRole::Secondary => "secondary",
            MemberRole::Hidden => "hidden",
            MemberRole::Delayed => "delayed",
            MemberRole::Standalone => "standalone",
            MemberRole::Unknown => "unknown",
        }
    }
}

/// A member's profiler settings and the size of its `system.profile`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProfilerState {
    /// 0 off, 1 slower than `slowms` (sampled at `sampleRate`), 2 every operation.
    pub(crate) level: i32,
    pub(crate) slowms: i64,
    pub(crate) sample_rate: f64,
    /// `system.profile`'s data size and its capped maximum (1 MiB unless resized).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) size_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_size_bytes: Option<u64>,
    /// Entries it holds (every namespace of the database).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) entries: Option<u64>,
    /// Full: the capped collection drops its oldest entries as new ones come, so it
    /// reaches back only to `oldest`. None: not known (`full_unknown` says why), never
    /// taken for "not full".
    pub(crate) full: Option<bool>,
    /// Why `full` is not known ("not authorized: collStats on shop.system.profile").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) full_unknown: Option<String>,
    /// Its oldest and newest entries (ISO 8601), any namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) oldest: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) newest: Option<String>,
}

impl ProfilerState {
    /// The settings alone, before the collection's size and span are read.
    pub(crate) fn new(level: i32, slowms: i64, sample_rate: f64) -> ProfilerState {
        ProfilerState {
            level,
            slowms,
            sample_rate,
            size_bytes: None,
            max_size_bytes: None,
            entries: None,
            full: None,
            full_unknown: None,
            oldest: None,
            newest: None,
        }
    }

    /// A capped collection stays under its maximum by dropping its oldest entries: once
    /// within two average entries of it, it has dropped some (or is about to).
    pub(crate) fn is_full(size: u64, max: u64, entries: u64) -> bool {
        let avg = size.checked_div(entries).unwrap_or(0);
        max > 0 && size + 2 * avg >= max
    }

    /// Why this member's profiler holds few or no operations, when its settings say.
    pub(crate) fn why_few(&self) -> Option<String> {
        match self.level {
            0 => Some("profiling is off (level 0)".to_string()),
            1 if self.sample_rate < 1.0 => Some(format!(
                "level 1 keeps only operations slower than {} ms, {}% of them",
                self.slowms,
                (self.sample_rate * 1000.0).round() / 10.0
            )),
            1 => Some(format!("level 1 keeps only operations slower than {} ms", self.slowms)),
            _ => None,
        }
    }
}

/// Where a read of the documents ran: the member the driver sent it to (its command
/// monitoring names the connection's address), what that member is, and the read
/// preference it was chosen by. JSON `inputs.documents.readOn`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReadOn {
    /// host:port as the driver's topology names it.
    pub(crate) host: String,
    pub(crate) role: MemberRole,
    /// The read preference's mode (`secondaryPreferred` unless the URI sets one).
    pub(crate) read_preference: String,
    /// Said when the member is not the kind the read preference prefers (a secondary
    /// preferred, the primary used).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) fell_back: Option<String>,
}

impl ReadOn {
    /// "127.0.0.1:27018 (secondary)".
    pub(crate) fn label(&self) -> String {
        format!("{} ({})", self.host, self.role.as_str())
    }
}

/// One member (or one log file) as read: where it is, what it is, what it held.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MemberRead {
    /// host:port as the set's configuration names it (a log: its startup line's, when it has one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) host: Option<String>,
    /// The replica set's name, when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) set: Option<String>,
    pub(crate) role: MemberRole,
    /// `<db>.system.profile`, or the log file's path as given.
    pub(crate) source: String,
    /// Operations read from it on the analysed namespace (`plan`: on the database).
    pub(crate) operations: u64,
    /// The first and last of those (ISO 8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) to: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) profiler: Option<ProfilerState>,
    /// Why it was not (fully) read: unreachable, not authorized.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

impl MemberRead {
    /// A log file (not a profiler read live).
    pub(crate) fn is_log(&self) -> bool {
        !self.source.ends_with(".system.profile")
    }

    /// How it is named in the report: "127.0.0.1:27018 (secondary)", a log "mongod.log (db2:27018)".
    pub(crate) fn label(&self) -> String {
        match (&self.host, self.is_log()) {
            (Some(h), false) => format!("{h} ({})", self.role.as_str()),
            (Some(h), true) => format!("{} ({h})", self.source),
            (None, _) => self.source.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capped_profile_within_two_entries_of_its_maximum_is_full() {
        // 1 MiB, entries of about 1 KiB.
        assert!(ProfilerState::is_full(1_047_000, 1_048_576, 1_000));
        assert!(!ProfilerState::is_full(500_000, 1_048_576, 500));
        assert!(!ProfilerState::is_full(0, 1_048_576, 0));
        assert!(!ProfilerState::is_full(10, 0, 1));
    }

    #[test]
    fn few_operations_are_explained_by_the_settings() {
        let s = ProfilerState::new;
        assert_eq!(s(0, 100, 1.0).why_few().unwrap(), "profiling is off (level 0)");
        assert_eq!(s(1, 100, 1.0).why_few().unwrap(), "level 1 keeps only operations slower than 100 ms");
        assert_eq!(s(1, 0, 0.5).why_few().unwrap(), "level 1 keeps only operations slower than 0 ms, 50% of them");
        assert_eq!(s(2, 100, 1.0).why_few(), None);
    }
}
