//! `check --format gitlab`: GitLab code quality JSON (an array of issues), one per violated
//! rule, at the rule's line in the policy file.

use super::check::CheckReport;
use serde_json::{json, Value};

pub(super) fn write(r: &CheckReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut issues: Vec<Value> = Vec::new();
    for f in r.flagged() {
        let x = f.rule;
        let (file, line) = f.location(&r.policy);
        issues.push(json!({
            "description": f.text("; "),
            "check_name": x.rule,
            // Stable across runs for the same violation: GitLab matches issues by it.
            "fingerprint": format!("{:x}", md5_hex(&format!("{}/{}", f.namespace, x.rule))),
            "severity": if f.is_error() { "major" } else { "minor" },
            "location": {"path": file, "lines": {"begin": line}},
        }));
    }
    for c in r.baseline.iter().flat_map(|b| b.score_drops()) {
        let (file, line) = c.location.as_ref().map_or((r.policy.as_str(), 1), |l| (l.file.as_str(), l.line));
        issues.push(json!({
            "description": c.message,
            "check_name": "score_tolerance",
            "fingerprint": format!("{:x}", md5_hex(&format!("{}/score", c.namespace))),
            "severity": "major",
            "location": {"path": file, "lines": {"begin": line}},
        }));
    }
    serde_json::to_writer_pretty(&mut *out, &issues)?;
    out.write_all(b"\n")
}

fn md5_hex(s: &str) -> u128 {
    use md5::{Digest, Md5};
    u128::from_be_bytes(Md5::digest(s.as_bytes()).into())
}
