//! `check --format sarif`: SARIF 2.1.0 for GitHub code scanning: one result per violated
//! rule, located at the rule's line in the policy file (the namespace's line, else line 1).

use super::check::CheckReport;
use serde_json::{json, Value};

const INFO_URI: &str = "https://github.com/shardkey/shardkey#ci-gate-shardkey-check";

pub(super) fn write(r: &CheckReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut rules: Vec<Value> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    for f in r.flagged() {
        let x = f.rule;
        if !rules.iter().any(|v| v["id"] == x.rule) {
            rules.push(json!({
                "id": x.rule,
                "name": x.rule,
                "shortDescription": {"text": format!("{} ({})", x.rule, x.metric)},
                "helpUri": INFO_URI,
            }));
        }
        let (file, line) = f.location(&r.policy);
        let mut result = json!({
            "ruleId": x.rule,
            "level": if f.is_error() { "error" } else { "warning" },
            "message": {"text": f.text("\n- ")},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": file},
                "region": {"startLine": line}
            }}],
            "partialFingerprints": {"shardkeyRule/v1": format!("{}/{}", f.namespace, x.rule)},
            "properties": {"namespace": f.namespace, "actual": x.actual, "threshold": x.threshold},
        });
        if let Some(k) = f.key {
            result["properties"]["key"] = json!(k.to_string());
        }
        if r.baseline.is_some() {
            result["baselineState"] = json!(if f.known { "unchanged" } else { "new" });
        }
        results.push(result);
    }
    for c in r.baseline.iter().flat_map(|b| b.score_drops()) {
        let (file, line) = c.location.as_ref().map_or((r.policy.as_str(), 1), |l| (l.file.as_str(), l.line));
        if !rules.iter().any(|v| v["id"] == "score_tolerance") {
            rules.push(json!({
                "id": "score_tolerance",
                "name": "score_tolerance",
                "shortDescription": {"text": "score_tolerance (the score against --baseline)"},
                "helpUri": INFO_URI,
            }));
        }
        results.push(json!({
            "ruleId": "score_tolerance",
            "level": "error",
            "message": {"text": c.message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": file}, "region": {"startLine": line}}}],
            "partialFingerprints": {"shardkeyRule/v1": format!("{}/score", c.namespace)},
            "baselineState": "updated",
            "properties": {"namespace": c.namespace},
        }));
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
