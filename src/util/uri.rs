//! MongoDB connection strings: what may be printed of them (never user,
//! password or options) and the secrets to scrub from any message, panics included.

/// A URI's parts: (scheme, userinfo, hosts and path, options). The part after `scheme://` is
/// split at the last `@` first: nothing before it is ever taken for the hosts, so a raw `?`,
/// `/`, `:` or `@` in a password cannot put part of it on screen (an `@` in the options hides
/// the hosts instead).
fn parts(uri: &str) -> Option<(&str, Option<&str>, &str, &str)> {
    let (scheme, rest) = uri.split_once("://")?;
    let (userinfo, after) = match rest.rsplit_once('@') {
        Some((u, a)) => (Some(u), a),
        None => (None, rest),
    };
    let (host_path, query) = after.split_once('?').unwrap_or((after, ""));
    Some((scheme, userinfo, host_path, query))
}

/// `parts` without the options: what redaction and the secrets read.
fn split(uri: &str) -> Option<(&str, Option<&str>, &str)> {
    parts(uri).map(|(scheme, userinfo, host_path, _)| (scheme, userinfo, host_path))
}

/// Why the user name or password of a URI cannot be read as the driver reads it (RFC 3986:
/// `: / ? # [ ] @` and a `%` that starts no encoding must be percent-encoded), if it cannot.
pub(crate) fn userinfo_problem(uri: &str) -> Option<String> {
    let (_, userinfo, _) = split(uri)?;
    let userinfo = userinfo?;
    let (user, password) = match userinfo.split_once(':') {
        Some((u, p)) => (u, Some(p)),
        None => (userinfo, None),
    };
    for (what, text) in [("user name", Some(user)), ("password", password)] {
        let Some(text) = text else { continue };
        let b = text.as_bytes();
        for (i, &c) in b.iter().enumerate() {
            let bad = match c {
                b':' | b'/' | b'?' | b'#' | b'[' | b']' | b'@' => true,
                b'%' => !(b.get(i + 1).is_some_and(u8::is_ascii_hexdigit) && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit)),
                _ => false,
            };
            if bad {
                let c = c as char;
                return Some(format!("the {what} holds a raw '{c}': percent-encode it as %{:02X}", c as u32));
            }
        }
    }
    None
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
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
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

/// Passwords that reached the process another way than a URI: the prompt, `--config`.
static REMEMBERED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Keep a password (and its percent-encoded form) among the secrets every message is scrubbed of.
pub(crate) fn remember_secret(secret: &str) {
    if secret.is_empty() {
        return;
    }
    let mut kept = REMEMBERED.lock().unwrap_or_else(|p| p.into_inner());
    kept.push(secret.to_string());
    let encoded = encode_component(secret);
    if encoded != secret {
        kept.push(encoded);
    }
}

/// The secrets of every connection string in the command line and in `MONGODB_URI`, a
/// `-p`/`--password` value, and every password remembered (prompted, from `--config`).
pub fn secrets_in_environment() -> Vec<String> {
    let args: Vec<String> = std::env::args_os().filter_map(|a| a.into_string().ok()).collect();
    let mut out: Vec<String> = args
        .iter()
        .flat_map(|a| {
            // `--uri=mongodb://...` as well as `--uri mongodb://...`
            let s = a.find("://").map(|i| a[..i].rfind('=').map(|e| a[e + 1..].to_string()).unwrap_or(a.clone()));
            s.map(|u| secrets_of(&u)).unwrap_or_default()
        })
        .collect();
    for (i, a) in args.iter().enumerate() {
        let value = if a == "-p" || a == "--password" {
            args.get(i + 1).filter(|v| !v.starts_with('-')).cloned()
        } else if let Some(v) = a.strip_prefix("--password=") {
            Some(v.to_string())
        } else {
            a.strip_prefix("-p").filter(|v| !v.is_empty() && !a.starts_with("--")).map(|v| v.trim_start_matches('=').to_string())
        };
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            out.push(encode_component(&v));
            out.push(v);
        }
    }
    if let Ok(u) = std::env::var("MONGODB_URI") {
        out.extend(secrets_of(&u));
    }
    out.extend(REMEMBERED.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned());
    out
}

/// Percent-encoding for a user name or password in a connection string (RFC 3986 unreserved kept).
fn encode_component(s: &str) -> String {
    use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
    const USERINFO: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');
    utf8_percent_encode(s, USERINFO).to_string()
}

/// A connection string taken apart just enough to set credentials and options on it, the way
/// mongosh applies its flags to a URI (`arg-mapper.ts`, mongodb-js/mongosh 59e4b80: a flag
/// replaces the URI's own value). The driver validates the result when it connects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConnectionString {
    scheme: String,
    /// `user[:password]`, percent-encoded as in the URI.
    userinfo: Option<String>,
    hosts: String,
    /// The default database (after `/`), possibly empty.
    database: String,
    options: Vec<(String, String)>,
}

impl ConnectionString {
    /// `mongodb://` or `mongodb+srv://` strings; anything else is `None`.
    pub(crate) fn parse(uri: &str) -> Option<ConnectionString> {
        let (scheme, userinfo, host_path, query) = parts(uri)?;
        if scheme != "mongodb" && scheme != "mongodb+srv" {
            return None;
        }
        let userinfo = userinfo.map(str::to_string);
        let (hosts, database) = host_path.split_once('/').unwrap_or((host_path, ""));
        if hosts.is_empty() {
            return None;
        }
        let options = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (k.to_string(), v.to_string())
            })
            .collect();
        Some(ConnectionString { scheme: scheme.into(), userinfo, hosts: hosts.into(), database: database.into(), options })
    }

    /// `mongodb://HOSTS/` (hosts as `h1:p1,h2:p2`).
    pub(crate) fn with_hosts(hosts: &str) -> ConnectionString {
        ConnectionString { scheme: "mongodb".into(), userinfo: None, hosts: hosts.into(), database: String::new(), options: Vec::new() }
    }

    /// The URI's default database (`mongodb://host/shop` → `shop`), decoded.
    pub(crate) fn database(&self) -> Option<String> {
        (!self.database.is_empty()).then(|| percent_decode(&self.database))
    }

    pub(crate) fn has_username(&self) -> bool {
        self.userinfo.as_deref().is_some_and(|u| !u.split(':').next().unwrap_or("").is_empty())
    }

    pub(crate) fn has_password(&self) -> bool {
        self.userinfo.as_deref().and_then(|u| u.split_once(':')).is_some_and(|(_, p)| !p.is_empty())
    }

    /// The user name, decoded.
    pub(crate) fn username(&self) -> Option<String> {
        let u = self.userinfo.as_deref()?.split(':').next()?;
        (!u.is_empty()).then(|| percent_decode(u))
    }

    /// Set the user name, keeping the URI's password.
    pub(crate) fn set_username(&mut self, user: &str) {
        let password = self.userinfo.as_deref().and_then(|u| u.split_once(':')).map(|(_, p)| p.to_string());
        self.userinfo = Some(match password {
            Some(p) => format!("{}:{p}", encode_component(user)),
            None => encode_component(user),
        });
    }

    pub(crate) fn set_password(&mut self, password: &str) {
        let user = self.userinfo.as_deref().map(|u| u.split(':').next().unwrap_or("").to_string()).unwrap_or_default();
        self.userinfo = Some(format!("{user}:{}", encode_component(password)));
    }

    /// An option's value, decoded (names are case-insensitive, as the driver reads them).
    pub(crate) fn option(&self, name: &str) -> Option<String> {
        self.options.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| percent_decode(v))
    }

    /// Set an option, replacing the URI's own (the driver percent-decodes option values).
    pub(crate) fn set_option(&mut self, name: &str, value: &str) {
        use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
        const VALUE: &AsciiSet = &CONTROLS.add(b' ').add(b'&').add(b'=').add(b'%').add(b'#').add(b'?').add(b'+').add(b'"');
        self.options.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self.options.push((name.to_string(), utf8_percent_encode(value, VALUE).to_string()));
    }
}

impl std::fmt::Display for ConnectionString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://", self.scheme)?;
        if let Some(u) = &self.userinfo {
            write!(f, "{u}@")?;
        }
        write!(f, "{}/{}", self.hosts, self.database)?;
        for (i, (k, v)) in self.options.iter().enumerate() {
            write!(f, "{}{k}={v}", if i == 0 { '?' } else { '&' })?;
        }
        Ok(())
    }
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
        // A raw `?` in the password: nothing of it reaches the screen.
        let u = "mongodb://u:a?bcd@host:1/";
        assert_eq!(redact_uri(u), "mongodb://host:1/");
        assert_eq!(secrets_of(u), vec!["a?bcd".to_string()]);
    }

    #[test]
    fn each_unencoded_character_is_named() {
        for (uri, want) in [
            ("mongodb://u:p@ss@h/", Some("the password holds a raw '@': percent-encode it as %40")),
            ("mongodb://u:a:b@h/", Some("the password holds a raw ':': percent-encode it as %3A")),
            ("mongodb://u:a/b@h/", Some("the password holds a raw '/': percent-encode it as %2F")),
            ("mongodb://u:a?b@h/", Some("the password holds a raw '?': percent-encode it as %3F")),
            ("mongodb://u:50%off@h/", Some("the password holds a raw '%': percent-encode it as %25")),
            ("mongodb://us#r:pw@h/", Some("the user name holds a raw '#': percent-encode it as %23")),
            ("mongodb://u:p%40ss%3A@h/?authSource=admin", None),
            ("mongodb://h/", None),
        ] {
            assert_eq!(userinfo_problem(uri).as_deref(), want, "{uri}");
        }
    }

    #[test]
    fn flags_replace_what_the_uri_holds() {
        let mut cs = ConnectionString::parse("mongodb://old:pw@h1:1,h2/app?authSource=x&w=majority").unwrap();
        cs.set_username("dba@corp");
        cs.set_option("AUTHSOURCE", "admin");
        assert_eq!(cs.to_string(), "mongodb://dba%40corp:pw@h1:1,h2/app?w=majority&AUTHSOURCE=admin");
        cs.set_password("p@ss/w:rd €");
        assert!(cs.has_password());
        assert_eq!(cs.username().as_deref(), Some("dba@corp"));
        let text = cs.to_string();
        assert!(text.starts_with("mongodb://dba%40corp:p%40ss%2Fw%3Ard%20%E2%82%AC@h1:1,h2/app?"), "{text}");
        // what the scrubber finds in it is the password in both forms
        assert_eq!(secrets_of(&text), vec!["p%40ss%2Fw%3Ard%20%E2%82%AC".to_string(), "p@ss/w:rd €".to_string()]);
        let mut bare = ConnectionString::with_hosts("127.0.0.1:27017");
        assert!(!bare.has_username() && !bare.has_password());
        bare.set_option("tlsCAFile", "/etc/ssl/my ca&1.pem");
        assert_eq!(bare.to_string(), "mongodb://127.0.0.1:27017/?tlsCAFile=/etc/ssl/my%20ca%261.pem");
        assert_eq!(bare.option("tlscafile").as_deref(), Some("/etc/ssl/my ca&1.pem"));
        assert!(ConnectionString::parse("http://x/").is_none());
        // a raw `?` in the password stays in the userinfo
        let cs = ConnectionString::parse("mongodb://u:se?cret@h:1/db?tls=true").unwrap();
        assert_eq!((cs.hosts.as_str(), cs.database().as_deref(), cs.option("tls").as_deref()), ("h:1", Some("db"), Some("true")));
        assert!(ConnectionString::parse("mongodb:///db").is_none());
    }
}
