//! Binding the listening sockets (`--bind`, `--port`).

use mio::net::TcpListener;

/// Binds a listener on each address (a leading `-`, Redis's mark of an optional address, is
/// accepted and ignored).
pub fn bind(addresses: &[String], port: u16) -> anyhow::Result<Vec<TcpListener>> {
    let mut listeners = Vec::new();
    for address in addresses {
        let ip: std::net::IpAddr = address
            .trim_start_matches('-')
            .parse()
            .map_err(|_| anyhow::anyhow!("invalid bind address '{address}'"))?;
        let addr = std::net::SocketAddr::new(ip, port);
        listeners.push(TcpListener::bind(addr).map_err(|e| {
            anyhow::anyhow!("Could not create server TCP listening socket {addr}: {e}")
        })?);
    }
    Ok(listeners)
}
