//! mongosh's and mongodump's connection flags merged into the one connection string the
//! application uses. Which wins, as mongosh decides (mongodb-js/mongosh `uri-generator.ts`
//! 70dcadb, `arg-mapper.ts` 59e4b80):
//! - the base is `--uri`, else the `uri` of `--config`, else `--host`/`--port`, else
//!   `MONGODB_URI` (when no file input is given), else 127.0.0.1:27017 when any other
//!   connection flag asks for a deployment; `--host`/`--port` with a URI is refused;
//! - `-u`, `-p`, `--authenticationDatabase`, `--tls...` and `--readPreference` replace the
//!   base's own values; a password comes from `-p VALUE`, else `--config`, else the prompt.
//!
//! Secrets: a prompted or `--config` password is remembered for scrubbing (`util::uri`) and
//! only ever travels inside the connection string, which is never printed whole.

use super::args::ConnectionArgs;
use crate::error::usage_error;
use crate::util::uri::{remember_secret, ConnectionString};
use anyhow::Result;
use std::io::{BufRead, IsTerminal};
use std::path::Path;

/// The connection string to use, or `None` when nothing asks for a deployment.
/// `env_default`: `MONGODB_URI` may supply it (no file input was given).
/// `stdin_busy`: standard input carries data (`--docs -`), so a password cannot come from it.
pub(super) fn connection_uri(c: &ConnectionArgs, env_default: bool, stdin_busy: bool) -> Result<Option<String>> {
    let file = c.config.as_deref().map(read_config).transpose()?.unwrap_or_default();
    let given = c.uri.clone().or(file.uri.clone());
    let flags_ask = c.username.is_some()
        || c.password.is_some()
        || file.password.is_some()
        || c.authentication_database.is_some()
        || c.authentication_mechanism.is_some()
        || c.tls
        || c.tls_ca_file.is_some()
        || c.tls_certificate_key_file.is_some()
        || c.tls_allow_invalid_certificates
        || c.tls_allow_invalid_hostnames
        || c.read_preference.is_some();
    // The URI to start from, and what gave it (for the message when it is not one).
    let base = match &given {
        Some(u) => Some((u.clone(), "--uri")),
        None => env_default.then(|| std::env::var("MONGODB_URI").ok()).flatten().map(|u| (u, "MONGODB_URI")),
    };
    let mut cs = if c.host.is_some() || c.port.is_some() {
        if given.is_some() {
            return Err(usage_error(
                "--host/--port cannot be used with a connection string (--uri or --config's uri): put the hosts in the URI",
            ));
        }
        host_list(c.host.as_deref(), c.port)?
    } else if let Some((text, from)) = base {
        let cs = parse(&text, from)?;
        // A URI no flag changes is used as given (the driver reads it; we do not rewrite it).
        if !flags_ask {
            return Ok(Some(text));
        }
        cs
    } else if flags_ask {
        if !env_default {
            return Err(usage_error("connection flags (-u, -p, --tls, ...) need a deployment: give --uri or --host, not a file"));
        }
        ConnectionString::with_hosts("127.0.0.1:27017")
    } else {
        return Ok(None);
    };
    if let Some(user) = &c.username {
        cs.set_username(user);
    }
    if let Some(db) = &c.authentication_database {
        cs.set_option("authSource", db);
    }
    if let Some(m) = &c.authentication_mechanism {
        cs.set_option("authMechanism", m);
    }
    if c.tls {
        cs.set_option("tls", "true");
    }
    if let Some(f) = &c.tls_ca_file {
        cs.set_option("tlsCAFile", &f.display().to_string());
    }
    if let Some(f) = &c.tls_certificate_key_file {
        cs.set_option("tlsCertificateKeyFile", &f.display().to_string());
    }
    if c.tls_allow_invalid_certificates {
        cs.set_option("tlsAllowInvalidCertificates", "true");
    }
    if c.tls_allow_invalid_hostnames {
        cs.set_option("tlsAllowInvalidHostnames", "true");
    }
    if let Some(rp) = &c.read_preference {
        cs.set_option("readPreference", rp);
    }
    let password = match (c.password.as_deref(), file.password) {
        (Some(p), _) if !p.is_empty() => Some(p.to_string()),
        (_, Some(p)) => Some(p),
        (Some(_), None) => Some(prompt(&cs, stdin_busy)?),
        // `-u` alone: mongosh and mongodump ask for the password the mechanism needs.
        (None, None) if c.username.is_some() && !cs.has_password() && needs_password(&cs) => Some(prompt(&cs, stdin_busy)?),
        (None, None) => None,
    };
    if let Some(p) = password {
        remember_secret(&p);
        if !cs.has_username() {
            let hint = if c.password.is_some() && c.port.is_none() { " (did you mean --port instead of -p?)" } else { "" };
            return Err(usage_error(format!("a password was given but no user name: add -u USER{hint}")));
        }
        cs.set_password(&p);
    }
    Ok(Some(cs.to_string()))
}

/// The flag that gave the connection string (for a message about it): `--uri`, `--config`'s
/// `uri`, else `MONGODB_URI`.
pub(super) fn uri_flag(c: &ConnectionArgs) -> &'static str {
    if c.uri.is_some() {
        "--uri"
    } else if c.config.as_deref().and_then(|f| read_config(f).ok()).is_some_and(|f| f.uri.is_some()) {
        "--config's uri"
    } else {
        "MONGODB_URI"
    }
}

/// `from`: `--uri` or `MONGODB_URI`, for the message.
fn parse(uri: &str, from: &str) -> Result<ConnectionString> {
    ConnectionString::parse(uri).ok_or_else(|| {
        // Shown without credentials or options.
        let shown = crate::util::uri::redact_uri(uri);
        usage_error(format!(
            "{from} {shown}: expected a connection string such as mongodb://host:27017/ or mongodb+srv://cluster.example.net/"
        ))
    })
}

/// `[replicaSet/]host[:port][,host[:port]...]` with `--port` for hosts given without one.
fn host_list(host: Option<&str>, port: Option<u16>) -> Result<ConnectionString> {
    let text = host.unwrap_or("127.0.0.1");
    let (set, list) = match text.split_once('/') {
        Some((s, l)) if !s.is_empty() && !l.contains('/') => (Some(s), l),
        Some(_) => return Err(usage_error(format!("--host {text}: expected [replicaSet/]host[:port][,host[:port]...]"))),
        None => (None, text),
    };
    let mut hosts = Vec::new();
    for h in list.split(',').filter(|h| !h.is_empty()) {
        // host, host:port, [v6], [v6]:port
        let (name, own_port) = match h.rfind(':') {
            Some(i)
                if !h[i + 1..].is_empty()
                    && h[i + 1..].bytes().all(|b| b.is_ascii_digit())
                    && (!h.starts_with('[') || h[..i].ends_with(']')) =>
            {
                (&h[..i], Some(&h[i + 1..]))
            }
            _ => (h, None),
        };
        let valid_name = if name.starts_with('[') {
            name.len() > 2 && name.ends_with(']') && name[1..name.len() - 1].bytes().all(|b| b.is_ascii_hexdigit() || b == b':')
        } else {
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_')
        };
        if !valid_name {
            return Err(usage_error(format!("--host {text}: {h} is not a host name, an IPv4 or an [IPv6] address")));
        }
        let own: Option<u16> = match own_port {
            Some(p) => Some(p.parse().map_err(|_| usage_error(format!("--host {text}: port {p} is not a port number")))?),
            None => None,
        };
        if let (Some(o), Some(p)) = (own, port) {
            if o != p {
                return Err(usage_error(format!("--host {h} and --port {p} name different ports")));
            }
        }
        hosts.push(format!("{name}:{}", own.or(port).unwrap_or(27017)));
    }
    if hosts.is_empty() {
        return Err(usage_error(format!("--host {text}: no host given")));
    }
    let mut cs = ConnectionString::with_hosts(&hosts.join(","));
    if let Some(s) = set {
        cs.set_option("replicaSet", s);
    }
    Ok(cs)
}

/// Mechanisms without a password (certificates, Kerberos, cloud identities) never prompt.
fn needs_password(cs: &ConnectionString) -> bool {
    let mechanism = cs.option("authMechanism").unwrap_or_default().to_ascii_uppercase();
    !matches!(mechanism.as_str(), "MONGODB-X509" | "GSSAPI" | "MONGODB-AWS" | "MONGODB-OIDC")
}

/// The password from the terminal without echo, else (as mongodump does) one line of
/// standard input when that is not a terminal.
fn prompt(cs: &ConnectionString, stdin_busy: bool) -> Result<String> {
    let who = cs.username().unwrap_or_default();
    let password = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(format!("Enter password for {who}: "))
            .map_err(|e| usage_error(format!("cannot read the password from the terminal: {e}")))?
    } else if stdin_busy {
        return Err(usage_error(
            "-p without a value reads the password from standard input, which carries --docs -: give it in --config FILE",
        ));
    } else {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| usage_error(format!("cannot read the password from standard input: {e}")))?;
        line.trim_end_matches(['\n', '\r']).to_string()
    };
    if password.is_empty() {
        return Err(usage_error(
            "-p without a value: no password was typed (or standard input was empty); give one, or put it in --config FILE",
        ));
    }
    Ok(password)
}

/// mongodump's `--config` file: YAML with `password` and `uri` (both optional).
#[derive(Debug, Default, PartialEq)]
struct ConfigFile {
    uri: Option<String>,
    password: Option<String>,
}

fn read_config(path: &Path) -> Result<ConfigFile> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| usage_error(format!("--config {shown}: cannot read: {e}")))?;
    parse_config(&text).map_err(|e| usage_error(format!("--config {shown}: {e}")))
}

fn parse_config(text: &str) -> std::result::Result<ConfigFile, String> {
    use yaml_rust2::{Yaml, YamlLoader};
    // The scanner's message quotes the line it failed on, which may hold the password: say where only.
    let docs = YamlLoader::load_from_str(text).map_err(|e| format!("not valid YAML at line {}", e.marker().line()))?;
    let mut out = ConfigFile::default();
    let Some(doc) = docs.into_iter().next() else { return Ok(out) };
    let Yaml::Hash(map) = doc else {
        return Err("expected keys such as `password: ...` and `uri: ...`".into());
    };
    for (k, v) in map {
        let key = k.as_str().unwrap_or("").to_string();
        let value = match v {
            Yaml::String(s) => s,
            Yaml::Null => continue,
            _ => return Err(format!("`{key}` must be a string: quote it, e.g. {key}: \"...\"")),
        };
        match key.as_str() {
            "password" => out.password = Some(value),
            "uri" => out.uri = Some(value),
            _ => return Err(format!("unknown key `{key}` (mongodump's keys shardkey reads: password, uri)")),
        }
    }
    if let Some(p) = &out.password {
        remember_secret(p);
    }
    // A password inside the file's URI is as secret: scrubbed from panics too.
    for s in out.uri.iter().flat_map(|u| crate::util::uri::secrets_of(u)) {
        remember_secret(&s);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> ConnectionArgs {
        ConnectionArgs::default()
    }

    #[test]
    fn host_and_port_make_a_connection_string() {
        let c = ConnectionArgs { host: Some("rs0/db1:27018,db2".into()), port: Some(27018), ..args() };
        assert_eq!(connection_uri(&c, false, false).unwrap().unwrap(), "mongodb://db1:27018,db2:27018/?replicaSet=rs0");
        let c = ConnectionArgs { port: Some(4000), ..args() };
        assert_eq!(connection_uri(&c, true, false).unwrap().unwrap(), "mongodb://127.0.0.1:4000/");
        let c = ConnectionArgs { host: Some("[::1]:5".into()), ..args() };
        assert_eq!(connection_uri(&c, true, false).unwrap().unwrap(), "mongodb://[::1]:5/");
        for (host, port, needle) in [
            ("db1:1", Some(2), "different ports"),
            ("db 1", None, "not a host name"),
            ("a/b/c", None, "expected [replicaSet/]"),
            ("db1:99999", None, "not a port number"),
        ] {
            let c = ConnectionArgs { host: Some(host.into()), port, ..args() };
            let e = connection_uri(&c, true, false).unwrap_err().to_string();
            assert!(e.contains(needle), "{host}: {e}");
        }
    }

    #[test]
    fn flags_replace_the_uris_values_and_a_password_needs_a_user() {
        let c = ConnectionArgs {
            uri: Some("mongodb://old@h/?authSource=x&readPreference=primary".into()),
            username: Some("dba".into()),
            password: Some("pw-1".into()),
            authentication_database: Some("admin".into()),
            read_preference: Some("secondaryPreferred".into()),
            tls: true,
            ..args()
        };
        assert_eq!(
            connection_uri(&c, true, false).unwrap().unwrap(),
            "mongodb://dba:pw-1@h/?authSource=admin&tls=true&readPreference=secondaryPreferred"
        );
        let c = ConnectionArgs { uri: Some("mongodb://h/".into()), password: Some("secret-1".into()), ..args() };
        let e = connection_uri(&c, true, false).unwrap_err().to_string();
        assert!(e.contains("no user name") && e.contains("--port instead of -p") && !e.contains("secret-1"), "{e}");
        // --host with a URI is refused, as mongosh refuses it
        let c = ConnectionArgs { uri: Some("mongodb://h/".into()), host: Some("other".into()), ..args() };
        assert!(connection_uri(&c, true, false).unwrap_err().to_string().contains("cannot be used with a connection string"));
        // no connection asked for: none
        assert_eq!(connection_uri(&args(), false, false).unwrap(), None);
        // flags but a file input: refused
        let c = ConnectionArgs { username: Some("u".into()), password: Some("x1".into()), ..args() };
        assert!(connection_uri(&c, false, false).unwrap_err().to_string().contains("need a deployment"));
        // every connection flag counts, the TLS switches too (none is silently dropped)
        let c = ConnectionArgs { tls_allow_invalid_certificates: true, ..args() };
        assert!(connection_uri(&c, false, false).unwrap_err().to_string().contains("need a deployment"));
        let c = ConnectionArgs { uri: Some("mongodb://h/".into()), tls_allow_invalid_hostnames: true, ..args() };
        assert_eq!(connection_uri(&c, true, false).unwrap().unwrap(), "mongodb://h/?tlsAllowInvalidHostnames=true");
        // a URI no flag touches is passed on exactly as given
        let c = ConnectionArgs { uri: Some("mongodb://u:p%40w@h:1/db?replicaSet=rs0&w=majority".into()), ..args() };
        assert_eq!(connection_uri(&c, true, false).unwrap().unwrap(), "mongodb://u:p%40w@h:1/db?replicaSet=rs0&w=majority");
        // no password prompt for certificate authentication
        let c = ConnectionArgs { username: Some("CN=me".into()), authentication_mechanism: Some("MONGODB-X509".into()), ..args() };
        assert_eq!(connection_uri(&c, true, false).unwrap().unwrap(), "mongodb://CN%3Dme@127.0.0.1:27017/?authMechanism=MONGODB-X509");
    }

    #[test]
    fn the_config_file_holds_mongodumps_keys() {
        assert_eq!(
            parse_config("password: 'it''s: a #secret'\nuri: mongodb://u@h:1/\n").unwrap(),
            ConfigFile { uri: Some("mongodb://u@h:1/".into()), password: Some("it's: a #secret".into()) }
        );
        assert_eq!(parse_config("").unwrap(), ConfigFile::default());
        assert!(parse_config("password: 12345\n").unwrap_err().contains("quote it"));
        assert!(parse_config("pasword: x\n").unwrap_err().contains("unknown key `pasword`"));
        let e = parse_config("password: \"unclosed-s3cret\n").unwrap_err();
        assert!(e.contains("not valid YAML") && !e.contains("s3cret"), "{e}");
        assert!(parse_config("- a\n").unwrap_err().contains("expected keys"));
    }
}
