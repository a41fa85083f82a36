//! JSON writer: the `Report` as documented in README ("JSON schema").

use super::{CheckReport, Report};

pub fn render(r: &Report) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("the report serialises");
    s.push('\n');
    s
}

pub fn render_check(r: &CheckReport) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("the check report serialises");
    s.push('\n');
    s
}
