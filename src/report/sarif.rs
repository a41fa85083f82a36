//! `check --format sarif`: SARIF 2.1.0 for GitHub code scanning: one result per violated
//! rule, located at the rule's line in the policy file (the namespace's line, else line 1).

use super::CheckReport;
use serde_json::{json, Value};

const INFO_URI: &str = "https://github.com/shardkey/shardkey#ci-gate-shardkey-check";

pub(super) fn write(r: &CheckReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut rules: Vec<Value> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    for c in &r.collections {
        for x in c.rules.iter().filter(|x| !x.passed) {
            if !rules.iter().any(|v| v["id"] == x.rule) {
                rules.push(json!({
                    "id": x.rule,
                    "name": x.rule,
                    "shortDescription": {"text": format!("{} ({})", x.rule, x.metric)},
                    "helpUri": INFO_URI,
                }));
            }
            let line = r.line_of(&c.namespace, x.rule);
            let known = r.baseline.as_ref().is_some_and(|b| b.known.contains(&(c.namespace.clone(), x.rule.to_string())));
            let mut result = json!({
                "ruleId": x.rule,
                "level": if known { "warning" } else { "error" },
                "message": {"text": format!("{} {}: {}", c.namespace, c.key, x.message)},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": r.policy},
                    "region": {"startLine": line}
                }}],
                "partialFingerprints": {"shardkeyRule/v1": format!("{}/{}", c.namespace, x.rule)},
                "properties": {"namespace": c.namespace, "key": c.key.to_string(), "actual": x.actual, "threshold": x.threshold},
            });
            if r.baseline.is_some() {
                result["baselineState"] = json!(if known { "unchanged" } else { "new" });
            }
            results.push(result);
        }
    }
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "shardkey", "version": r.tool.version, "informationUri": INFO_URI, "rules": rules}},
            "results": results,
        }],
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    out.write_all(b"\n")
}
