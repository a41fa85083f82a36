//! `check --format gitlab`: GitLab code quality JSON (an array of issues), one per violated
//! rule, at the rule's line in the policy file.

use super::CheckReport;
use serde_json::{json, Value};

pub(super) fn write(r: &CheckReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut issues: Vec<Value> = Vec::new();
    for c in &r.collections {
        for x in c.rules.iter().filter(|x| !x.passed) {
            let line = r.line_of(&c.namespace, x.rule);
            let known = r.baseline.as_ref().is_some_and(|b| b.known.contains(&(c.namespace.clone(), x.rule.to_string())));
            issues.push(json!({
                "description": format!("{} {}: {}", c.namespace, c.key, x.message),
                "check_name": x.rule,
                // Stable across runs for the same violation: GitLab matches issues by it.
                "fingerprint": format!("{:x}", md5_hex(&format!("{}/{}", c.namespace, x.rule))),
                "severity": if known { "minor" } else { "major" },
                "location": {"path": r.policy, "lines": {"begin": line}},
            }));
        }
    }
    serde_json::to_writer_pretty(&mut *out, &issues)?;
    out.write_all(b"\n")
}

fn md5_hex(s: &str) -> u128 {
    use md5::{Digest, Md5};
    u128::from_be_bytes(Md5::digest(s.as_bytes()).into())
}
