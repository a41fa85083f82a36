//! The MongoDB version a plan or an analysis follows, and where it was read: rules such as
//! "before 5.1 a `$lookup` target must stay unsharded" and "moveCollection needs 8.0" follow
//! it, so the report says where it came from.

use serde::Serialize;
use std::fmt;

/// Where the version was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum VersionFrom {
    /// `--target-version`, given by the user.
    Flag,
    /// `buildInfo` of the deployment it connected to (a mongod or a replica set).
    Server,
    /// `buildInfo` of each shard through mongos (the lowest of them).
    Shards,
    /// A mongod 4.4+ JSON log's "Build Info" line (id 23403): the file's name.
    LogBuildInfo(String),
    /// A 2.2–4.2 text log's startup line "db version v4.0.10": the file's name.
    LogStartup(String),
    /// mongodump's `prelude.json` (`ServerVersion`): the file's path.
    DumpPrelude(String),
}

/// A server version, as the server prints it ("6.0.5"), and where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerVersion {
    pub(crate) major: u32,
    pub(crate) minor: u32,
    /// As read: "6.0.5", "4.0.10", "8.0.12"; "7.0" from `--target-version`.
    pub(crate) text: String,
    pub(crate) from: VersionFrom,
}

impl ServerVersion {
    /// "6.0.5", "7.0", "4.0.10-rc0": at least major.minor as numbers; None for anything else
    /// ("unknown", which mongodump writes when it could not ask).
    pub(crate) fn parse(text: &str, from: VersionFrom) -> Option<ServerVersion> {
        let text = text.trim();
        let mut it = text.split(['.', '-']);
        let major = it.next()?.parse::<u32>().ok()?;
        let minor = it.next().unwrap_or("0").parse::<u32>().ok()?;
        Some(ServerVersion { major, minor, text: text.to_string(), from })
    }

    /// A version the user gave (`--target-version 7.0`).
    pub(crate) fn given(major: u32, minor: u32) -> ServerVersion {
        ServerVersion { major, minor, text: format!("{major}.{minor}"), from: VersionFrom::Flag }
    }

    pub(crate) fn major_minor(&self) -> (u32, u32) {
        (self.major, self.minor)
    }

    /// Where it came from, in words: "the log's build-info line (mongod.log)".
    pub(crate) fn source_words(&self) -> String {
        match &self.from {
            VersionFrom::Flag => "--target-version".to_string(),
            VersionFrom::Server => "the server (buildInfo)".to_string(),
            VersionFrom::Shards => "the shards (buildInfo on each, the lowest)".to_string(),
            VersionFrom::LogBuildInfo(f) => format!("the log's build-info line ({f})"),
            VersionFrom::LogStartup(f) => format!("the log's startup line \"db version v{}\" ({f})", self.text),
            VersionFrom::DumpPrelude(f) => format!("the mongodump's prelude.json ({f})"),
        }
    }
}

impl fmt::Display for ServerVersion {
    /// "MongoDB 6.0.5, from the log's build-info line (mongod.log)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MongoDB {}, from {}", self.text, self.source_words())
    }
}

/// The version a plan follows, as reported (JSON `version`, and the report's header).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VersionReport {
    /// As read ("6.0.5") or given ("7.0"); absent when not known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) version: Option<String>,
    /// Where it came from: `flag`, `server`, `shards`, `log`, `dump` or `unknown`.
    pub(crate) source: &'static str,
    /// In words: "MongoDB 6.0.5, from the log's build-info line (mongod.log)".
    pub(crate) words: String,
}

impl VersionReport {
    /// What the report says without a version.
    pub(crate) fn unknown() -> VersionReport {
        VersionReport {
            version: None,
            source: "unknown",
            words:
                "MongoDB version not known (give --target-version X.Y): moveCollection (8.0) and sharded $lookup targets (5.1) are not used"
                    .into(),
        }
    }

    /// A version given as major.minor, from nowhere the report can name (a plan built in a
    /// test); `unknown` without one.
    pub(crate) fn given(v: Option<(u32, u32)>) -> VersionReport {
        match v {
            Some((major, minor)) => {
                let v = ServerVersion { major, minor, text: format!("{major}.{minor}"), from: VersionFrom::Flag };
                VersionReport::of(&v, v.to_string())
            }
            None => VersionReport::unknown(),
        }
    }

    /// `v` as followed, with `words` saying where it came from.
    pub(crate) fn of(v: &ServerVersion, words: String) -> VersionReport {
        let source = match v.from {
            VersionFrom::Flag => "flag",
            VersionFrom::Server => "server",
            VersionFrom::Shards => "shards",
            VersionFrom::LogBuildInfo(_) | VersionFrom::LogStartup(_) => "log",
            VersionFrom::DumpPrelude(_) => "dump",
        };
        VersionReport { version: Some(v.text.clone()), source, words }
    }
}

/// The lowest of several versions read (members' logs written across an upgrade): the
/// commands must work on every member.
pub(crate) fn lowest(versions: &[ServerVersion]) -> Option<&ServerVersion> {
    versions.iter().min_by_key(|v| numbers(&v.text))
}

/// A version's numbers, for ordering: "6.0.14" after "6.0.5".
pub(crate) fn numbers(text: &str) -> Vec<u32> {
    text.split(['.', '-']).map_while(|p| p.parse().ok()).collect()
}

/// The version a 4.4+ JSON log line names when it is the "Build Info" line (id 23403):
/// `"attr":{"buildInfo":{"version":"6.0.5",...}}`.
pub(crate) fn from_build_info_line(line: &str) -> Option<String> {
    if !line.contains("\"id\":23403") {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    Some(v.get("attr")?.get("buildInfo")?.get("version")?.as_str()?.to_string())
}

/// The version a 2.2–4.2 text log's startup line names: "[initandlisten] db version v4.0.10"
/// (2.2 adds ", pdfile version 4.5"; a 3.6 mongos writes the line too).
pub(crate) fn from_startup_line(line: &str) -> Option<String> {
    let rest = line.split_once("] db version v")?.1;
    let v: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-').collect();
    ServerVersion::parse(&v, VersionFrom::Flag).map(|_| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines as real servers wrote them (../shared/real-logs: hatchet's 6.0.11 JSON log,
    /// mtools' 2.2.5, 2.6.0 and 4.0.10 text logs, a 3.6.0 mongos).
    #[test]
    fn versions_from_real_log_lines() {
        let json = r#"{"t":{"$date":"2023-09-23T16:24:35.770-04:00"},"s":"I",  "c":"CONTROL",  "id":23403,   "ctx":"initandlisten","msg":"Build Info","attr":{"buildInfo":{"version":"6.0.11","gitVersion":"f797f841eaf1759c770271ae00c88b92b2766eed","modules":["enterprise"],"allocator":"system","environment":{"distarch":"aarch64","target_arch":"aarch64"}}}}"#;
        assert_eq!(from_build_info_line(json).as_deref(), Some("6.0.11"));
        assert_eq!(
            from_startup_line("Mon Aug  5 20:21:42 [initandlisten] db version v2.2.5, pdfile version 4.5").as_deref(),
            Some("2.2.5")
        );
        assert_eq!(from_startup_line("2014-04-09T23:16:20.437-0400 [initandlisten] db version v2.6.0").as_deref(), Some("2.6.0"));
        assert_eq!(
            from_startup_line("2019-06-18T11:58:58.386+0100 I CONTROL  [initandlisten] db version v4.0.10").as_deref(),
            Some("4.0.10")
        );
        assert_eq!(from_startup_line("2020-02-07T11:59:09.627+1100 I CONTROL  [mongosMain] db version v3.6.0").as_deref(), Some("3.6.0"));
        // A slow query that mentions the words is no startup line.
        assert_eq!(from_startup_line("2019-06-18T11:59:48.235+0100 I COMMAND  [conn2] command admin.$cmd command: buildInfo"), None);
        let v = ServerVersion::parse("6.0.5", VersionFrom::LogBuildInfo("mongod.log".into())).unwrap();
        assert_eq!((v.major, v.minor), (6, 0));
        assert_eq!(v.to_string(), "MongoDB 6.0.5, from the log's build-info line (mongod.log)");
        assert_eq!(ServerVersion::parse("unknown", VersionFrom::Server), None);
        // Ordered by their numbers, not their text.
        assert!(numbers("6.0.5") < numbers("6.0.14") && numbers("5.0.21") < numbers("6.0.5"));
        let logs = [ServerVersion::parse("6.0.14", VersionFrom::Server).unwrap(), v.clone()];
        assert_eq!(lowest(&logs).map(|v| v.text.as_str()), Some("6.0.5"));
    }
}
