//! The profiler of every member. `system.profile` is local to each mongod and never
//! replicated (manual "Database Profiler"): the operations a secondary served are in
//! its profiler only, the primary's in the primary's. So the workload of a replica set
//! is read member by member, each over a direct connection with the URI's credentials
//! and TLS settings; hidden and delayed members too, listed by `replSetGetConfig`
//! (the driver's topology never shows a hidden member). Through mongos (which has no
//! profiler) or with the config servers' `config.shards`, the members of every shard.

use super::profiler::{ProfileSizes, ProfilerSettings};
use super::session::{driver_error, LiveSession};
use crate::model::member::{MemberRead, MemberRole, ProfilerState};
use crate::sources::queries::{add_record, QueryLog};
use anyhow::Result;
use bson::{doc, Bson, Document};
use futures_util::TryStreamExt;
use mongodb::options::{ReadPreference, SelectionCriteria, ServerAddress};
use mongodb::{Client, Collection};
use std::future::IntoFuture;

/// A member to read: where, in which set, and what the set's configuration says it is.
#[derive(Debug, Clone, PartialEq)]
struct Member {
    host: String,
    set: Option<String>,
    role: MemberRole,
}

/// Which entries of each profiler to read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ProfileScope {
    /// The analysed namespace's (`analyze`, `check`).
    Namespace,
    /// Every collection of the database (`plan`).
    Database,
}

/// Every member's profiler as read: per member what it held, and what could not be listed.
#[derive(Debug, Default)]
pub(crate) struct ProfileRead {
    pub(crate) members: Vec<MemberRead>,
    /// What could not be listed or read, one line each (never silently skipped).
    pub(crate) notes: Vec<String>,
}

impl ProfileRead {
    /// Operations read on every member together.
    pub(crate) fn operations(&self) -> u64 {
        self.members.iter().map(|m| m.operations).sum()
    }

    /// The first member's error when no member could be read at all.
    pub(crate) fn none_readable(&self) -> Option<String> {
        if self.members.iter().any(|m| m.error.is_none()) {
            return None;
        }
        Some(
            self.members.first().map(|m| format!("{}: {}", m.label(), m.error.clone().unwrap_or_default())).unwrap_or_else(|| {
                self.notes.first().cloned().unwrap_or_else(|| "no member of the deployment could be listed".to_string())
            }),
        )
    }

    /// Why the profilers held nothing, from their settings ("" when they say nothing).
    pub(crate) fn why_empty(&self) -> String {
        let mut why: Vec<String> = Vec::new();
        for m in &self.members {
            if let Some(w) = m.profiler.as_ref().and_then(ProfilerState::why_few) {
                why.push(format!("{} on {}", w, m.label()));
            }
        }
        why.join("; ")
    }
}

/// `set/host1:port,host2:port` (`config.shards` hosts) as a seed list and set name.
pub(super) fn parse_shard_host(s: &str) -> (Option<String>, Vec<String>) {
    match s.split_once('/') {
        Some((set, hosts)) => (Some(set.to_string()), hosts.split(',').map(str::to_string).collect()),
        None => (None, s.split(',').map(str::to_string).collect()),
    }
}

/// The data-bearing members a `replSetGetConfig` reply lists (arbiters hold no data).
fn members_of_config(reply: &Document) -> Vec<Member> {
    let Ok(config) = reply.get_document("config") else { return vec![] };
    let set = config.get_str("_id").ok().map(str::to_string);
    let num = |d: &Document, k: &str| d.get(k).and_then(crate::bsonx::number::as_f64).unwrap_or(0.0);
    config
        .get_array("members")
        .map(|ms| {
            ms.iter()
                .filter_map(Bson::as_document)
                .filter(|m| !m.get_bool("arbiterOnly").unwrap_or(false))
                .filter_map(|m| {
                    let role = if m.get_bool("hidden").unwrap_or(false) {
                        MemberRole::Hidden
                    } else if num(m, "secondaryDelaySecs") > 0.0 || num(m, "slaveDelay") > 0.0 {
                        MemberRole::Delayed
                    } else {
                        MemberRole::Unknown
                    };
                    Some(Member { host: m.get_str("host").ok()?.to_string(), set: set.clone(), role })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The members an `isMaster` reply lists: `hosts` and `passives` (priority 0), never
/// the hidden ones.
fn members_of_hello(reply: &Document) -> Vec<Member> {
    let set = reply.get_str("setName").ok().map(str::to_string);
    ["hosts", "passives"]
        .iter()
        .filter_map(|k| reply.get_array(k).ok())
        .flatten()
        .filter_map(Bson::as_str)
        .map(|h| Member { host: h.to_string(), set: set.clone(), role: MemberRole::Unknown })
        .collect()
}

fn iso(d: &bson::DateTime) -> String {
    d.try_to_rfc3339_string().unwrap_or_default()
}

impl LiveSession {
    /// The same deployment through other hosts: one member directly (`set` None), or a
    /// replica set from a seed list. Same credentials, TLS, timeouts.
    pub(super) fn reach(&self, hosts: &[String], set: Option<&str>) -> Result<LiveSession> {
        let mut o = self.options.clone();
        o.hosts = hosts
            .iter()
            .map(|h| ServerAddress::parse(h).map_err(|e| driver_error(&format!("member {h}"), e, &self.secrets)))
            .collect::<Result<_>>()?;
        o.direct_connection = Some(set.is_none());
        o.repl_set_name = set.map(str::to_string);
        // A direct connection to a secondary reads there (secondaryOk).
        let read = SelectionCriteria::ReadPreference(ReadPreference::PrimaryPreferred { options: None });
        o.selection_criteria = Some(read.clone());
        let client = Client::with_options(o.clone()).map_err(|e| driver_error(&format!("member {}", hosts.join(",")), e, &self.secrets))?;
        Ok(LiveSession {
            db: client.database(self.namespace.db()),
            client,
            coll_name: self.coll_name.clone(),
            namespace: self.namespace.clone(),
            redacted: hosts.join(","),
            secrets: self.secrets.clone(),
            max_time: self.max_time,
            requested: read.clone(),
            read,
            options: o,
            reads_seen: self.reads_seen.clone(),
        })
    }

    /// This replica set's data-bearing members: `replSetGetConfig` (hidden and delayed
    /// members too), else `isMaster`'s hosts and passives with a note on what is missing.
    async fn members_of_set(&self, hello: &Document, notes: &mut Vec<String>) -> Vec<Member> {
        match self.command(&self.client.database("admin"), doc! {"replSetGetConfig": 1}, "replSetGetConfig on").await {
            Ok(reply) => {
                let ms = members_of_config(&reply);
                if !ms.is_empty() {
                    return ms;
                }
            }
            Err(e) => notes.push(format!(
                "hidden members not listed ({}): replSetGetConfig, which the clusterMonitor role grants, lists them; \
                 the members isMaster shows were read",
                crate::error::one_line(&e)
            )),
        }
        members_of_hello(hello)
    }

    /// The data-bearing members this session reaches: every member of its replica set (or
    /// itself, a standalone), and of every shard behind mongos or in `shards` (the config
    /// servers' `config.shards` hosts).
    async fn members(&self, shards: &[String], notes: &mut Vec<String>) -> Vec<Member> {
        let me = || Member {
            host: self.options.hosts.first().map(ToString::to_string).unwrap_or_default(),
            set: None,
            role: MemberRole::Unknown,
        };
        // A load balancer hides the members: read what it reaches.
        if self.options.load_balanced == Some(true) {
            return vec![me()];
        }
        let hello = match self.command(&self.client.database("admin"), doc! {"isMaster": 1}, "isMaster on").await {
            Ok(h) => h,
            Err(e) => {
                notes.push(format!("the deployment's members not listed: {}", crate::error::one_line(&e)));
                return vec![me()];
            }
        };
        // The user chose one member: its profiler alone of its set, and the others named.
        let direct = self.options.direct_connection == Some(true);
        if direct {
            let others: Vec<String> =
                members_of_hello(&hello).into_iter().map(|m| m.host).filter(|h| Some(h.as_str()) != hello.get_str("me").ok()).collect();
            if !others.is_empty() {
                notes.push(format!(
                    "directConnection=true: only this member's profiler is read, not {}'s (drop directConnection to read every member's)",
                    others.join(", ")
                ));
            }
        }
        let mut shard_hosts: Vec<String> = shards.to_vec();
        let mut out = Vec::new();
        if hello.get_str("msg") == Ok("isdbgrid") {
            // mongos: the profilers are on the shards.
            let coll: Collection<Document> = self.client.database("config").collection("shards");
            let mut listed = Vec::new();
            let read = self.for_each_doc(coll.find(doc! {}).max_time(self.max_time), "reading config.shards on", |d| listed.push(d)).await;
            match read {
                Ok(()) => shard_hosts.extend(listed.iter().filter_map(|d| d.get_str("host").ok().map(str::to_string))),
                Err(e) => notes.push(format!("the shards' members not listed: {}", crate::error::one_line(&e))),
            }
        } else if direct {
            out.push(me());
        } else if hello.get_str("setName").is_ok() {
            out = self.members_of_set(&hello, notes).await;
        } else {
            out.push(Member { role: MemberRole::Standalone, ..me() });
        }
        // Every shard's set at once: one that cannot be reached costs one selection timeout.
        let listed = futures_util::future::join_all(shard_hosts.iter().map(|s| async move {
            let (set, seeds) = parse_shard_host(s);
            let mut shard_notes = Vec::new();
            let shard = self.reach(&seeds, set.as_deref())?;
            let h = shard.command(&shard.client.database("admin"), doc! {"isMaster": 1}, "isMaster on").await?;
            let ms = shard.members_of_set(&h, &mut shard_notes).await;
            Ok::<_, anyhow::Error>((ms, shard_notes))
        }))
        .await;
        for (s, r) in shard_hosts.iter().zip(listed) {
            match r {
                Ok((ms, shard_notes)) => {
                    notes.extend(shard_notes.into_iter().map(|n| format!("shard {s}: {n}")));
                    out.extend(ms);
                }
                Err(e) => notes.push(format!("shard {s}: members not listed: {}", crate::error::one_line(&e))),
            }
        }
        // The URI's own set may be one of the shards: each member once.
        let mut seen = std::collections::BTreeSet::new();
        out.retain(|m| seen.insert(m.host.clone()));
        out
    }

    /// Every data-bearing member's `system.profile` into `log`, with each member's
    /// profiler settings, size and time span. A member that cannot be reached or read
    /// is named with the reason.
    pub(crate) async fn read_profiles(&self, scope: ProfileScope, shards: &[String], log: &mut QueryLog) -> ProfileRead {
        let mut out = ProfileRead::default();
        let members = self.members(shards, &mut out.notes).await;
        // Connect to every member at once: an unreachable one costs one selection timeout, not one each.
        let sessions = futures_util::future::join_all(members.iter().map(|m| async move {
            let s = self.reach(std::slice::from_ref(&m.host), None)?;
            let hello = s.command(&s.client.database("admin"), doc! {"isMaster": 1}, "isMaster on").await?;
            Ok::<_, anyhow::Error>((s, hello))
        }))
        .await;
        for (m, reached) in members.into_iter().zip(sessions) {
            let mut read = MemberRead {
                host: Some(m.host.clone()),
                set: m.set.clone(),
                role: m.role.clone(),
                source: format!("{}.system.profile", self.namespace.db()),
                operations: 0,
                from: None,
                to: None,
                profiler: None,
                error: None,
            };
            match reached {
                Ok((s, hello)) => {
                    if read.role == MemberRole::Unknown {
                        read.role = super::read_on::role_of(&hello);
                    }
                    read.profiler = s.profiler_state().await;
                    if let Err(e) = s.read_member_profile(scope, log, &mut read).await {
                        read.error = Some(profile_error(&e, self.namespace.db()));
                    }
                }
                Err(e) => read.error = Some(format!("not reached: {}", crate::error::one_line(&e))),
            }
            if let Some(e) = &read.error {
                out.notes.push(format!("system.profile of {} not read: {e}", read.label()));
            }
            out.members.push(read);
        }
        out
    }

    /// This member's profiler settings and `system.profile` size; None when the user may not read them.
    async fn profiler_state(&self) -> Option<ProfilerState> {
        let settings = self.command(&self.db, doc! {"profile": -1}, "reading the profiler settings of").await.ok()?;
        let s = ProfilerSettings::from_reply(&settings);
        let mut state = ProfilerState::new(s.level, s.slowms, s.sample_rate);
        match self.profile_sizes(&self.read).await {
            Ok(z) => {
                (state.size_bytes, state.max_size_bytes, state.entries) = (z.bytes, z.max_bytes, z.entries);
                state.full = z.full();
                if state.full.is_none() {
                    state.full_unknown = Some("system.profile's size or maximum not reported".into());
                }
            }
            Err(why) => state.full_unknown = Some(why),
        }
        let coll: Collection<Document> = self.db.collection("system.profile");
        for (order, slot) in [(1, &mut state.oldest), (-1, &mut state.newest)] {
            let first =
                coll.find_one(doc! {}).sort(doc! {"$natural": order}).projection(doc! {"ts": 1}).selection_criteria(self.read.clone());
            if let Ok(Some(d)) = self.answer("reading system.profile on", first.into_future()).await {
                *slot = d.get_datetime("ts").ok().map(iso);
            }
        }
        Some(state)
    }

    /// `system.profile`'s data bytes, capped maximum and entries on the member `read`
    /// selects, or why they could not be read. collStats (every version; deprecated for
    /// $collStats in 6.2, still served) needs the collStats action on <db>.system.profile,
    /// which neither `read` nor `clusterMonitor` grants (clusterMonitor's collStats is on
    /// non-system collections; measured on 6.0.5 with read + clusterMonitor: Unauthorized).
    /// Then the same figures from what those roles allow: the capped maximum from
    /// listCollections' options (`size`), the entries and their BSON bytes from an
    /// aggregation on the collection (find, which clusterMonitor grants on every
    /// system.profile; $bsonSize is 4.4+).
    pub(crate) async fn profile_sizes(&self, read: &SelectionCriteria) -> std::result::Result<ProfileSizes, String> {
        let run = |cmd: Document, what: &'static str| {
            let mut cmd = cmd;
            cmd.insert("maxTimeMS", self.max_time.as_millis() as i64);
            let read = read.clone();
            async move { self.answer(what, async { self.db.run_command(cmd).selection_criteria(read).await }).await }
        };
        let stats = match run(doc! {"collStats": "system.profile"}, "collStats on").await {
            Ok(st) => {
                let n = |k: &str| st.get(k).and_then(crate::bsonx::number::as_f64).map(|v| v as u64);
                return Ok(ProfileSizes { bytes: n("size"), max_bytes: n("maxSize"), entries: n("count") });
            }
            Err(e) => crate::error::one_line(&e),
        };
        let fallback = async {
            let listed = run(doc! {"listCollections": 1, "filter": {"name": "system.profile"}}, "listCollections on").await?;
            let max = listed
                .get_document("cursor")
                .ok()
                .and_then(|c| c.get_array("firstBatch").ok())
                .and_then(|b| b.first())
                .and_then(Bson::as_document)
                .and_then(|d| d.get_document("options").ok())
                .and_then(|o| o.get("size"))
                .and_then(crate::bsonx::number::as_f64)
                .map(|v| v as u64);
            let coll: Collection<Document> = self.db.collection("system.profile");
            let pipeline = vec![doc! {"$group": {"_id": null, "bytes": {"$sum": {"$bsonSize": "$$ROOT"}}, "count": {"$sum": 1}}}];
            let mut totals = None;
            let open = coll.aggregate(pipeline).max_time(self.max_time).selection_criteria(read.clone());
            self.for_each_doc(open, "summing system.profile on", |d| totals = Some(d)).await?;
            let n = |k: &str| totals.as_ref().and_then(|d| d.get(k)).and_then(crate::bsonx::number::as_f64).map(|v| v as u64);
            // An empty profiler: no group at all, zero bytes.
            Ok::<_, anyhow::Error>(ProfileSizes {
                bytes: Some(n("bytes").unwrap_or(0)),
                max_bytes: max,
                entries: Some(n("count").unwrap_or(0)),
            })
        };
        match fallback.await {
            Ok(z) => Ok(z),
            Err(_) if stats.contains("not authorized") || stats.contains("Unauthorized") => {
                Err(format!("not authorized: collStats on {}.system.profile", self.namespace.db()))
            }
            Err(_) => Err(stats),
        }
    }

    /// This member's profiler entries (the namespace's or the database's) into `log`.
    async fn read_member_profile(&self, scope: ProfileScope, log: &mut QueryLog, read: &mut MemberRead) -> Result<()> {
        let coll: Collection<Document> = self.db.collection("system.profile");
        let filter = match scope {
            ProfileScope::Namespace => doc! {"ns": self.namespace.to_string()},
            ProfileScope::Database => doc! {},
        };
        let start = log.found;
        let (mut from, mut to): (Option<bson::DateTime>, Option<bson::DateTime>) = (None, None);
        let cursor = coll.find(filter).sort(doc! {"$natural": 1}).max_time(self.max_time).selection_criteria(self.read.clone());
        let mut cur = self.answer("reading system.profile on", cursor.into_future()).await?;
        while let Some(d) = self.answer("reading system.profile on", cur.try_next()).await? {
            log.records += 1;
            let before = log.found;
            add_record(log, &d);
            // The span of the operations counted (not shardkey's own, nor what was skipped).
            if let (true, Ok(ts)) = (log.found > before, d.get_datetime("ts")) {
                from = Some(from.map_or(*ts, |f| f.min(*ts)));
                to = Some(to.map_or(*ts, |t| t.max(*ts)));
            }
        }
        read.operations = log.found - start;
        read.from = from.as_ref().map(iso);
        read.to = to.as_ref().map(iso);
        Ok(())
    }
}

/// A profiler read's error in one line, with the privilege that would allow it.
fn profile_error(e: &anyhow::Error, db: &str) -> String {
    let text = crate::error::one_line(e);
    if text.contains("Unauthorized") {
        format!("{text}: the role read does not grant find on {db}.system.profile; {}", profiler_role_hint(db))
    } else {
        text
    }
}

/// The narrowest privileges that read a profiler, as the manual's built-in roles and
/// privilege actions name them (manual "Built-In Roles": clusterMonitor grants find on every
/// database's system.profile; "Privilege Actions": collStats): never dbAdmin, which can
/// also drop collections and change the profiler.
pub(crate) fn profiler_role_hint(db: &str) -> String {
    format!(
        "the read-only clusterMonitor role grants find on it; find and collStats on it alone (what shardkey reads) are a custom role: \
         db.getSiblingDB(\"admin\").createRole({{role: \"profileReader\", privileges: [{{resource: {{db: \"{db}\", collection: \"system.profile\"}}, actions: [\"find\", \"collStats\"]}}], roles: []}})"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_lists_hidden_and_delayed_members_and_no_arbiter() {
        // A 6.0 replSetGetConfig reply, trimmed.
        let reply = doc! {"config": {"_id": "rs9", "members": [
            {"_id": 0, "host": "h1:27017", "arbiterOnly": false, "hidden": false, "priority": 1.0, "secondaryDelaySecs": 0i64},
            {"_id": 1, "host": "h2:27017", "arbiterOnly": false, "hidden": true, "priority": 0.0, "secondaryDelaySecs": 0i64},
            {"_id": 2, "host": "h3:27017", "arbiterOnly": false, "hidden": true, "priority": 0.0, "secondaryDelaySecs": 3600i64},
            {"_id": 3, "host": "h4:27017", "arbiterOnly": true},
        ]}, "ok": 1.0};
        let ms = members_of_config(&reply);
        let hosts: Vec<(&str, &MemberRole)> = ms.iter().map(|m| (m.host.as_str(), &m.role)).collect();
        assert_eq!(hosts, vec![("h1:27017", &MemberRole::Unknown), ("h2:27017", &MemberRole::Hidden), ("h3:27017", &MemberRole::Hidden)]);
        assert!(ms.iter().all(|m| m.set.as_deref() == Some("rs9")));
        // 4.x: slaveDelay, not hidden.
        let old = doc! {"config": {"_id": "rs", "members": [{"_id": 0, "host": "h:1", "slaveDelay": 60}]}};
        assert_eq!(members_of_config(&old)[0].role, MemberRole::Delayed);
    }

    #[test]
    fn is_master_lists_hosts_and_passives() {
        let hello = doc! {"setName": "rs9", "hosts": ["h1:1", "h2:1"], "passives": ["h3:1"], "arbiters": ["h4:1"]};
        let hosts: Vec<String> = members_of_hello(&hello).into_iter().map(|m| m.host).collect();
        assert_eq!(hosts, vec!["h1:1", "h2:1", "h3:1"]);
    }

    #[test]
    fn shard_hosts_name_their_set() {
        assert_eq!(parse_shard_host("rs0/a:1,b:2"), (Some("rs0".to_string()), vec!["a:1".to_string(), "b:2".to_string()]));
        assert_eq!(parse_shard_host("a:1"), (None, vec!["a:1".to_string()]));
    }
}
