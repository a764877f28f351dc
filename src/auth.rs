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

#[cfg(test)]
mod tests {
    use super::*;

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
