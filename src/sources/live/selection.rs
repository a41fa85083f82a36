//! Why no server could be selected, in words: the driver's server selection error carries the
//! topology it saw (each server's type, or the error that kept it unknown); the cause is in there.

/// The cause of a server selection timeout, from the driver's message.
pub(super) fn why_no_server(message: &str) -> String {
    if let Some(rest) = message.split("suitable for criteria ReadPreference(").nth(1) {
        let mode = rest.split([' ', ')', '{']).next().unwrap_or("").to_string();
        let count = |t: &str| message.matches(&format!("Type: {t},")).count();
        let (primaries, secondaries) = (count("RsPrimary"), count("RsSecondary"));
        let has = match (primaries, secondaries) {
            (0, 0) => "no primary and no secondary".to_string(),
            (p, 0) => format!("{p} primary and no secondary"),
            (0, s) => format!("no primary and {s} secondar{}", if s == 1 { "y" } else { "ies" }),
            (p, s) => format!("{p} primary and {s} secondar{}", if s == 1 { "y" } else { "ies" }),
        };
        return format!(
            "no server matches readPreference={}: the deployment has {has} (secondaryPreferred reads a secondary when there is one)",
            lower_first(&mode)
        );
    }
    let causes: Vec<String> = message
        .split("Address: ")
        .skip(1)
        .filter_map(|server| {
            let address = server.split(',').next()?.trim();
            let error = server.split("Error: ").nth(1)?;
            let error = error.trim_start_matches("Kind: ").split(", labels:").next()?.trim();
            Some(cause(address, error))
        })
        .take(3)
        .collect();
    if causes.is_empty() {
        "no server reachable within the server selection timeout (is the host up and the URI right?)".to_string()
    } else {
        causes.join("; ")
    }
}

/// One server's connection error, classified.
fn cause(address: &str, error: &str) -> String {
    let e = error.to_ascii_lowercase();
    let detail = error.trim_start_matches("I/O error: ");
    if e.contains("tls") || e.contains("handshake") || e.contains("certificate") || e.contains("invalidcontenttype") {
        format!("TLS with {address} failed ({detail}): does the server accept TLS, and is its certificate trusted (--tlsCAFile)?")
    } else if e.contains("connection refused") {
        format!("{address} refused the connection (is mongod listening on that host and port?)")
    } else if e.contains("lookup address") || e.contains("name or service not known") || e.contains("no such host") {
        format!("cannot resolve the host of {address} ({detail})")
    } else if e.contains("reset by peer") || e.contains("unexpected end of file") || e.contains("early eof") {
        format!("{address} closed the connection ({detail}): does it require TLS (--tls)?")
    } else if e.contains("timed out") {
        format!("{address} did not answer in time ({detail})")
    } else {
        format!("{address}: {detail}")
    }
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_lowercase().chain(c).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    // The driver's messages as a real mongod 6.0.5 produced them (mongodb 3.9.1).
    #[test]
    fn the_cause_from_the_topology() {
        let secondary = "Server selection timeout: None of the available servers suitable for criteria ReadPreference(Secondary { options: None }). Topology: { Type: ReplicaSetWithPrimary, Set Name: rs0, Max Set Version: 1, Servers: [ { Address: 127.0.0.1:29555, Type: RsPrimary, Average RTT: 1.32987ms, Max Wire Version: 17, Replica Set Name: rs0, Replica Set Version: 1 } ] }";
        assert_eq!(
            why_no_server(secondary),
            "no server matches readPreference=secondary: the deployment has 1 primary and no secondary (secondaryPreferred reads a secondary when there is one)"
        );
        let tls = "Server selection timeout: No available servers. Topology: { Type: Unknown, Servers: [ { Address: 127.0.0.1:29555, Type: Unknown, Error: Kind: I/O error: tls handshake eof, labels: {\"RetryableError\", \"SystemOverloadedError\"}, source: None, server response: None } ] }";
        assert_eq!(
            why_no_server(tls),
            "TLS with 127.0.0.1:29555 failed (tls handshake eof): does the server accept TLS, and is its certificate trusted (--tlsCAFile)?"
        );
        let refused = "Server selection timeout: No available servers. Topology: { Type: Unknown, Servers: [ { Address: 127.0.0.1:29556, Type: Unknown, Error: Kind: I/O error: Connection refused (os error 111), labels: {\"SystemOverloadedError\", \"RetryableError\"}, source: None, server response: None } ] }";
        assert_eq!(why_no_server(refused), "127.0.0.1:29556 refused the connection (is mongod listening on that host and port?)");
        let dns = "Server selection timeout: No available servers. Topology: { Type: Unknown, Servers: [ { Address: nosuchhost.invalid:29556, Type: Unknown, Error: Kind: I/O error: failed to lookup address information: Name or service not known, labels: {}, source: None, server response: None } ] }";
        assert!(why_no_server(dns).starts_with("cannot resolve the host of nosuchhost.invalid:29556"));
        assert!(why_no_server("Server selection timeout: No available servers. Topology: { }").starts_with("no server reachable"));
    }
}
