//! A real mongod for tests: the binary scripts/mongod.sh installs (path in
//! SHARDKEY_MONGOD), started on a free 127.0.0.1 port with a temporary dbpath,
//! and stopped when the guard drops. No test passes without it.
#![allow(dead_code)]

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
            let start = Instant::now();
            loop {
                let hello = c.database("admin").run_command(doc! {"hello": 1}).await.unwrap();
                if hello.get_bool("isWritablePrimary").unwrap_or(false) {
                    break;
                }
                assert!(start.elapsed() < Duration::from_secs(60), "replica set did not elect a primary");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
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
