//! Report writers: they only format the `Report` the pipeline built.

pub mod json;
pub mod markdown;
pub mod model;
pub mod table;

pub use model::*;

/// Short display of an Extended JSON value for tables and Markdown.
pub fn short_value(v: &serde_json::Value) -> String {
    let s = match v {
        serde_json::Value::Object(m) if m.len() == 1 => {
            let (_, inner) = m.iter().next().expect("one field");
            match inner {
                serde_json::Value::Object(x) if x.len() == 1 && x.keys().next().is_some_and(|k| k.starts_with('$')) => {
                    x.values().next().map(|y| y.to_string()).unwrap_or_default()
                }
                other => other.to_string(),
            }
        }
        other => other.to_string(),
    };
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(39).collect::<String>())
    } else {
        s
    }
}

pub fn pct(v: Option<f64>) -> String {
    match v {
        Some(x) => format!("{:.1}%", x),
        None => "-".into(),
    }
}
