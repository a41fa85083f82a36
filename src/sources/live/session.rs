//! The connection to a deployment (`LiveSession`) and what every job on it shares: the
//! client and its options, one answer at most `deadline` away, driver errors in one line
//! without credentials. The jobs' methods are in the sibling files.

use super::{reads_seen, selection};
use crate::error::{connection_error, input_error};
use crate::model::Namespace;
use crate::util::uri::{redact_uri, scrub, secrets_of};
use anyhow::Result;
use bson::{doc, Document};
use futures_util::TryStreamExt;
use mongodb::options::{ClientOptions, ReadPreference, SelectionCriteria};
use mongodb::{Client, Collection, Database};
use std::time::Duration;

/// Connection settings from the command line.
#[derive(Debug, Clone)]
pub struct LiveOptions {
    pub uri: String,
    pub namespace: Namespace,
    pub server_selection_timeout: Duration,
    pub max_time: Duration,
}

/// A driver error as one line with no credentials in it: a connection error
/// when the deployment cannot be reached or logged into, else an input error
/// (exit code 2 either way).
pub(super) fn driver_error(what: &str, e: mongodb::error::Error, secrets: &[String]) -> anyhow::Error {
    use mongodb::error::ErrorKind;
    let (connection, detail) = match *e.kind {
        ErrorKind::Authentication { ref message, .. } => (true, format!("authentication failed: {message}")),
        ErrorKind::InvalidArgument { ref message, .. } => (false, message.clone()),
        // "not authorized on app to execute command { find: ..., lsid: ..., $clusterTime: ... }":
        // the command (with its session and signature) says nothing the user needs.
        ErrorKind::Command(ref c) => (false, format!("{} ({})", c.message.split(" to execute command").next().unwrap_or(""), c.code_name)),
        ErrorKind::ServerSelection { ref message, .. } => (true, selection::why_no_server(message)),
        ErrorKind::Io(ref io) => (true, format!("connection lost: {io}")),
        ErrorKind::ConnectionPoolCleared { .. } => (true, "connection lost (the connection pool was cleared)".to_string()),
        // The kind's own message, without the error's "Kind: …, labels: {}" wrapping.
        ref other => (false, other.to_string()),
    };
    let msg = scrub(&format!("{what}: {detail}"), secrets);
    if connection {
        connection_error(msg)
    } else {
        input_error(msg)
    }
}

/// A client for a URI, with our timeouts and read preference; plus the URI
/// redacted for display and the secrets to scrub from messages.
pub(super) async fn connect(uri: &str, timeout: Duration) -> Result<(Client, SelectionCriteria, String, Vec<String>)> {
    let (client, read, redacted, secrets, _) = connect_with_options(uri, timeout, None).await?;
    Ok((client, read, redacted, secrets))
}

/// `connect`, and the options it used (a member's direct connection starts from them:
/// the same credentials and TLS settings).
pub(super) async fn connect_with_options(
    uri: &str,
    timeout: Duration,
    seen: Option<&reads_seen::ReadsSeen>,
) -> Result<(Client, SelectionCriteria, String, Vec<String>, ClientOptions)> {
    let secrets = secrets_of(uri);
    let redacted = redact_uri(uri);
    // The driver panics on some invalid percent-encodings: refuse them first, in our own words.
    if let Some(why) = crate::util::uri::userinfo_problem(uri) {
        return Err(input_error(format!("invalid URI {redacted}: {why}")));
    }
    let mut opts = ClientOptions::parse(uri).await.map_err(|e| driver_error(&format!("invalid URI {redacted}"), e, &secrets))?;
    opts.server_selection_timeout = Some(timeout);
    opts.connect_timeout = Some(timeout);
    opts.app_name.get_or_insert_with(|| crate::sources::queries::OWN_APP_NAME.to_string());
    if opts.selection_criteria.is_none() {
        opts.selection_criteria = Some(SelectionCriteria::ReadPreference(ReadPreference::SecondaryPreferred { options: None }));
    }
    let read = opts.selection_criteria.clone().expect("set above");
    if let Some(seen) = seen {
        opts.command_event_handler = Some(seen.handler());
    }
    let client = Client::with_options(opts.clone()).map_err(|e| driver_error(&format!("cannot use {redacted}"), e, &secrets))?;
    Ok((client, read, redacted, secrets, opts))
}

/// A connection to a deployment, for one namespace.
pub struct LiveSession {
    pub(super) client: Client,
    pub(super) db: Database,
    pub(super) coll_name: String,
    pub(crate) namespace: Namespace,
    pub(crate) redacted: String,
    pub(super) secrets: Vec<String>,
    pub(super) max_time: Duration,
    pub(super) read: SelectionCriteria,
    /// The read preference the URI asked for (`read` may be narrowed to one member: `pin`).
    pub(super) requested: SelectionCriteria,
    /// What the client was made from: a member's direct connection copies it.
    pub(super) options: ClientOptions,
    /// Where the document reads went (the driver's command monitoring).
    pub(super) reads_seen: reads_seen::ReadsSeen,
}

impl LiveSession {
    pub async fn open(o: &LiveOptions) -> Result<LiveSession> {
        let reads_seen = reads_seen::ReadsSeen::default();
        let (client, read, redacted, secrets, options) =
            connect_with_options(&o.uri, o.server_selection_timeout, Some(&reads_seen)).await?;
        let db = client.database(o.namespace.db());
        let s = LiveSession {
            client,
            db,
            coll_name: o.namespace.coll().to_string(),
            namespace: o.namespace.clone(),
            redacted,
            secrets,
            max_time: o.max_time,
            requested: read.clone(),
            read,
            options,
            reads_seen,
        };
        // Fail fast (within the selection timeout) on a wrong host or password. The driver
        // drops a member of another replica set from its topology without a word: the seeds
        // are asked which set they are in meanwhile (not after: the wait would add up), and
        // their answer is used only when the ping fails.
        let failed = {
            let admin = s.client.database("admin");
            let ping = s.command(&admin, doc! {"ping": 1}, "cannot connect to");
            let probe = s.set_name_mismatch();
            tokio::pin!(ping, probe);
            let mut probed = None;
            let pinged = loop {
                tokio::select! {
                    r = &mut ping => break r,
                    p = &mut probe, if probed.is_none() => probed = Some(p),
                }
            };
            match pinged {
                Ok(_) => None,
                Err(e) => Some(match probed {
                    Some(p) => (e, p),
                    None => (e, probe.await),
                }),
            }
        };
        match failed {
            Some((_, Some(why))) => return Err(connection_error(format!("cannot connect to {}: {why}", s.redacted))),
            Some((e, None)) => return Err(e),
            None => {}
        }
        let mut s = s;
        s.pin().await;
        Ok(s)
    }

    /// Every read of the run on one member. Under a read preference that several members
    /// satisfy (secondaryPreferred, the default; secondary; nearest) the driver picks one per
    /// operation, so a sample and its second pass could come from two secondaries (a trial's
    /// identical runs proposed 25 and 22 candidates). The member the first selection reaches
    /// (its `isMaster`'s `me`, the name the driver knows it by in a replica set) is kept; a
    /// direct connection, a load balancer, mongos and a standalone (no `me`) are left as they are.
    async fn pin(&mut self) {
        let several = matches!(
            &self.read,
            SelectionCriteria::ReadPreference(
                ReadPreference::SecondaryPreferred { .. } | ReadPreference::Secondary { .. } | ReadPreference::Nearest { .. }
            )
        );
        if !several || self.options.direct_connection == Some(true) || self.options.load_balanced == Some(true) {
            return;
        }
        let Ok(hello) = self.command(&self.client.database("admin"), doc! {"isMaster": 1}, "isMaster on").await else { return };
        // secondaryPreferred answered by the primary: a client just made may not have found the
        // secondaries yet (a test's run read the primary throughout): each operation chooses.
        let preferred = matches!(&self.read, SelectionCriteria::ReadPreference(ReadPreference::SecondaryPreferred { .. }));
        if preferred && hello.get_bool("ismaster").unwrap_or(false) {
            return;
        }
        let Some(me) = hello.get_str("me").ok().and_then(|m| mongodb::options::ServerAddress::parse(m).ok()) else { return };
        self.read = SelectionCriteria::Predicate(std::sync::Arc::new(move |s: &mongodb::ServerInfo| s.address() == &me));
    }

    pub(super) fn err(&self, what: &str, e: mongodb::error::Error) -> anyhow::Error {
        driver_error(&format!("{what} {}", self.redacted), e, &self.secrets)
    }

    /// The driver has no socket timeout: wait for any one answer at most `deadline(max_time)`,
    /// so a server that stops answering (SIGSTOP, a dead network) ends the run with one line.
    pub(super) async fn answer<T>(&self, what: &str, fut: impl std::future::Future<Output = mongodb::error::Result<T>>) -> Result<T> {
        match tokio::time::timeout(deadline(self.max_time), fut).await {
            Ok(r) => r.map_err(|e| self.err(what, e)),
            Err(_) => Err(self.no_answer(what)),
        }
    }

    pub(super) fn no_answer(&self, what: &str) -> anyhow::Error {
        connection_error(format!(
            "{what} {}: no answer within {} s (the server stopped answering)",
            self.redacted,
            deadline(self.max_time).as_secs()
        ))
    }

    pub(super) async fn command(&self, db: &Database, mut cmd: Document, what: &str) -> Result<Document> {
        let name = cmd.keys().next().cloned().unwrap_or_default();
        if !matches!(name.as_str(), "ping" | "buildInfo" | "explain" | "isMaster") {
            cmd.insert("maxTimeMS", self.max_time.as_millis() as i64);
        }
        self.answer(what, async { db.run_command(cmd).selection_criteria(self.read.clone()).await }).await
    }

    pub(super) fn coll(&self) -> Collection<Document> {
        self.db.collection(&self.coll_name)
    }

    /// Feed every document of a cursor to `f`; a driver error is one line naming `what`.
    pub(super) async fn for_each_doc(
        &self,
        open: impl std::future::IntoFuture<Output = mongodb::error::Result<mongodb::Cursor<Document>>>,
        what: &str,
        mut f: impl FnMut(Document),
    ) -> Result<()> {
        let mut cur = self.answer(what, open.into_future()).await?;
        while let Some(d) = self.answer(what, cur.try_next()).await? {
            f(d);
        }
        Ok(())
    }
}

/// How long one answer may take: the server's own `maxTimeMS` and a margin for
/// the network; past it the server is taken as stopped.
pub(crate) fn deadline(max_time: Duration) -> Duration {
    max_time + Duration::from_secs(5)
}

impl LiveSession {
    /// With `replicaSet=X` in the URI: the first seed that answers as a member of another set
    /// (or of none), in words: "127.0.0.1:27017 is a member of replica set 'rs0', not 'rsX'".
    /// Each seed is asked `isMaster` over a direct connection (read-only, no set name).
    /// Every seed at once, so that the whole check takes one seed's time (3 s at most), not
    /// the seeds' sum: `--server-selection-timeout 5` with two unreachable seeds took 11 s.
    pub(super) async fn set_name_mismatch(&self) -> Option<String> {
        let want = self.options.repl_set_name.clone()?;
        let answers = futures_util::future::join_all(self.options.hosts.iter().map(|host| self.seed_set_name(host, &want))).await;
        answers.into_iter().flatten().next()
    }

    /// One seed's answer to `set_name_mismatch`: None when it is in the set or did not answer.
    async fn seed_set_name(&self, host: &mongodb::options::ServerAddress, want: &str) -> Option<String> {
        let mut o = self.options.clone();
        o.hosts = vec![host.clone()];
        o.direct_connection = Some(true);
        o.repl_set_name = None;
        // `isMaster` needs no login: a wrong password must not hide a wrong set name.
        o.credential = None;
        // A seed that answers does so at once; one that does not was named by the driver.
        o.server_selection_timeout = Some(o.server_selection_timeout.unwrap_or_default().min(std::time::Duration::from_secs(3)));
        o.connect_timeout = Some(o.connect_timeout.unwrap_or_default().min(std::time::Duration::from_secs(3)));
        let client = mongodb::Client::with_options(o).ok()?;
        let admin = client.database("admin");
        let hello = admin.run_command(bson::doc! {"isMaster": 1});
        let reply =
            tokio::time::timeout(std::time::Duration::from_secs(3), std::future::IntoFuture::into_future(hello)).await.ok()?.ok()?;
        match reply.get_str("setName") {
            Ok(set) if set != want => {
                Some(format!("{host} is a member of replica set '{set}', not '{want}' (the replica set name in the URI or --host)"))
            }
            Err(_) if reply.get_str("msg").ok() == Some("isdbgrid") => {
                Some(format!("{host} is a mongos, not a member of replica set '{want}': leave replicaSet out of the URI"))
            }
            Err(_) => Some(format!("{host} is a standalone mongod, not a member of replica set '{want}': leave replicaSet out of the URI")),
            Ok(_) => None,
        }
    }
}
