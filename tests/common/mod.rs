//! A real mongod for tests: the binary scripts/mongod.sh installs (path in
//! SHARDKEY_MONGOD), started on a free 127.0.0.1 port with a temporary dbpath,
//! and stopped when the guard drops. No test passes without it.
#![allow(dead_code)]

pub mod txn_log;

use mongodb::bson::{doc, Document};
use mongodb::Client;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The project's root (where Cargo.toml is).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A bundled fixture's path, as text for a command line.
pub fn fixture(name: &str) -> String {
    root().join("fixtures").join(name).display().to_string()
}

/// Run the shardkey binary with MONGODB_URI unset (a test names its server itself).
pub fn shardkey(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shardkey")).args(args).env_remove("MONGODB_URI").output().expect("run shardkey")
}

/// An analyze run that succeeded: its JSON report, held to schemas/analyze.schema.json when
/// it has candidates.
pub fn json_ok(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    if v.get("candidates").is_some() {
        assert_schema("analyze", &v);
    }
    v
}

/// SplitMix64: the same data on every run and machine.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

/// A small deterministic generator (64-bit LCG, Knuth's constants): the plan tests' data.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Check `v` against the published JSON Schema `schemas/<name>.schema.json` (panics with
/// every error and where it is).
pub fn assert_schema(name: &str, v: &serde_json::Value) {
    let path = root().join("schemas").join(format!("{name}.schema.json"));
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let errors: Vec<String> = validator.iter_errors(v).map(|e| format!("{e} at {}", e.instance_path)).collect();
    assert!(errors.is_empty(), "{name} report against {}: {errors:#?}", path.display());
}

pub struct Mongod {
    pub port: u16,
    pub dir: tempfile::TempDir,
    pid: u32,
}

pub fn mongod_binary() -> PathBuf {
    let p = std::env::var("SHARDKEY_MONGOD")
        .expect("SHARDKEY_MONGOD is not set: run the tests with scripts/test.sh, which installs the real mongod");
    let p = PathBuf::from(p);
    assert!(p.is_file(), "SHARDKEY_MONGOD={} is not a file", p.display());
    p
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[derive(Clone, Copy, PartialEq)]
pub enum Mode {
    ReplicaSet,
    Standalone,
    StandaloneAuth,
    ConfigServer,
    /// A member of a several-member set (`ReplSet`): `--replSet rsm`, not initiated.
    SetMember,
    /// The same under `--auth` with the set's key file (in the parent of the dbpath).
    SetMemberAuth,
}

impl Mongod {
    pub fn start(mode: Mode) -> Mongod {
        let bin = mongod_binary();
        let dir = tempfile::tempdir().unwrap();
        for _attempt in 0..3 {
            let port = free_port();
            let mut cmd = Command::new(&bin);
            cmd.arg("--port")
                .arg(port.to_string())
                .arg("--bind_ip")
                .arg("127.0.0.1")
                .arg("--dbpath")
                .arg(dir.path())
                .arg("--fork")
                .arg("--logpath")
                .arg(dir.path().join("mongod.log"))
                .arg("--pidfilepath")
                .arg(dir.path().join("mongod.pid"))
                .arg("--wiredTigerCacheSizeGB")
                .arg("0.25")
                .arg("--setParameter")
                .arg("diagnosticDataCollectionEnabled=false");
            match mode {
                Mode::ReplicaSet => {
                    cmd.arg("--replSet").arg("rs0");
                }
                Mode::ConfigServer => {
                    cmd.arg("--configsvr").arg("--replSet").arg("cfg");
                }
                Mode::StandaloneAuth => {
                    cmd.arg("--auth");
                }
                Mode::Standalone => {}
                Mode::SetMember => {
                    cmd.arg("--replSet").arg("rsm");
                }
                Mode::SetMemberAuth => {
                    cmd.arg("--replSet").arg("rsm").arg("--keyFile").arg(dir.path().join("key"));
                }
            }
            if mode == Mode::SetMemberAuth {
                // The set's members prove themselves to each other with a shared key file (0600).
                use std::os::unix::fs::PermissionsExt;
                let key = dir.path().join("key");
                std::fs::write(&key, "c2hhcmRrZXktdGVzdC1rZXlmaWxlLWZvci10aGUtc2V0").unwrap();
                std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
            }
            let out = cmd.output().expect("start mongod");
            if !out.status.success() {
                continue; // port taken between bind and start: try another
            }
            let pid: u32 = std::fs::read_to_string(dir.path().join("mongod.pid")).unwrap().trim().parse().unwrap();
            let m = Mongod { port, dir, pid };
            if matches!(mode, Mode::ReplicaSet | Mode::ConfigServer) {
                m.initiate(if mode == Mode::ConfigServer { "cfg" } else { "rs0" }, mode == Mode::ConfigServer);
            }
            return m;
        }
        panic!("could not start mongod");
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn uri(&self) -> String {
        format!("mongodb://127.0.0.1:{}/?directConnection=true", self.port)
    }

    pub fn client(&self) -> Client {
        rt().block_on(async { Client::with_uri_str(self.uri()).await.unwrap() })
    }

    /// Under `--auth`: the first user, `root` with password `rootpw-123` (the localhost
    /// exception lets it be created), and a client logged in as it.
    pub fn root_client(&self) -> Client {
        rt().block_on(async {
            let c = Client::with_uri_str(self.uri()).await.unwrap();
            c.database("admin")
                .run_command(mongodb::bson::doc! {"createUser": "root", "pwd": "rootpw-123", "roles": ["root"]})
                .await
                .unwrap();
            Client::with_uri_str(format!("mongodb://root:rootpw-123@127.0.0.1:{}/?authSource=admin", self.port)).await.unwrap()
        })
    }

    fn initiate(&self, set: &str, configsvr: bool) {
        let c = self.client();
        rt().block_on(async {
            let mut cfg = doc! {"_id": set, "members": [{"_id": 0, "host": format!("127.0.0.1:{}", self.port)}]};
            if configsvr {
                cfg.insert("configsvr", true);
            }
            c.database("admin").run_command(doc! {"replSetInitiate": cfg}).await.unwrap();
        });
        wait_for_primary(&c);
    }

    /// serverStatus opcounters (insert, update, delete).
    pub fn write_opcounters(&self, client: &Client) -> (i64, i64, i64) {
        rt().block_on(async {
            let s: Document = client.database("admin").run_command(doc! {"serverStatus": 1}).await.unwrap();
            let o = s.get_document("opcounters").unwrap();
            let n = |k: &str| match o.get(k) {
                Some(mongodb::bson::Bson::Int64(i)) => *i,
                Some(mongodb::bson::Bson::Int32(i)) => *i as i64,
                _ => panic!("opcounter {k}"),
            };
            (n("insert"), n("update"), n("delete"))
        })
    }
}

impl Drop for Mongod {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg(self.pid.to_string()).status();
        let start = Instant::now();
        while std::path::Path::new(&format!("/proc/{}", self.pid)).exists() && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(100));
        }
        if std::path::Path::new(&format!("/proc/{}", self.pid)).exists() {
            let _ = Command::new("kill").arg("-9").arg(self.pid.to_string()).status();
        }
    }
}

/// A replica set of several members on this machine (`rsm`), stopped when dropped: the
/// first is the primary (priority 2), the others secondaries; `hidden` makes the last one
/// hidden (priority 0). Under `auth` the members share a key file and `root` /
/// `rootpw-123` is created.
pub struct ReplSet {
    pub members: Vec<Mongod>,
    pub auth: bool,
}

impl ReplSet {
    pub fn start(n: usize, hidden: bool, auth: bool) -> ReplSet {
        let mode = if auth { Mode::SetMemberAuth } else { Mode::SetMember };
        let members: Vec<Mongod> = (0..n).map(|_| Mongod::start(mode)).collect();
        let set = ReplSet { members, auth };
        let cfg_members: Vec<Document> = set
            .members
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let mut d = doc! {"_id": i as i32, "host": format!("127.0.0.1:{}", m.port), "priority": if i == 0 { 2 } else { 1 }};
                if hidden && i == n - 1 && i > 0 {
                    d.insert("priority", 0);
                    d.insert("hidden", true);
                }
                d
            })
            .collect();
        let first = set.members[0].client();
        rt().block_on(async {
            first.database("admin").run_command(doc! {"replSetInitiate": {"_id": "rsm", "members": cfg_members}}).await.unwrap();
        });
        if auth {
            // The localhost exception, on the primary once it is one.
            wait_for_primary(&first);
            rt().block_on(async {
                first.database("admin").run_command(doc! {"createUser": "root", "pwd": "rootpw-123", "roles": ["root"]}).await.unwrap();
            });
        }
        let admin = set.member_client(0);
        wait_for_primary(&admin);
        // Every other member a secondary: reads there work, the set's config is settled.
        let start = Instant::now();
        loop {
            let st = block(admin.database("admin").run_command(doc! {"replSetGetStatus": 1})).unwrap();
            let states: Vec<String> = st
                .get_array("members")
                .unwrap()
                .iter()
                .map(|m| m.as_document().unwrap().get_str("stateStr").unwrap().to_string())
                .collect();
            if states.iter().filter(|s| *s == "PRIMARY").count() == 1 && states.iter().filter(|s| *s == "SECONDARY").count() == n - 1 {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(90), "replica set members did not settle: {states:?}");
            std::thread::sleep(Duration::from_millis(300));
        }
        set
    }

    fn credentials(&self) -> &'static str {
        if self.auth {
            "root:rootpw-123@"
        } else {
            ""
        }
    }

    /// The set's URI as an application gives it (no directConnection): `extra` is appended to the options.
    pub fn uri(&self, extra: &str) -> String {
        let hosts: Vec<String> = self.members.iter().map(|m| format!("127.0.0.1:{}", m.port)).collect();
        format!("mongodb://{}{}/?replicaSet=rsm{extra}", self.credentials(), hosts.join(","))
    }

    /// A direct connection to member `i` (reads allowed on a secondary), as root under auth.
    pub fn member_client(&self, i: usize) -> Client {
        let uri = format!(
            "mongodb://{}127.0.0.1:{}/?directConnection=true&readPreference=primaryPreferred",
            self.credentials(),
            self.members[i].port
        );
        rt().block_on(async { Client::with_uri_str(uri).await.unwrap() })
    }

    /// A client of the whole set (writes go to the primary).
    pub fn client(&self) -> Client {
        let uri = self.uri("");
        rt().block_on(async { Client::with_uri_str(uri).await.unwrap() })
    }
}

/// Until the server `c` reaches is a writable primary (60 s at most).
fn wait_for_primary(c: &Client) {
    let start = Instant::now();
    loop {
        let hello = block(c.database("admin").run_command(doc! {"hello": 1})).unwrap();
        if hello.get_bool("isWritablePrimary").unwrap_or(false) {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "replica set did not elect a primary");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A driver call (an `IntoFuture`) run to its end on the test runtime.
pub fn block<F: std::future::IntoFuture>(f: F) -> F::Output {
    rt().block_on(f.into_future())
}

/// One runtime for the test process: a driver client must stay on the runtime that made it.
pub fn rt() -> &'static tokio::runtime::Runtime {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap())
}

/// Insert the lines of an NDJSON export, in order.
pub fn load_ndjson(client: &Client, db: &str, coll: &str, path: impl AsRef<std::path::Path>) -> usize {
    let docs: Vec<Document> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            match mongodb::bson::Bson::try_from(v).unwrap() {
                mongodb::bson::Bson::Document(d) => d,
                _ => panic!("not a document"),
            }
        })
        .collect();
    let n = docs.len();
    rt().block_on(async {
        let c = client.database(db).collection::<Document>(coll);
        for chunk in docs.chunks(2000) {
            c.insert_many(chunk.to_vec()).await.unwrap();
        }
    });
    n
}

/// The real mongosh scripts/mongosh.sh installs (path in SHARDKEY_MONGOSH).
pub fn mongosh_binary() -> PathBuf {
    let p = std::env::var("SHARDKEY_MONGOSH")
        .expect("SHARDKEY_MONGOSH is not set: run the tests with scripts/test.sh, which installs the real mongosh");
    let p = PathBuf::from(p);
    assert!(p.is_file(), "SHARDKEY_MONGOSH={} is not a file", p.display());
    p
}

/// Run a script through the real mongosh against `uri` (no rc file, no telemetry).
pub fn mongosh(uri: &str, script: &str) -> Output {
    Command::new(mongosh_binary())
        .args(["--quiet", "--norc", uri, "--eval", script])
        .env("DO_NOT_TRACK", "1")
        .output()
        .expect("run mongosh")
}

/// A collection as mongodump writes it into `dir`: its documents as BSON and its
/// `metadata.json` (the `_id` index alone unless `indexes` gives the list).
pub fn dump_collection(dir: &std::path::Path, name: &str, docs: &[Document], indexes: Option<serde_json::Value>) {
    let mut f = std::fs::File::create(dir.join(format!("{name}.bson"))).unwrap();
    for d in docs {
        d.to_writer(&mut f).unwrap();
    }
    let indexes = indexes.unwrap_or_else(|| serde_json::json!([{"v": 2, "key": {"_id": 1}, "name": "_id_"}]));
    let meta = serde_json::json!({"indexes": indexes, "collectionName": name, "type": "collection", "options": {}});
    std::fs::write(dir.join(format!("{name}.metadata.json")), meta.to_string()).unwrap();
}

/// Whether two shard keys in JSON are the same key: the same fields in the same order
/// (`serde_json::Value`'s `==` finds `{a, b}` equal to `{b, a}`).
pub fn same_key(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    serde_json::to_string(a).ok() == serde_json::to_string(b).ok()
}
