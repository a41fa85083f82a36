//! The version a plan follows: `--target-version`, else what the inputs say (the deployment's
//! `buildInfo`, a log's build-info line, a mongodump's prelude.json), in that order; the
//! report says which, and what `--target-version` overrode.

use crate::model::version::{lowest, ServerVersion, VersionReport};

/// What the inputs said about the version, each when it said something.
#[derive(Debug, Default)]
pub(super) struct Detected {
    pub(super) live: Option<ServerVersion>,
    /// One per log file that names it.
    pub(super) logs: Vec<ServerVersion>,
    pub(super) dump: Option<ServerVersion>,
}

impl Detected {
    /// The most direct source: the deployment, else the logs (the lowest when members' logs
    /// differ, an upgrade under way), else the dump; with its words.
    fn best(&self) -> Option<(ServerVersion, String)> {
        if let Some(v) = &self.live {
            return Some((v.clone(), v.to_string()));
        }
        if let Some(v) = lowest(&self.logs) {
            let mut texts: Vec<&str> = self.logs.iter().map(|l| l.text.as_str()).collect();
            texts.dedup();
            let mut words = v.to_string();
            if texts.len() > 1 {
                words.push_str(&format!(" (the logs name {}: the lowest taken)", texts.join(", ")));
            }
            return Some((v.clone(), words));
        }
        self.dump.as_ref().map(|v| (v.clone(), v.to_string()))
    }
}

/// The version to follow and how the report says it.
pub(super) fn resolve(flag: Option<(u32, u32)>, detected: &Detected) -> (Option<ServerVersion>, VersionReport) {
    let found = detected.best();
    match (flag, found) {
        (Some((major, minor)), found) => {
            let v = ServerVersion::given(major, minor);
            let mut words = v.to_string();
            if let Some((d, _)) = found {
                words.push_str(&format!(" (overriding MongoDB {} from {})", d.text, d.source_words()));
            }
            let report = VersionReport::of(&v, words);
            (Some(v), report)
        }
        (None, Some((v, words))) => {
            let report = VersionReport::of(&v, words);
            (Some(v), report)
        }
        (None, None) => (None, VersionReport::unknown()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::version::VersionFrom;

    #[test]
    fn the_flag_overrides_and_says_so_the_server_wins_over_the_log() {
        let log = |t: &str, f: &str| ServerVersion::parse(t, VersionFrom::LogBuildInfo(f.into())).unwrap();
        let d = Detected { logs: vec![log("6.0.14", "b.log"), log("6.0.5", "a.log")], ..Default::default() };
        let (v, r) = resolve(None, &d);
        assert_eq!(v.map(|v| v.major_minor()), Some((6, 0)));
        assert_eq!(r.words, "MongoDB 6.0.5, from the log's build-info line (a.log) (the logs name 6.0.14, 6.0.5: the lowest taken)");
        assert_eq!((r.source, r.version.as_deref()), ("log", Some("6.0.5")));
        let (v, r) = resolve(Some((8, 0)), &d);
        assert_eq!(v.map(|v| v.major_minor()), Some((8, 0)));
        assert_eq!(r.words, "MongoDB 8.0, from --target-version (overriding MongoDB 6.0.5 from the log's build-info line (a.log))");
        let live = Detected { live: ServerVersion::parse("7.0.2", VersionFrom::Server), ..d };
        assert_eq!(resolve(None, &live).1.words, "MongoDB 7.0.2, from the server (buildInfo)");
        let (v, r) = resolve(None, &Detected::default());
        assert!(v.is_none() && r.source == "unknown" && r.words.starts_with("MongoDB version not known"), "{r:?}");
    }
}
