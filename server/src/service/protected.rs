//! `protected-mode` as Redis 7.2 applies it: while it is on and the default user has no
//! password, a client whose address is not loopback (127.0.0.0/8, ::1) gets the DENIED
//! error and the connection is closed. `bind` plays no part since Redis 7.0.

use crate::config::Config;
use crate::server::Server;
use std::io::Write;
use std::net::{IpAddr, SocketAddr};

/// The error Redis 7.2 writes before closing a connection that protected mode refuses.
pub const DENIED: &[u8] = b"-DENIED Redis is running in protected mode because protected mode \
is enabled and no password is set for the default user. In this mode connections are only \
accepted from the loopback interface. If you want to connect from external computers to Redis \
you may adopt one of the following solutions: 1) Just disable protected mode sending the \
command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from \
the same host the server is running, however MAKE SURE Redis is not publicly accessible from \
internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you \
can just disable the protected mode by editing the Redis configuration file, and setting the \
protected mode option to 'no', and then restarting the server. 3) If you started the server \
manually just for testing, restart it with the '--protected-mode no' option. 4) Set up an \
authentication password for the default user. NOTE: You only need to do one of the above \
things in order for the server to start accepting connections from the outside.\r\n";

/// True when protected mode refuses a client connecting from `peer`. An IPv4 address seen
/// through an IPv6 socket (::ffff:127.0.0.1) counts as the IPv4 address.
pub fn refuses(config: &Config, peer: IpAddr) -> bool {
    config.protected_mode && config.requirepass.is_none() && !peer.to_canonical().is_loopback()
}

/// The accept path's check: when protected mode refuses `peer`, writes [`DENIED`], counts a
/// rejected connection and returns true (the caller drops the stream, closing it).
pub fn deny(server: &mut Server, stream: &mut impl Write, peer: SocketAddr) -> bool {
    // As Redis, what counts is the default user's password (requirepass or ACL rules).
    if !server.acl.default_user().nopass || !refuses(&server.config, peer.ip()) {
        return false;
    }
    let _ = stream.write_all(DENIED);
    server.stats.rejected_connections += 1;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_non_loopback_clients_of_a_server_without_password() {
        let mut config = Config::default();
        let outside: IpAddr = "198.51.100.7".parse().unwrap();
        assert!(refuses(&config, outside));
        assert!(refuses(&config, "2001:db8::1".parse().unwrap()));
        for local in ["127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1"] {
            assert!(!refuses(&config, local.parse().unwrap()), "{local}");
        }
        config.requirepass = Some(b"secret".to_vec());
        assert!(!refuses(&config, outside));
        config.requirepass = None;
        config.apply("protected-mode", b"no", false).unwrap();
        assert!(!refuses(&config, outside));
    }
}
