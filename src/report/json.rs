//! JSON writer: the `Report` as documented in README ("JSON schema").

use super::Report;

pub fn render(r: &Report) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("the report serialises");
    s.push('\n');
    s
}
