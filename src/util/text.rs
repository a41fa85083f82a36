//! Number and value formatting shared by the reasons (`score`) and the writers (`report`).

use serde_json::Value;

/// Text safe for a terminal: control characters from the input (terminal escapes
/// in a field name, say) are shown as `\u{1b}`; line breaks are kept or made spaces.
pub(crate) fn printable(s: &str, keep_newlines: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '\n' if keep_newlines => out.push('\n'),
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out
}

/// "email", "email and ssn", "a, b and c".
pub(crate) fn and_list(items: &[String]) -> String {
    match items.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => items.join(""),
    }
}

/// 1234567 → "1,234,567".
pub(crate) fn fmt_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A size in the unit that shows it: 512 B, 1.5 KiB, 3.2 MiB, 2.0 TiB.
pub(crate) fn bytes(n: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let (mut v, mut u) = (n as f64, 0);
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// `n` and the noun, singular for 1: "1 shard", "4 shards".
pub(crate) fn count_of(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Bytes as whole MiB: "128 MiB".
pub(crate) fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// A percentage with one decimal, "-" when not measured.
pub(crate) fn pct(v: Option<f64>) -> String {
    match v {
        Some(x) => format!("{:.1}%", x),
        None => "-".into(),
    }
}

/// Short display of a key value (`{field: value}` Extended JSON) for tables and reasons:
/// the value alone, Extended JSON wrappers unwrapped, at most 40 characters.
pub(crate) fn short_value(v: &Value) -> String {
    let s = match v {
        Value::Object(m) if m.len() == 1 => match m.values().next() {
            Some(Value::Object(x)) if x.len() == 1 && x.keys().next().is_some_and(|k| k.starts_with('$')) => {
                x.values().next().map(|y| y.to_string()).unwrap_or_default()
            }
            Some(other) => other.to_string(),
            None => String::new(),
        },
        other => other.to_string(),
    };
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(39).collect::<String>())
    } else {
        s
    }
}

/// The name of `seen` closest to `name`, when it is close (Jaro-Winkler 0.85 or more, as
/// spelling suggestions use; case ignored): "did you mean".
pub(crate) fn closest<'s>(name: &str, seen: &'s [String]) -> Option<&'s str> {
    let f = name.to_lowercase();
    seen.iter()
        .map(|s| (strsim::jaro_winkler(&f, &s.to_lowercase()), s))
        .filter(|(score, _)| *score >= 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, s)| s.as_str())
}

#[cfg(test)]
mod tests {

    #[test]
    fn sizes_in_the_unit_that_shows_them() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(2 << 40), "2.0 TiB");
        assert_eq!(count_of(1, "shard", "shards"), "1 shard");
        assert_eq!(count_of(4, "shard", "shards"), "4 shards");
    }
    use super::*;
    use serde_json::json;

    #[test]
    fn formats() {
        assert_eq!(printable("a\u{1b}[31mb\nc\r", true), "a\\u{1b}[31mb\nc ");
        assert_eq!(printable("a\nb", false), "a b");
        assert_eq!(fmt_count(0), "0");
        assert_eq!(fmt_count(1234567), "1,234,567");
        assert_eq!(mib(128 * 1024 * 1024), "128 MiB");
        assert_eq!(pct(Some(12.345)), "12.3%");
        assert_eq!(pct(None), "-");
        assert_eq!(short_value(&json!({"a": "x"})), "\"x\"");
        assert_eq!(short_value(&json!({"d": {"$date": "2024-01-01"}})), "\"2024-01-01\"");
        assert_eq!(short_value(&json!({"a": 1, "b": 2})), "{\"a\":1,\"b\":2}");
        assert_eq!(short_value(&json!({"a": "x".repeat(50)})).chars().count(), 40);
    }
}
