//! `--format html`: one self-contained file, rendered in a real headless Chromium (Debian's,
//! installed by scripts/test.sh as $SHARDKEY_CHROMIUM): it loads with no console error and
//! its screenshot is not blank; it names no external resource; `--redact` holds.

mod common;
use common::{fixture, root};

use std::path::PathBuf;
use std::process::Command;

fn html(extra: &[&str]) -> String {
    let docs = fixture("events.ndjson");
    let log = fixture("mongod.log");
    let mut args =
        vec!["analyze", "--docs", &docs, "--queries", &log, "--collection", "app.events", "--total-docs", "5000000", "--format", "html"];
    args.extend_from_slice(extra);
    let o = Command::new(env!("CARGO_BIN_EXE_shardkey")).args(&args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

fn chromium() -> PathBuf {
    let p = std::env::var_os("SHARDKEY_CHROMIUM").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(p.exists(), "no Chromium at {} (scripts/test.sh installs Debian's and sets SHARDKEY_CHROMIUM)", p.display());
    p
}

#[test]
fn self_contained_with_no_external_resource_and_redaction_holding() {
    let h = html(&[]);
    assert!(h.starts_with("<!DOCTYPE html>") && h.trim_end().ends_with("</html>"));
    for forbidden in ["<script", "<link", "src=", "@import", "url(", "href=\"http", "href='http", "<iframe", "<img"] {
        assert!(!h.contains(forbidden), "the report holds {forbidden}");
    }
    // Every link stays inside the page.
    for part in h.split("href=\"").skip(1) {
        assert!(part.starts_with('#'), "external link: {}", &part[..40.min(part.len())]);
    }
    // The pictures and the words are there.
    assert!(h.matches("<svg").count() >= 8, "per-candidate charts");
    assert!(h.contains("Recommended: <code>{projectId: 1, _id: 1}</code>"));
    assert!(h.contains("proj-0000"));
    let r = html(&["--redact"]);
    assert!(!r.contains("proj-0000") && !r.contains("user-0"), "--redact leaks a value");
    assert!(r.contains("string#"));
}

#[test]
fn renders_in_headless_chromium_without_errors_and_not_blank() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(&page, html(&[])).unwrap();
    let shot = root().join("target").join("html-report.png");
    let _ = std::fs::remove_file(&shot);
    // Kept in target/ for a look by hand; CARGO_TARGET_DIR elsewhere leaves no target/ here.
    std::fs::create_dir_all(shot.parent().unwrap()).unwrap();
    let o = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1280,1600",
            "--enable-logging=stderr",
            "--v=0",
            &format!("--screenshot={}", shot.display()),
            &format!("file://{}", page.display()),
        ])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{log}");
    // Console messages (errors included) are logged as CONSOLE lines; failed loads as net::ERR.
    for line in log.lines() {
        assert!(!line.contains("CONSOLE") && !line.contains("net::ERR") && !line.contains("Uncaught"), "{line}");
    }
    let decoder = png::Decoder::new(std::fs::File::open(&shot).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1280, 1600));
    let px = info.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
    let white = pixels.iter().filter(|p| p[..3].iter().all(|&c| c > 245)).count();
    let colours: std::collections::HashSet<&[u8]> = pixels.iter().map(|p| &p[..3]).collect();
    assert!(white < pixels.len() * 97 / 100, "the screenshot is nearly blank: {white} of {} white", pixels.len());
    assert!(colours.len() > 50, "only {} colours", colours.len());
}
