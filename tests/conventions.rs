//! The usual CLI conventions: --help with examples (snapshots), completions and the man page,
//! colour only when allowed (`--color`, `NO_COLOR`), `--quiet`, `--verbose`, and `check`
//! finding shardkey.toml from the current directory up.

mod common;
use common::fixture;

use std::process::{Command, Output};

fn run_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_shardkey"));
    c.args(args).env_remove("NO_COLOR").env_remove("MONGODB_URI").env("COLUMNS", "100");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn run(args: &[&str]) -> Output {
    run_env(args, &[])
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn help_with_examples_for_every_subcommand() {
    for sub in ["", "analyze", "check", "workload", "sample", "plan", "completions", "man"] {
        let args: Vec<&str> = if sub.is_empty() { vec!["--help"] } else { vec![sub, "--help"] };
        let text = stdout(&run(&args));
        assert!(text.contains("Example"), "{sub}: no example");
        insta::assert_snapshot!(format!("help_{}", if sub.is_empty() { "shardkey" } else { sub }), text);
    }
}

#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let text = stdout(&run(&["completions", shell]));
        for sub in ["analyze", "check", "workload", "sample", "plan"] {
            assert!(text.contains(sub), "{shell} completion lacks {sub}");
        }
    }
    // The bash script is what bash itself accepts.
    let script = stdout(&run(&["completions", "bash"]));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("c.bash");
    std::fs::write(&p, &script).unwrap();
    let ok = Command::new("bash").args(["-n", p.to_str().unwrap()]).status().unwrap();
    assert!(ok.success(), "bash -n rejects the completion script");
    insta::assert_snapshot!("completions_bash_head", script.lines().take(12).collect::<Vec<_>>().join("\n"));
    let man = stdout(&run(&["man"]));
    assert!(man.starts_with(".ie") && man.contains(".TH shardkey 1") && man.contains("workload"), "{}", &man[..200.min(man.len())]);
}

#[test]
fn colour_only_when_allowed() {
    let docs = fixture("events.ndjson");
    let args = ["analyze", "--docs", &docs, "--key", "{country: 1}", "--key", "{_id: \"hashed\"}"];
    let esc = |o: &Output| stdout(o).contains('\u{1b}');
    let with = |extra: &[&str], env: &[(&str, &str)]| {
        let mut a: Vec<&str> = args.to_vec();
        a.extend_from_slice(extra);
        run_env(&a, env)
    };
    let always = with(&["--color", "always"], &[]);
    assert!(esc(&always), "--color always colours the verdicts");
    assert!(stdout(&always).contains("\u{1b}[31mpoor\u{1b}[0m"), "poor is red");
    // stdout is a pipe here: auto means none.
    assert!(!esc(&with(&[], &[])));
    assert!(!esc(&with(&["--color", "never"], &[])));
    // NO_COLOR (any non-empty value) turns auto off even for a terminal; the explicit flag still wins.
    assert!(!esc(&with(&["--color", "auto"], &[("NO_COLOR", "1")])));
    assert!(esc(&with(&["--color", "always"], &[("NO_COLOR", "1")])));
    // JSON and Markdown never carry escapes.
    assert!(!esc(&with(&["--color", "always", "--format", "json"], &[])));
    assert!(!esc(&with(&["--color", "always", "--format", "markdown"], &[])));
}

#[test]
fn quiet_says_nothing_and_verbose_says_what_was_read() {
    let docs = fixture("events.ndjson");
    let log = fixture("mongod.log");
    let args = ["analyze", "--docs", &docs, "--queries", &log, "--collection", "app.events", "--format", "json"];
    let mut q = vec!["-q"];
    q.extend_from_slice(&args);
    let o = run(&q);
    assert!(o.status.success());
    assert!(o.stderr.is_empty(), "stderr: {}", String::from_utf8_lossy(&o.stderr));
    let mut v = vec!["-v"];
    v.extend_from_slice(&args);
    let o = run(&v);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("read ") && err.contains("mongod.log: 1717 records, 1500 operations in"), "{err}");
    assert!(err.contains("sampled 10000 documents from"), "{err}");
    // each stage says when it ends, in order: a slow run shows where it is
    let at = |s: &str| err.find(s).unwrap_or_else(|| panic!("{s} not in {err}"));
    assert!(
        at("1469 operations on app.events in the logs") < at("18 candidates: ") && at("18 candidates: ") < at("read 10000 documents from")
    );
    assert!(at("read 10000 documents from") < at("measured, checked against the rules and scored every candidate"));
    // quiet and verbose together are a usage error.
    assert_eq!(run(&["-q", "-v", "analyze", "--docs", &docs]).status.code(), Some(2));
}

#[test]
fn check_finds_the_policy_from_the_current_directory_up() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("shardkey.toml"),
        "[[collection]]\nnamespace = \"app.events\"\nkey = '{projectId: 1, _id: 1}'\nmin_score = 10\n",
    )
    .unwrap();
    let sub = dir.path().join("a").join("b");
    std::fs::create_dir_all(&sub).unwrap();
    let docs = fixture("events.ndjson");
    let o = Command::new(env!("CARGO_BIN_EXE_shardkey"))
        .args(["check", "--docs", &docs])
        .current_dir(&sub)
        .env_remove("MONGODB_URI")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("policy ../../shardkey.toml: passed"), "{}", String::from_utf8_lossy(&o.stdout));
    let empty = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_shardkey"))
        .args(["check", "--docs", &docs])
        .current_dir(empty.path())
        .env_remove("MONGODB_URI")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no shardkey.toml in"));
}
