//! [`ClientAddr`]: where a client is connected, as CLIENT LIST, MONITOR and the logs show it.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

/// A client's peer or local address: a TCP address, or the server's Unix socket (Unix peers
/// are unnamed, so Redis shows the socket's path, port 0, for both sides).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientAddr {
    /// A TCP address.
    Tcp(SocketAddr),
    /// The path of the Unix socket the client connected to (`unixsocket`).
    Unix(Arc<str>),
}

impl ClientAddr {
    /// Whether the client connected from this machine (a loopback address or the Unix
    /// socket), as Redis's islocalClient.
    pub fn is_local(&self) -> bool {
        match self {
            ClientAddr::Tcp(a) => a.ip().is_loopback(),
            ClientAddr::Unix(_) => true,
        }
    }

    /// The peer's IP as text; for a Unix client what Redis's anetFdToString gives,
    /// `/unixsocket`.
    pub fn ip_text(&self) -> String {
        match self {
            ClientAddr::Tcp(a) => a.ip().to_string(),
            ClientAddr::Unix(_) => "/unixsocket".to_string(),
        }
    }

    /// Whether the client came through the Unix socket (CLIENT LIST flag `U`).
    pub fn is_unix(&self) -> bool {
        matches!(self, ClientAddr::Unix(_))
    }
}

impl fmt::Display for ClientAddr {
    /// `ip:port` (IPv6 as `[ip]:port`), or `path:0`, as Redis's genClientAddrString.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientAddr::Tcp(a) => write!(f, "{a}"),
            ClientAddr::Unix(path) => write!(f, "{path}:0"),
        }
    }
}

impl From<SocketAddr> for ClientAddr {
    fn from(a: SocketAddr) -> Self {
        ClientAddr::Tcp(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_as_redis_shows_them() {
        let unix = ClientAddr::Unix("/tmp/redis.sock".into());
        assert_eq!(unix.to_string(), "/tmp/redis.sock:0");
        assert!(unix.is_local() && unix.is_unix());
        assert_eq!(unix.ip_text(), "/unixsocket");
        let v6 = ClientAddr::from("[::1]:7".parse::<SocketAddr>().unwrap());
        assert_eq!(v6.to_string(), "[::1]:7");
        assert!(v6.is_local() && !v6.is_unix());
        let far = ClientAddr::from("10.1.2.3:9".parse::<SocketAddr>().unwrap());
        assert!(!far.is_local());
        assert_eq!(far.ip_text(), "10.1.2.3");
    }
}
