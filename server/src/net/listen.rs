//! Binding the listening sockets (`bind`, `port`), as Redis's listenToPort does.
//!
//! Each `bind` word is an address: `*` is every IPv4 address, `::*` every IPv6 one, a name
//! is resolved, and a leading `-` marks an address that may be missing. An address the
//! machine does not have, or a family it does not support, is logged and skipped (Redis
//! skips those whether or not marked); any other failure fails the whole bind. Port 0
//! listens on nothing, as in Redis.

use goblin_evloop::listener::{self, ListenOptions};
use goblin_evloop::Listen;
use mio::net::TcpListener;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::os::fd::AsRawFd;

/// How each listening socket is set up.
#[derive(Debug, Clone, Copy)]
pub struct Sockets {
    /// The listen(2) backlog (tcp-backlog).
    pub backlog: i32,
    /// SO_MARK for the listeners, which the connections they accept inherit
    /// (socket-mark-id; 0: none).
    pub mark: u32,
}

/// Binds a listener on each address; the error is the line Redis logs before aborting.
pub fn bind(addresses: &[String], port: u16, sockets: Sockets) -> anyhow::Result<Vec<TcpListener>> {
    listen_each(addresses, port, |addr| bind_addr(addr, sockets))
}

/// The listeners for a new `bind` and `port` at run time: the ones on an address the loop
/// listens on now (`current`) are kept, the others bound here, so nothing the new set
/// shares with the old one is closed and bound again.
pub fn plan(
    addresses: &[String],
    port: u16,
    sockets: Sockets,
    current: &[SocketAddr],
) -> anyhow::Result<Vec<Listen>> {
    listen_each(addresses, port, |addr| {
        match current.iter().position(|c| *c == addr) {
            Some(i) => Ok(Listen::Keep(i)),
            None => bind_addr(addr, sockets).map(Listen::New),
        }
    })
}

/// Opens what `open` makes of each address, skipping the ones Redis skips.
fn listen_each<T>(
    addresses: &[String],
    port: u16,
    mut open: impl FnMut(SocketAddr) -> std::io::Result<T>,
) -> anyhow::Result<Vec<T>> {
    let mut opened = Vec::new();
    if port == 0 {
        return Ok(opened);
    }
    for word in addresses {
        let address = word.strip_prefix('-').unwrap_or(word);
        match resolve(address).and_then(|ip| open(SocketAddr::new(ip, port))) {
            Ok(l) => opened.push(l),
            Err(e) => {
                crate::warning!(
                    "Warning: Could not create server TCP listening socket {address}:{port}: {e}"
                );
                if !skippable(&e) {
                    anyhow::bail!("Failed listening on port {port} (tcp), aborting.");
                }
            }
        }
    }
    Ok(opened)
}

/// One listener on `addr`.
fn bind_addr(addr: SocketAddr, sockets: Sockets) -> std::io::Result<TcpListener> {
    let options = ListenOptions {
        reuse_port: false,
        v6_only: true,
        backlog: sockets.backlog,
    };
    let listener = listener::bind(addr, options)?;
    if sockets.mark > 0 {
        set_mark(listener.as_raw_fd(), sockets.mark);
    }
    Ok(TcpListener::from_std(listener))
}

/// Sets SO_MARK on socket `fd`. As in Redis, a failure (without CAP_NET_ADMIN) is passed
/// over.
fn set_mark(fd: i32, mark: u32) {
    // SAFETY: a plain setsockopt with a u32 option value on a socket this process owns.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_MARK,
            (&mark as *const u32).cast(),
            std::mem::size_of::<u32>() as libc::socklen_t,
        );
    }
}

/// The address a `bind` word names; a word with a `:` is IPv6, as Redis decides.
fn resolve(address: &str) -> std::io::Result<IpAddr> {
    let v6 = address.contains(':');
    match address {
        "*" => return Ok(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
        "::*" => return Ok(IpAddr::V6(Ipv6Addr::UNSPECIFIED)),
        _ => {}
    }
    if let Ok(ip) = address.parse::<IpAddr>() {
        return Ok(ip);
    }
    (address, 0)
        .to_socket_addrs()?
        .map(|a| a.ip())
        .find(|ip| ip.is_ipv6() == v6)
        .ok_or_else(|| std::io::Error::from_raw_os_error(libc::EADDRNOTAVAIL))
}

/// Failures Redis logs and passes over: the address is not on this machine, or its family
/// is not supported.
fn skippable(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(
            libc::EADDRNOTAVAIL
                | libc::ENOPROTOOPT
                | libc::EPROTONOSUPPORT
                | libc::ESOCKTNOSUPPORT
                | libc::EPFNOSUPPORT
                | libc::EAFNOSUPPORT
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOCKETS: Sockets = Sockets {
        backlog: 511,
        mark: 0,
    };

    fn free_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    #[test]
    fn star_forms_name_every_address_of_their_family() {
        assert_eq!(resolve("*").unwrap(), IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        assert_eq!(resolve("::*").unwrap(), IpAddr::V6(Ipv6Addr::UNSPECIFIED));
    }

    #[test]
    fn an_ipv6_listener_shares_the_port_with_an_ipv4_one() {
        let port = free_port();
        let words = ["127.0.0.1", "-::1"].map(String::from);
        let listeners = bind(&words, port, SOCKETS).unwrap();
        assert_eq!(
            listeners[0].local_addr().unwrap(),
            SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)
        );
    }

    #[test]
    fn missing_address_is_skipped_and_a_taken_port_fails() {
        let port = free_port();
        // 192.0.2.1 (TEST-NET-1) is on no interface here.
        let words = ["127.0.0.1", "-192.0.2.1"].map(String::from);
        let held = bind(&words, port, SOCKETS).unwrap();
        assert_eq!(held.len(), 1);
        let again = bind(&["127.0.0.1".to_string()], port, SOCKETS).unwrap_err();
        assert_eq!(
            again.to_string(),
            format!("Failed listening on port {port} (tcp), aborting.")
        );
    }

    #[test]
    fn a_plan_keeps_the_listeners_it_shares_with_the_current_set() {
        let port = free_port();
        let current = [SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)];
        let words = ["127.0.0.1", "-::1"].map(String::from);
        let planned = plan(&words, port, SOCKETS, &current).unwrap();
        assert!(matches!(planned[0], Listen::Keep(0)));
        assert!(planned[1..].iter().all(|l| matches!(l, Listen::New(_))));
    }

    #[test]
    fn port_zero_listens_on_nothing() {
        assert!(bind(&["127.0.0.1".to_string()], 0, SOCKETS)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn names_resolve_in_the_family_the_word_implies() {
        assert_eq!(
            resolve("localhost").unwrap(),
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        );
    }
}
