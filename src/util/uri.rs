//! MongoDB connection strings: what may be printed of them (never user,
//! password or options) and the secrets to scrub from any message, panics included.

/// The part after `scheme://` and before the options, split at the last `@`
/// (a password may hold an unencoded `/`, `:` or `@`): (userinfo, hosts and path).
fn split(uri: &str) -> Option<(&str, Option<&str>, &str)> {
    let (scheme, rest) = uri.split_once("://")?;
    let before_options = rest.split('?').next().unwrap_or("");
    Some(match before_options.rsplit_once('@') {
        Some((userinfo, hosts)) => (scheme, Some(userinfo), hosts),
        None => (scheme, None, before_options),
    })
}

/// A URI with its credentials and options removed, safe to print.
pub(crate) fn redact_uri(uri: &str) -> String {
    match split(uri) {
        Some((scheme, _, hosts)) => format!("{scheme}://{hosts}"),
        None => "<uri>".into(),
    }
}

/// Every form of the URI's password (raw and percent-decoded), to scrub from messages.
pub(crate) fn secrets_of(uri: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((_, Some(userinfo), _)) = split(uri) {
        if let Some((_, pw)) = userinfo.split_once(':') {
            if !pw.is_empty() {
                out.push(pw.to_string());
                let decoded = percent_decode(pw);
                if decoded != pw {
                    out.push(decoded);
                }
            }
        }
    }
    out
}

/// Percent-decoding that never fails: a `%` not followed by two hex digits stays as it is.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Replace every secret in a message.
pub fn scrub(msg: &str, secrets: &[String]) -> String {
    let mut m = msg.to_string();
    for s in secrets {
        if s.len() >= 2 {
            m = m.replace(s.as_str(), "****");
        }
    }
    m
}

/// The secrets of every connection string in the command line and in `MONGODB_URI`.
pub fn secrets_in_environment() -> Vec<String> {
    let mut out: Vec<String> = std::env::args_os()
        .filter_map(|a| a.into_string().ok())
        .flat_map(|a| {
            // `--uri=mongodb://...` as well as `--uri mongodb://...`
            let s = a.find("://").map(|i| a[..i].rfind('=').map(|e| a[e + 1..].to_string()).unwrap_or(a.clone()));
            s.map(|u| secrets_of(&u)).unwrap_or_default()
        })
        .collect();
    if let Ok(u) = std::env::var("MONGODB_URI") {
        out.extend(secrets_of(&u));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_redacted_and_passwords_found() {
        let u = "mongodb://alice:s%40cret@db1:27017,db2/app?authSource=admin&tls=true";
        assert_eq!(redact_uri(u), "mongodb://db1:27017,db2/app");
        assert_eq!(secrets_of(u), vec!["s%40cret".to_string(), "s@cret".to_string()]);
        assert_eq!(redact_uri("mongodb+srv://u:p@cluster0.x.net"), "mongodb+srv://cluster0.x.net");
        assert!(secrets_of("mongodb://localhost").is_empty());
        assert_eq!(scrub("bad s@cret here", &secrets_of(u)), "bad **** here");
    }

    #[test]
    fn unencoded_and_multibyte_passwords() {
        // A raw `/` in the password: the hosts start after the last `@`.
        let u = "mongodb://u:Sec/ret11@host/";
        assert_eq!(redact_uri(u), "mongodb://host/");
        assert_eq!(secrets_of(u), vec!["Sec/ret11".to_string()]);
        // `%` before a multi-byte character must not panic.
        let u = "mongodb://admin:Pw%€uro99@host/";
        assert_eq!(secrets_of(u), vec!["Pw%€uro99".to_string()]);
        assert_eq!(redact_uri(u), "mongodb://host/");
        // `@` and `:` in the password.
        let u = "mongodb://u:a@b:c@host:1/db?x=1";
        assert_eq!(secrets_of(u), vec!["a@b:c".to_string()]);
        assert_eq!(redact_uri(u), "mongodb://host:1/db");
        assert_eq!(percent_decode("%4"), "%4");
        assert_eq!(percent_decode("a%41"), "aA");
    }
}
