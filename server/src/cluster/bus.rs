//! The cluster bus's sockets on the server's event loop: the listeners on the bus port, one
//! link per connection (outbound links this node opens to each known node, inbound links
//! other nodes opened), non-blocking reads and writes, and the cron (clusterCron, every
//! 100 ms): connecting, pinging, timeouts, PFAIL, the state update and nodes.conf saves.
//!
//! Tokens: the listeners are the loop's sources [`LISTENER_BASE`]..[`LINK_BASE`] (the
//! sources below are replication's), link `k` is source `LINK_BASE + k`. What a message means is [`super::gossip`]'s business.

use super::gossip::{self, Action, Env, LinkView};
use super::node::{flags, id_str, NodeId};
use super::wire::{self, types};
use super::Cluster;
use crate::server::Server;
use mio::net::{TcpListener, TcpStream};
use mio::{Interest, Registry};
use slab::Slab;
use std::collections::HashMap;
use std::io::Read;
use std::net::SocketAddr;

/// The first bus listener's source: the one after the replica's link to its master.
pub const LISTENER_BASE: usize = crate::replication::PIPE_SOURCE + 1;
/// Sources from [`LISTENER_BASE`] below this are bus listeners.
pub const LINK_BASE: usize = LISTENER_BASE + 16;
/// The cron's period, milliseconds.
pub const CRON_MS: u64 = 100;
/// A message longer than this closes the link.
const MAX_MESSAGE: usize = 1 << 30;

/// One connection to another node.
pub struct Link {
    stream: TcpStream,
    /// The node: for an outbound link the one we connected to; for an inbound link the
    /// sender once known.
    pub node: Option<NodeId>,
    /// Accepted rather than opened.
    pub inbound: bool,
    /// When it was created, Unix ms.
    pub ctime: u64,
    connected: bool,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    peer_ip: String,
    local_ip: String,
    /// Bytes sent and received (CLUSTER LINKS).
    pub sent_bytes: u64,
}

impl Link {
    /// Bytes waiting to be sent.
    pub fn send_buffer_used(&self) -> usize {
        self.wbuf.len()
    }

    /// Capacity of the send buffer.
    pub fn send_buffer_allocated(&self) -> usize {
        self.wbuf.capacity()
    }
}

/// A link's send or receive buffer above this is given back once empty.
const KEEP_SEND_BUFFER: usize = 16 * 1024;

/// The bus: listeners and links.
#[derive(Default)]
pub struct Bus {
    listeners: Vec<TcpListener>,
    registered: bool,
    /// The links.
    pub links: Slab<Link>,
    /// Each node's outbound link.
    pub outbound: HashMap<NodeId, usize>,
    /// Each node's inbound link.
    pub inbound: HashMap<NodeId, usize>,
    iteration: u64,
    last_cron: u64,
    /// cluster-link-sendbuf-limit (0: none).
    sendbuf_limit: u64,
    /// Links closed for passing it (CLUSTER INFO total_cluster_links_buffer_limit_exceeded).
    pub limit_exceeded: u64,
}

fn ip_text(addr: Option<SocketAddr>) -> String {
    match addr {
        Some(SocketAddr::V4(a)) => a.ip().to_string(),
        Some(SocketAddr::V6(a)) => match a.ip().to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => a.ip().to_string(),
        },
        None => String::new(),
    }
}

impl Bus {
    /// Listens on the bus port at each bind address (listen backlog `backlog`).
    pub fn bind(
        addresses: &[String],
        port: u16,
        sockets: crate::net::listen::Sockets,
    ) -> anyhow::Result<Bus> {
        let listeners = crate::net::bind(addresses, port, sockets)?;
        if listeners.is_empty() {
            anyhow::bail!("Failed listening on the cluster bus port {port}");
        }
        Ok(Bus {
            listeners,
            ..Default::default()
        })
    }

    /// Whether `node` has an outbound link.
    pub fn linked(&self, node: &NodeId) -> bool {
        self.outbound.contains_key(node)
    }

    fn close(&mut self, registry: &Registry, key: usize) {
        if !self.links.contains(key) {
            return;
        }
        let mut link = self.links.remove(key);
        let _ = registry.deregister(&mut link.stream);
        if let Some(node) = link.node {
            if self.outbound.get(&node) == Some(&key) {
                self.outbound.remove(&node);
            }
            if self.inbound.get(&node) == Some(&key) {
                self.inbound.remove(&node);
            }
        }
    }

    /// Closes `node`'s outbound link (`to`) and its inbound link (`from`), as DEBUG
    /// CLUSTERLINK KILL asks; what their send buffers held is lost, and the cron connects
    /// again.
    fn kill_links(&mut self, registry: &Registry, node: &NodeId, to: bool, from: bool) {
        let keys = [
            to.then(|| self.outbound.get(node).copied()).flatten(),
            from.then(|| self.inbound.get(node).copied()).flatten(),
        ];
        for key in keys.into_iter().flatten() {
            self.close(registry, key);
        }
    }

    fn close_node_link(&mut self, registry: &Registry, node: &NodeId) {
        if let Some(key) = self.outbound.get(node).copied() {
            self.close(registry, key);
        }
    }

    fn add_link(
        &mut self,
        registry: &Registry,
        mut stream: TcpStream,
        node: Option<NodeId>,
        inbound: bool,
        now: u64,
    ) -> Option<usize> {
        let entry = self.links.vacant_entry();
        let key = entry.key();
        registry
            .register(
                &mut stream,
                goblin_evloop::source(LINK_BASE + key),
                Interest::READABLE | Interest::WRITABLE,
            )
            .ok()?;
        let _ = stream.set_nodelay(true);
        let peer_ip = ip_text(stream.peer_addr().ok());
        let local_ip = ip_text(stream.local_addr().ok());
        entry.insert(Link {
            stream,
            node,
            inbound,
            ctime: now,
            connected: inbound,
            rbuf: Vec::new(),
            wbuf: Vec::new(),
            peer_ip,
            local_ip,
            sent_bytes: 0,
        });
        Some(key)
    }

    /// Queues `bytes` on link `key` and writes what the socket takes.
    fn send(&mut self, registry: &Registry, key: usize, bytes: &[u8]) {
        let Some(link) = self.links.get_mut(key) else {
            return;
        };
        link.wbuf.extend_from_slice(bytes);
        if link.connected && !self.flush(key) {
            return self.close(registry, key);
        }
        let pending = self.links.get(key).map_or(0, |l| l.wbuf.len() as u64);
        if self.sendbuf_limit != 0 && pending > self.sendbuf_limit {
            crate::notice!(
                "Freeing cluster link: its send buffer passed cluster-link-sendbuf-limit"
            );
            self.limit_exceeded += 1;
            self.close(registry, key);
        }
    }

    /// Writes what the socket takes; false when the link broke.
    fn flush(&mut self, key: usize) -> bool {
        let link = &mut self.links[key];
        while !link.wbuf.is_empty() {
            match goblin_evloop::write_some(&mut link.stream, &link.wbuf) {
                Ok(Some(n)) => {
                    link.wbuf.drain(..n);
                    link.sent_bytes += n as u64;
                }
                Ok(None) => break,
                Err(_) => return false,
            }
        }
        if link.wbuf.is_empty() && link.wbuf.capacity() > KEEP_SEND_BUFFER {
            // Sent: a buffer grown for big messages goes back, as Redis frees each sent
            // message's block.
            link.wbuf = Vec::new();
        }
        true
    }
}

/// Splits the cluster off the server while `f` runs (so both can be changed).
fn with_cluster(server: &mut Server, f: impl FnOnce(&mut Server, &mut Cluster)) {
    if let Some(mut cluster) = server.cluster.take() {
        f(server, &mut cluster);
        server.cluster = Some(cluster);
    }
}

/// A readiness event on bus source `n`.
pub fn ready(server: &mut Server, registry: &Registry, n: usize) {
    with_cluster(server, |server, cluster| {
        if n < LISTENER_BASE {
            return;
        }
        if n < LINK_BASE {
            accept(cluster, registry, n - LISTENER_BASE);
        } else {
            service(server, cluster, registry, n - LINK_BASE);
        }
    });
}

fn accept(cluster: &mut Cluster, registry: &Registry, n: usize) {
    let now = crate::clock::unix_ms();
    loop {
        let Some(listener) = cluster.bus.listeners.get(n) else {
            return;
        };
        match listener.accept() {
            Ok((stream, _)) => {
                cluster.bus.add_link(registry, stream, None, true, now);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        }
    }
}

/// Reads and handles what link `key` received, and writes what waits.
fn service(server: &mut Server, cluster: &mut Cluster, registry: &Registry, key: usize) {
    let Some(link) = cluster.bus.links.get_mut(key) else {
        return;
    };
    if !link.connected {
        match link.stream.take_error() {
            Ok(None) => {}
            _ => return cluster.bus.close(registry, key),
        }
        match link.stream.peer_addr() {
            Ok(addr) => {
                link.connected = true;
                link.peer_ip = ip_text(Some(addr));
                link.local_ip = ip_text(link.stream.local_addr().ok());
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotConnected => return,
            Err(_) => return cluster.bus.close(registry, key),
        }
    }
    let mut chunk = [0u8; 16 * 1024];
    let mut eof = false;
    loop {
        match link.stream.read(&mut chunk) {
            Ok(0) => {
                eof = true;
                break;
            }
            Ok(n) => link.rbuf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => {
                eof = true;
                break;
            }
        }
    }
    // Every whole message, in order.
    loop {
        let Some(link) = cluster.bus.links.get_mut(key) else {
            return;
        };
        if link.rbuf.len() < wire::MIN_READ {
            break;
        }
        let len = match wire::announced_len(&link.rbuf) {
            Ok(len) if (wire::HEADER_LEN..=MAX_MESSAGE).contains(&len) => len,
            _ => return cluster.bus.close(registry, key),
        };
        if link.rbuf.len() < len {
            break;
        }
        let bytes: Vec<u8> = link.rbuf.drain(..len).collect();
        if link.rbuf.is_empty() && link.rbuf.capacity() > KEEP_SEND_BUFFER {
            // As Redis's receive buffer, back to its small size after a big message.
            link.rbuf = Vec::new();
        }
        let Ok(msg) = wire::decode(&bytes) else {
            crate::notice!("Closing a cluster bus link: invalid message");
            return cluster.bus.close(registry, key);
        };
        handle(server, cluster, registry, key, msg);
    }
    if eof {
        return cluster.bus.close(registry, key);
    }
    if cluster.bus.links.contains(key) && !cluster.bus.flush(key) {
        cluster.bus.close(registry, key);
    }
}

/// What a gossip step sees of `server` now: its cluster directives and the clock, with
/// `keys_in_slot` counting the keys of a slot.
fn env<'a>(server: &'a Server, keys_in_slot: &'a dyn Fn(u16) -> usize) -> Env<'a> {
    Env {
        config: &server.config.cluster,
        now: crate::clock::unix_ms(),
        keys_in_slot,
    }
}

/// [`env`]'s `keys_in_slot` for the steps that build messages (they count no keys).
fn no_keys(_: u16) -> usize {
    0
}

/// Processes one message of link `key` and carries out what it asks.
fn handle(
    server: &mut Server,
    cluster: &mut Cluster,
    registry: &Registry,
    key: usize,
    msg: wire::Message,
) {
    // The offset the headers carry is exact (a paused master announces it at MFSTART).
    server.drain_propagation();
    cluster.state.me_mut().repl_offset = super::failover::my_offset(server);
    let link = &cluster.bus.links[key];
    let view = LinkView {
        inbound: link.inbound,
        node: link.node,
        peer_ip: link.peer_ip.clone(),
        local_ip: link.local_ip.clone(),
    };
    let mut seed = server.keyspace.random();
    let keys_db = server.keyspace.db(0);
    let keys = |slot: u16| keys_db.count_in_slot(slot).unwrap_or(0);
    let env = env(server, &keys);
    let bus = &cluster.bus;
    let linked = |id: &NodeId| bus.linked(id);
    let random = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        seed >> 11
    };
    let actions = gossip::process(&mut cluster.state, &env, &view, msg, &linked, random);
    let mut delete_slots = Vec::new();
    for action in actions {
        match action {
            Action::Reply(bytes) => {
                count_sent(cluster, &bytes);
                cluster.bus.send(registry, key, &bytes);
            }
            Action::Broadcast(bytes) => broadcast(cluster, registry, &bytes),
            Action::SendTo(node, bytes) => send_to(cluster, registry, &node, &bytes),
            Action::FreeThisLink => cluster.bus.close(registry, key),
            Action::FreeLinkOf(node) => cluster.bus.close_node_link(registry, &node),
            Action::BindInbound(node) => {
                // A newer inbound link from the node replaces the older one, as Redis's
                // setClusterNodeToInboundClusterLink.
                if let Some(old) = cluster.bus.inbound.get(&node).copied() {
                    if old != key {
                        cluster.bus.close(registry, old);
                    }
                }
                if let Some(link) = cluster.bus.links.get_mut(key) {
                    link.node = Some(node);
                    cluster.bus.inbound.insert(node, key);
                }
            }
            Action::Renamed(old, new) => {
                if cluster.bus.outbound.get(&old) == Some(&key) {
                    cluster.bus.outbound.remove(&old);
                    cluster.bus.outbound.insert(new, key);
                }
                if let Some(link) = cluster.bus.links.get_mut(key) {
                    link.node = Some(new);
                }
            }
            Action::DeleteKeysInSlot(slot) => delete_slots.push(slot),
            Action::Publish {
                channel,
                message,
                shard,
            } => {
                crate::commands::deliver_from_bus(server, shard, &channel, &message);
            }
            Action::SaveNow => cluster.save_or_log(),
        }
    }
    for slot in delete_slots {
        super::delete_keys_in_slot(server, slot);
    }
    super::failover::sync_pause(server, &mut cluster.state);
}

fn count_sent(cluster: &mut Cluster, bytes: &[u8]) {
    let mtype = u16::from_be_bytes([bytes[12], bytes[13]]) as usize;
    if mtype < types::COUNT {
        cluster.state.stats.sent[mtype] += 1;
    }
}

/// Sends `bytes` on every outbound link of a node not in handshake.
pub fn broadcast(cluster: &mut Cluster, registry: &Registry, bytes: &[u8]) {
    let keys: Vec<usize> = cluster
        .bus
        .outbound
        .iter()
        .filter(|(id, _)| {
            cluster
                .state
                .nodes
                .get(*id)
                .is_some_and(|n| !n.has(flags::HANDSHAKE | flags::MYSELF))
        })
        .map(|(_, k)| *k)
        .collect();
    for k in keys {
        count_sent(cluster, bytes);
        cluster.bus.send(registry, k, bytes);
    }
}

/// Sends `bytes` to `node` on its outbound link, if it has one.
pub fn send_to(cluster: &mut Cluster, registry: &Registry, node: &NodeId, bytes: &[u8]) {
    if let Some(k) = cluster.bus.outbound.get(node).copied() {
        count_sent(cluster, bytes);
        cluster.bus.send(registry, k, bytes);
    }
}

/// A message of `mtype` without data (FAILOVER_AUTH_REQUEST, MFSTART); the vote request of
/// a manual failover is flagged FORCEACK.
pub fn message(server: &Server, cluster: &Cluster, mtype: u16) -> Vec<u8> {
    let env = env(server, &no_keys);
    let mut header = gossip::header(&cluster.state, &env, mtype);
    if mtype == types::AUTH_REQUEST && cluster.state.failover.mf_end != 0 {
        header.mflags[0] |= wire::FLAG0_FORCEACK;
    }
    wire::encode(&wire::Message {
        header,
        body: wire::Body::Other(Vec::new()),
    })
}

/// Sends a PING, PONG or MEET to `node` on its outbound link.
pub fn send_ping(
    server: &mut Server,
    cluster: &mut Cluster,
    registry: &Registry,
    node: NodeId,
    mtype: u16,
) {
    let Some(key) = cluster.bus.outbound.get(&node).copied() else {
        return;
    };
    let mut seed = server.keyspace.random();
    let env = env(server, &no_keys);
    let bus = &cluster.bus;
    let bytes = gossip::ping(
        &cluster.state,
        &env,
        mtype,
        Some(&node),
        &|id| bus.linked(id),
        move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            seed >> 11
        },
    );
    if mtype == types::PING {
        if let Some(n) = cluster.state.nodes.get_mut(&node) {
            n.ping_sent = env.now;
        }
    }
    count_sent(cluster, &bytes);
    cluster.bus.send(registry, key, &bytes);
}

/// The cron: runs every [`CRON_MS`] (the caller may call it more often); true when it ran.
pub fn cron(server: &mut Server, registry: &Registry) -> bool {
    let mut ran = false;
    if !server.is_loading() && server.cluster.as_ref().is_some_and(|c| !c.verified) {
        super::verify_data(server);
    }
    with_cluster(server, |server, cluster| {
        for (node, to, from) in std::mem::take(&mut cluster.link_kills) {
            cluster.bus.kill_links(registry, &node, to, from);
        }
        if !cluster.outbox.is_empty() {
            send_publishes(server, cluster, registry);
        }
        super::failover::send_pending(server, cluster, registry);
        let now = crate::clock::unix_ms();
        if now.saturating_sub(cluster.bus.last_cron) < CRON_MS {
            return;
        }
        cluster.bus.last_cron = now;
        tick(server, cluster, registry, now);
        ran = true;
    });
    ran
}

/// Sends the queued PUBLISH messages to every node, the SPUBLISH ones to the nodes of this
/// node's shard (clusterPropagatePublish, clusterPropagatePublishShard).
fn send_publishes(server: &mut Server, cluster: &mut Cluster, registry: &Registry) {
    let env = env(server, &no_keys);
    let shard_id = cluster.state.me().shard_id;
    for (shard, channel, message) in std::mem::take(&mut cluster.outbox) {
        let bytes = gossip::publish(&cluster.state, &env, &channel, &message, shard);
        if !shard {
            broadcast(cluster, registry, &bytes);
            continue;
        }
        let peers: Vec<usize> = cluster
            .state
            .nodes
            .values()
            .filter(|n| n.shard_id == shard_id && !n.has(flags::MYSELF))
            .filter_map(|n| cluster.bus.outbound.get(&n.id).copied())
            .collect();
        for key in peers {
            count_sent(cluster, &bytes);
            cluster.bus.send(registry, key, &bytes);
        }
    }
}

fn tick(server: &mut Server, cluster: &mut Cluster, registry: &Registry, now: u64) {
    if !cluster.bus.registered {
        for (i, l) in cluster.bus.listeners.iter_mut().enumerate() {
            let _ = registry.register(
                l,
                goblin_evloop::source(LISTENER_BASE + i),
                Interest::READABLE,
            );
        }
        cluster.bus.registered = true;
    }
    cluster.refresh_myself(&server.config);
    let config = server.config.cluster.clone();
    cluster.bus.sendbuf_limit = config.link_sendbuf_limit;
    let timeout = config.node_timeout;
    cluster.bus.iteration += 1;
    // Links of nodes that are gone (forgotten, handshakes that timed out).
    let stale: Vec<usize> = cluster
        .bus
        .links
        .iter()
        .filter(|(_, l)| {
            l.node
                .is_some_and(|n| !cluster.state.nodes.contains_key(&n))
        })
        .map(|(k, _)| k)
        .collect();
    for key in stale {
        cluster.bus.close(registry, key);
    }
    let handshake_timeout = timeout.max(1000);
    let mut ids: Vec<NodeId> = cluster.state.nodes.keys().copied().collect();
    ids.sort();
    // Connect to every node without an outbound link; expire stale handshakes.
    for id in &ids {
        let Some(n) = cluster.state.nodes.get(id) else {
            continue;
        };
        if n.has(flags::MYSELF | flags::NOADDR) {
            continue;
        }
        if n.has(flags::HANDSHAKE) && now.saturating_sub(n.ctime) > handshake_timeout {
            cluster.state.del_node(*id);
            cluster.bus.close_node_link(registry, id);
            continue;
        }
        if cluster.bus.outbound.contains_key(id) {
            continue;
        }
        let addr = format!("{}:{}", n.ip, n.cport);
        let Ok(addr) = addr.parse::<SocketAddr>() else {
            continue;
        };
        let meet = n.has(flags::MEET);
        let source = &server.config.repl.bind_source_addr;
        let stream = match crate::net::connect::connect_from(addr, source) {
            Ok(s) => s,
            Err(e) => {
                crate::notice!("Unable to connect to Cluster Node [{addr}]: {e}");
                continue;
            }
        };
        let Some(key) = cluster
            .bus
            .add_link(registry, stream, Some(*id), false, now)
        else {
            continue;
        };
        cluster.bus.outbound.insert(*id, key);
        let old_ping_sent = n.ping_sent;
        send_ping(
            server,
            cluster,
            registry,
            *id,
            if meet { types::MEET } else { types::PING },
        );
        if let Some(n) = cluster.state.nodes.get_mut(id) {
            if old_ping_sent != 0 {
                n.ping_sent = old_ping_sent;
            }
            n.flags &= !flags::MEET;
        }
    }
    // Once a second, ping the node of five random ones whose pong is oldest.
    if cluster.bus.iteration.is_multiple_of(10) && !ids.is_empty() {
        let mut best: Option<(u64, NodeId)> = None;
        for _ in 0..5 {
            let id = ids[(server.keyspace.random() % ids.len() as u64) as usize];
            let n = &cluster.state.nodes[&id];
            if !cluster.bus.linked(&id)
                || n.ping_sent != 0
                || n.has(flags::MYSELF | flags::HANDSHAKE)
            {
                continue;
            }
            if best.is_none_or(|(p, _)| n.pong_received < p) {
                best = Some((n.pong_received, id));
            }
        }
        if let Some((_, id)) = best {
            send_ping(server, cluster, registry, id, types::PING);
        }
    }
    let mut update = false;
    for id in &ids {
        let Some(n) = cluster.state.nodes.get(id) else {
            continue;
        };
        if n.has(flags::MYSELF | flags::NOADDR | flags::HANDSHAKE) {
            continue;
        }
        let ping_delay = now.saturating_sub(n.ping_sent);
        let data_delay = now.saturating_sub(n.data_received);
        if let Some(&key) = cluster.bus.outbound.get(id) {
            let link_age = now.saturating_sub(cluster.bus.links[key].ctime);
            if link_age > timeout
                && n.ping_sent != 0
                && ping_delay > timeout / 2
                && data_delay > timeout / 2
            {
                cluster.bus.close(registry, key);
            }
        }
        let n = &cluster.state.nodes[id];
        if cluster.bus.linked(id)
            && n.ping_sent == 0
            && now.saturating_sub(n.pong_received) > config.ping_interval()
        {
            send_ping(server, cluster, registry, *id, types::PING);
            continue;
        }
        if n.ping_sent == 0 {
            continue;
        }
        if ping_delay.min(data_delay) > timeout && !n.failing() {
            crate::notice!("*** NODE {} possibly failing", id_str(id));
            cluster.state.nodes.get_mut(id).expect("known").flags |= flags::PFAIL;
            update = true;
        }
    }
    let _ = update;
    super::failover::cron(server, cluster, registry, now);
    cluster
        .state
        .update_state(config.require_full_coverage, timeout, now);
    if cluster.state.todo_save {
        cluster.save_or_log();
    }
}

/// Bytes the bus's links take (INFO mem_cluster_links, Redis's links memory): each link's
/// state and buffers, and the PUBLISH / SPUBLISH messages queued for the bus, counted once
/// for each link they are bound for (Redis writes them into those send buffers at once).
pub fn links_memory(cluster: &Cluster) -> usize {
    let links: usize = cluster
        .bus
        .links
        .iter()
        .map(|(_, l)| std::mem::size_of::<Link>() + l.rbuf.capacity() + l.wbuf.capacity())
        .sum();
    let shard_id = cluster.state.me().shard_id;
    let shard_links = cluster
        .state
        .nodes
        .values()
        .filter(|n| n.shard_id == shard_id && !n.has(flags::MYSELF))
        .filter(|n| cluster.bus.outbound.contains_key(&n.id))
        .count();
    let queued: usize = cluster
        .outbox
        .iter()
        .map(|(shard, channel, message)| {
            // A publish message: the header, the two lengths, then the bytes.
            let size = super::wire::HEADER_LEN + 8 + channel.len() + message.len();
            size * if *shard {
                shard_links
            } else {
                cluster.bus.outbound.len()
            }
        })
        .sum();
    links + queued
}

/// The CLUSTER LINKS reply's data: for each link, (direction, node, create time, events,
/// send buffer allocated, send buffer used).
pub fn links(cluster: &Cluster) -> Vec<(&'static str, NodeId, u64, &'static str, usize, usize)> {
    let mut out = Vec::new();
    for (_, link) in cluster.bus.links.iter() {
        let Some(node) = link.node else {
            continue;
        };
        let dir = if link.inbound { "from" } else { "to" };
        let events = if link.wbuf.is_empty() { "r" } else { "rw" };
        out.push((
            dir,
            node,
            link.ctime,
            events,
            link.wbuf.capacity(),
            link.wbuf.len(),
        ));
    }
    out
}
