//! The bearer token of mem7's network servers (`mem7 serve`, `mem7 ui`): what a token
//! must look like, when one is required, and how a request's token is compared. Both
//! servers call these, so the rules are the same wherever a token guards a port.

use std::net::SocketAddr;

use crate::error::{Error, Result};

/// The shortest token the servers accept.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Checks a token before a server starts.
pub fn check_token(token: &str) -> Result<()> {
    if token.trim().chars().count() < MIN_TOKEN_CHARS || token.chars().any(char::is_whitespace) {
        return Err(Error::input(
            format!("the token must be at least {MIN_TOKEN_CHARS} characters without spaces"),
            "generate one with `openssl rand -hex 32` and give it to each client as `Authorization: Bearer <token>`",
        ));
    }
    Ok(())
}

/// The token a server on `listen` runs with: a given token must pass [`check_token`],
/// and an address other than loopback requires one (`who` names the command).
pub fn token_for(who: &str, listen: SocketAddr, token: Option<&str>) -> Result<Option<String>> {
    match token {
        Some(t) => {
            check_token(t)?;
            Ok(Some(t.trim().to_string()))
        }
        None if listen.ip().is_loopback() => Ok(None),
        None => Err(Error::input(
            format!(
                "{listen} is not a loopback address: `{who}` needs a token (--token or MEM7_TOKEN) to listen there"
            ),
            "set MEM7_TOKEN=$(openssl rand -hex 32), or listen on 127.0.0.1",
        )),
    }
}

/// A token as the servers keep it: hashed, so that comparing a request's token takes
/// the same time whatever it holds (blake3's hash equality is constant-time).
#[derive(Clone, Debug)]
pub struct Expected(blake3::Hash);

impl Expected {
    pub fn new(token: &str) -> Expected {
        Expected(blake3::hash(token.trim().as_bytes()))
    }

    /// Whether `given` is the token.
    pub fn matches(&self, given: &str) -> bool {
        blake3::hash(given.trim().as_bytes()) == self.0
    }

    /// Whether an `Authorization` header value is `Bearer <the token>`.
    pub fn matches_bearer(&self, header: Option<&str>) -> bool {
        header
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|given| self.matches(given))
    }
}

/// Whether a request's `Origin` may reach a server addressed as `host` (the request's
/// `Host` header). No `Origin` (a program, not a browser page) passes; a page of the
/// server's own origin passes, as does a page on another loopback name of the same port
/// (`localhost` for `127.0.0.1`); any other site (and the opaque origin `null`) is
/// refused, whatever token the request carries. This is the check the MCP
/// specification requires of streamable HTTP servers against DNS rebinding and
/// cross-site requests.
pub fn origin_allowed(origin: Option<&str>, host: Option<&str>) -> bool {
    let Some(origin) = origin else {
        return true;
    };
    let Some(authority) = origin
        .trim()
        .strip_prefix("http://")
        .or_else(|| origin.trim().strip_prefix("https://"))
    else {
        return false;
    };
    let authority = authority.trim_end_matches('/');
    let Some(host) = host else {
        return false;
    };
    if authority.eq_ignore_ascii_case(host.trim()) {
        return true;
    }
    let (a_name, a_port) = split_authority(authority);
    let (h_name, h_port) = split_authority(host.trim());
    a_port == h_port && is_loopback_name(a_name) && is_loopback_name(h_name)
}

/// A `Host`-style authority as its name and port (`None` when none is given).
fn split_authority(authority: &str) -> (&str, Option<&str>) {
    match authority.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((name, rest)) => (name, rest.strip_prefix(':')),
            None => (v6, None),
        },
        None => match authority.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (authority, None),
        },
    }
}

/// Whether a host name is this machine's loopback.
pub fn is_loopback_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_servers_own_origin_passes() {
        let host = Some("127.0.0.1:7077");
        assert!(origin_allowed(None, host));
        assert!(origin_allowed(Some("http://127.0.0.1:7077"), host));
        assert!(origin_allowed(Some("http://localhost:7077"), host));
        assert!(origin_allowed(Some("http://[::1]:7077"), host));
        assert!(!origin_allowed(Some("http://localhost:9999"), host));
        assert!(!origin_allowed(Some("https://evil.example"), host));
        assert!(!origin_allowed(Some("http://evil.example:7077"), host));
        assert!(!origin_allowed(Some("null"), host));
        assert!(origin_allowed(
            Some("https://mem.team.example"),
            Some("mem.team.example")
        ));
        assert!(!origin_allowed(Some("http://127.0.0.1:7077"), None));
    }

    #[test]
    fn loopback_needs_no_token_other_addresses_do() {
        let lo: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:7078".parse().unwrap();
        assert_eq!(token_for("mem7 ui", lo, None).unwrap(), None);
        let e = token_for("mem7 ui", any, None).unwrap_err().to_string();
        assert!(e.contains("token") && e.contains("MEM7_TOKEN"), "{e}");
        assert!(token_for("mem7 ui", any, Some("short")).is_err());
        let t = "0123456789abcdef0123";
        assert_eq!(
            token_for("mem7 ui", any, Some(t)).unwrap().as_deref(),
            Some(t)
        );
        let expected = Expected::new(t);
        assert!(expected.matches_bearer(Some(&format!("Bearer {t}"))));
        assert!(!expected.matches_bearer(Some(t)));
        assert!(!expected.matches_bearer(Some("Bearer 0123456789abcdef012")));
    }
}
