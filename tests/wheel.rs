//! The wheel as a user meets it (README "Install"): the wheel scripts/wheel.sh builds (path in
//! $SHARDKEY_WHEEL, set by scripts/test.sh) installs with pip into a fresh virtual environment,
//! puts the very binary cargo built on PATH, runs the README's main command, and `pip uninstall`
//! removes it. And the action's install step (scripts/ci-gate.sh install) takes a release's
//! static binary only when it matches the release's SHA256SUMS.

mod common;
use common::{fixture, root};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn wheel() -> PathBuf {
    let p = std::env::var_os("SHARDKEY_WHEEL")
        .map(PathBuf::from)
        .expect("SHARDKEY_WHEEL is not set: run the tests with scripts/test.sh, which builds the wheel (scripts/wheel.sh)");
    assert!(p.is_file(), "SHARDKEY_WHEEL={} is not a file", p.display());
    p
}

fn run(cmd: &mut Command) -> Output {
    let o = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(o.status.success(), "{cmd:?} failed: {}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    o
}

/// One member of the wheel (a zip), read by Python's own zipfile as pip reads it.
fn member(wheel: &Path, suffix: &str) -> Vec<u8> {
    let script = "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nn = [i for i in z.namelist() if i.endswith(sys.argv[2])]\nassert len(n) == 1, n\nsys.stdout.buffer.write(z.read(n[0]))";
    run(Command::new("python3").args(["-c", script]).arg(wheel).arg(suffix)).stdout
}

fn readme_main_command(bin: &Path) -> Output {
    let o = Command::new(bin)
        .args(["analyze", "--docs", &fixture("events.ndjson"), "--queries", &fixture("mongod.log")])
        .args(["--collection", "app.events", "--total-docs", "5000000", "--color", "never"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

#[test]
fn the_wheel_carries_the_built_binary_and_the_metadata_a_user_expects() {
    let w = wheel();
    let version = env!("CARGO_PKG_VERSION");
    let name = w.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with(&format!("shardkey-{version}-py3-none-")), "{name}");
    // A platform wheel for Linux (manylinux here; musllinux from the release workflow too).
    assert!(name.contains("linux_") && (name.ends_with("_x86_64.whl") || name.ends_with("_aarch64.whl")), "{name}");

    // The executable inside is the one cargo built for the wheel (its checksum, which
    // scripts/wheel.sh took from cargo's output before the tests' build, with the dev-dependencies'
    // features, replaced it), byte for byte.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("shardkey"), member(&w, ".data/scripts/shardkey")).unwrap();
    let sums = w.parent().unwrap().join("shardkey.built.sha256");
    run(Command::new("sha256sum").current_dir(dir.path()).arg("--check").arg(&sums));

    let meta = String::from_utf8(member(&w, ".dist-info/METADATA")).unwrap();
    let field = |k: &str| meta.lines().filter_map(|l| l.strip_prefix(&format!("{k}: "))).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(field("Name"), ["shardkey"]);
    assert_eq!(field("Version"), [version]);
    assert_eq!(field("Summary"), [env!("CARGO_PKG_DESCRIPTION")]);
    assert_eq!(field("License"), [env!("CARGO_PKG_LICENSE")]);
    assert!(field("Classifier").iter().any(|c| c == "Environment :: Console"), "{meta}");
    assert!(field("Classifier").iter().any(|c| c == "Topic :: Database"), "{meta}");
    for url in ["Homepage", "Repository", "Issues"] {
        assert!(field("Project-URL").iter().any(|u| u.starts_with(&format!("{url}, https://"))), "no {url} URL: {meta}");
    }
    assert!(field("Description-Content-Type")[0].starts_with("text/markdown"), "{meta}");
    // The README is the long description, whole.
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let body = meta.split_once("\n\n").unwrap().1;
    assert_eq!(body.trim_end(), readme.trim_end());

    let wheel_file = String::from_utf8(member(&w, ".dist-info/WHEEL")).unwrap();
    assert!(wheel_file.contains("Root-Is-Purelib: false"), "{wheel_file}");
}

#[test]
fn pip_installs_it_in_a_fresh_venv_and_uninstalls_it() {
    let w = wheel();
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    let bin = venv.join("bin");
    assert!(!bin.join("shardkey").exists());
    // No index: nothing but the wheel, as on a machine without a compiler or a network.
    run(Command::new(bin.join("pip")).args(["install", "--no-index", "--disable-pip-version-check", "--quiet"]).arg(&w));

    let installed = bin.join("shardkey");
    let v = run(Command::new(&installed).arg("--version"));
    assert_eq!(String::from_utf8_lossy(&v.stdout).trim(), format!("shardkey {}", env!("CARGO_PKG_VERSION")));
    // `shardkey` on PATH (a venv's bin, as pipx and activation give it) runs README's main command,
    // with the same report as the binary cargo built.
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let which = run(Command::new("sh").args(["-c", "command -v shardkey"]).env("PATH", &path));
    assert_eq!(String::from_utf8_lossy(&which.stdout).trim(), installed.to_str().unwrap());
    let from_wheel = readme_main_command(&installed);
    let from_cargo = readme_main_command(Path::new(env!("CARGO_BIN_EXE_shardkey")));
    assert!(String::from_utf8_lossy(&from_wheel.stdout).contains("{"), "no key in the report");
    assert_eq!(from_wheel.stdout, from_cargo.stdout);

    run(Command::new(bin.join("pip")).args(["uninstall", "--yes", "--quiet", "shardkey"]));
    assert!(!installed.exists(), "pip uninstall left {}", installed.display());
    let show = Command::new(bin.join("pip")).args(["show", "shardkey"]).output().unwrap();
    assert!(!show.status.success(), "pip still lists shardkey");
}

/// A release as .github/workflows/release.yml lays it out, served from a directory.
fn fake_release(dir: &Path, tamper: bool) -> String {
    let version = env!("CARGO_PKG_VERSION");
    let arch = match std::env::consts::ARCH {
        "aarch64" => "aarch64",
        _ => "x86_64",
    };
    let tag = dir.join(format!("v{version}"));
    let stem = format!("shardkey-{version}-{arch}-unknown-linux-musl");
    std::fs::create_dir_all(tag.join(&stem)).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_shardkey"), tag.join(&stem).join("shardkey")).unwrap();
    run(Command::new("tar").current_dir(&tag).args(["-czf", &format!("{stem}.tar.gz"), &stem]));
    run(Command::new("sh").current_dir(&tag).args(["-c", "sha256sum *.tar.gz > SHA256SUMS"]));
    if tamper {
        // The asset changes after its checksum was written.
        let asset = tag.join(format!("{stem}.tar.gz"));
        let mut bytes = std::fs::read(&asset).unwrap();
        bytes.push(b'x');
        std::fs::write(&asset, bytes).unwrap();
    }
    format!("file://{}", dir.display())
}

/// PATH without cargo: whatever runs must not compile.
fn path_without_cargo() -> String {
    std::env::var("PATH").unwrap_or_default().split(':').filter(|d| !Path::new(d).join("cargo").exists()).collect::<Vec<_>>().join(":")
}

fn ci_install(url: &str, reference: &str, dest: &Path) -> Output {
    Command::new(root().join("scripts/ci-gate.sh"))
        .arg("install")
        .env("PATH", path_without_cargo())
        .env("SHARDKEY_RELEASE_URL", url)
        .env("SHARDKEY_ACTION_REF", reference)
        .env("SHARDKEY_INSTALL_ROOT", dest)
        .env_remove("GITHUB_PATH")
        .output()
        .unwrap()
}

#[test]
fn the_action_installs_a_release_tag_without_compiling_and_checks_its_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let url = fake_release(&dir.path().join("ok"), false);
    let dest = dir.path().join("tool");
    let o = ci_install(&url, "v1", &dest);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = run(Command::new(dest.join("bin/shardkey")).arg("--version"));
    assert_eq!(String::from_utf8_lossy(&v.stdout).trim(), format!("shardkey {}", env!("CARGO_PKG_VERSION")));

    // An asset that does not match SHA256SUMS is refused, not installed, not compiled around.
    let bad = fake_release(&dir.path().join("bad"), true);
    let dest2 = dir.path().join("tool2");
    let o = ci_install(&bad, "v1", &dest2);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("does not match the release's SHA256SUMS"));
    assert!(!dest2.join("bin/shardkey").exists());

    // A release without this machine's asset: built from source instead, and said.
    let o = ci_install(&format!("file://{}", dir.path().join("empty").display()), "v1", &dir.path().join("tool4"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no release asset") && err.contains("needs cargo"), "{err}");

    // A branch may hold unreleased code: it compiles (here: says cargo is needed).
    let o = ci_install(&url, "main", &dir.path().join("tool3"));
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("needs cargo"), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The release workflow makes the assets the install step fetches, under the same names, for
/// both architectures, and checks each wheel with auditwheel.
#[test]
fn the_release_workflow_makes_what_the_action_installs() {
    use yaml_rust2::YamlLoader;
    let text = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    let wf = &YamlLoader::load_from_str(&text).unwrap()[0];
    let jobs = &wf["jobs"];
    let targets: Vec<&str> = jobs["wheels"]["strategy"]["matrix"]["target"].as_vec().unwrap().iter().filter_map(|t| t.as_str()).collect();
    assert_eq!(targets, ["x86_64", "aarch64"]);
    let libcs: Vec<&str> = jobs["wheels"]["strategy"]["matrix"]["libc"].as_vec().unwrap().iter().filter_map(|t| t.as_str()).collect();
    assert_eq!(libcs, ["manylinux2014", "musllinux_1_2"]);
    assert!(text.contains("auditwheel show"));
    let script = std::fs::read_to_string(root().join("scripts/ci-gate.sh")).unwrap();
    // The same asset name on both sides, and the checksum file.
    assert!(text.contains(r#"dir="shardkey-$VERSION-$arch-unknown-linux-musl""#));
    assert!(script.contains(r#"name="shardkey-$version-$arch-unknown-linux-musl.tar.gz""#));
    assert!(text.contains("sha256sum * > SHA256SUMS") && script.contains("SHA256SUMS"));
    for job in ["wheels", "sdist", "binaries", "github-release", "pypi", "crates-io"] {
        assert!(!jobs[job].is_badvalue(), "no job {job}");
    }
}
