//! Redis Cluster: 16384 hash slots over the nodes, the cluster bus in Redis 7's binary
//! format, nodes.conf, and what the dispatcher and CLUSTER need of them.
//!
//! - [`slot`]: CRC16 hash slots with `{hash tags}`.
//! - [`config`]: the cluster-* directives.
//! - [`node`]: one node (id, address, flags, slots, failure reports).
//! - [`state`]: the cluster as this node sees it (nodes, slot owners, migrations, epochs,
//!   cluster_state).
//! - [`nodes_conf`]: the CLUSTER NODES lines, nodes.conf's atomic writing and its loading.
//! - [`wire`]: the bus messages' binary layout (the diagram is there), parsing and encoding.
//! - [`gossip`]: what a message does to the state, and the messages sent (no I/O).
//! - [`bus`]: the sockets on the event loop and the cron.
//!
//! The keys of each slot are kept by the keyspace ([`crate::keyspace::slots`]) when cluster
//! mode is on; the routing of commands (MOVED, ASK, CROSSSLOT, ...) is
//! `commands::cluster_route`, CLUSTER's subcommands `commands::cluster_cmd`.
//!
//! - [`failover`]: replicas following their master, the automatic failover's election,
//!   CLUSTER FAILOVER's manual failover and replica migration.
//!
//! Not built yet: the MIGRATE/RESTORE-ASKING side (another branch).

pub mod bus;
pub mod config;
pub mod failover;
pub mod gossip;
pub mod node;
pub mod nodes_conf;
pub mod slot;
pub mod state;
pub mod wire;

use crate::server::Server;
use state::ClusterState;
use std::path::PathBuf;

/// A client's cluster flags.
#[derive(Debug, Default, Clone, Copy)]
pub struct ClientFlags {
    /// ASKING was sent: the next command may use a slot being imported.
    pub asking: bool,
    /// READONLY: a replica serves this client's reads of its master's slots.
    pub readonly: bool,
}

/// Cluster mode's state on a server.
pub struct Cluster {
    /// The cluster as this node sees it.
    pub state: ClusterState,
    /// nodes.conf.
    pub path: PathBuf,
    /// The sockets.
    pub bus: bus::Bus,
    /// The client port (for this node's address).
    pub port: u16,
    /// The bus port.
    pub bus_port: u16,
    /// PUBLISH (false) and SPUBLISH (true) messages to send on the bus: channel, message.
    pub outbox: Vec<(bool, Vec<u8>, Vec<u8>)>,
    /// Links DEBUG CLUSTERLINK KILL closes before the bus next sends: the node, and
    /// whether its outbound link (to) and its inbound link (from) go.
    pub link_kills: Vec<(node::NodeId, bool, bool)>,
    /// The keys loaded at start were checked against the slot map.
    pub verified: bool,
    /// nodes.conf held open with an exclusive lock, so no second node uses it (taken again
    /// on the new file after each save's rename).
    lock: std::fs::File,
    /// [`Cluster::durable`]'s values as nodes.conf last had them fsynced.
    synced: (u64, u64, u64),
}

/// Locks nodes.conf (creating it) so that a second node started on the same file refuses
/// to start, as Redis's clusterLockConfig.
fn lock_config(path: &std::path::Path) -> anyhow::Result<std::fs::File> {
    use std::os::fd::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| {
            anyhow::anyhow!(
                "Can't open {} in order to acquire a lock: {e}",
                path.display()
            )
        })?;
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        anyhow::bail!(
            "Sorry, the cluster configuration file {} is already used by a different Redis Cluster node. Please make sure that different nodes use different cluster configuration files.",
            path.display()
        );
    }
    Ok(file)
}

impl Cluster {
    /// Loads nodes.conf (or starts a new cluster of one and writes it) and listens on the
    /// bus port.
    pub fn start(
        config: &crate::config::Config,
        random: impl FnMut() -> u64,
    ) -> anyhow::Result<Cluster> {
        let path = config.dir.join(&config.cluster.config_file);
        let lock = lock_config(&path)?;
        let now = crate::clock::unix_ms();
        let state = match std::fs::read_to_string(&path) {
            Ok(text) if !text.trim().is_empty() => {
                let state = nodes_conf::parse(&text, now).map_err(|why| {
                    anyhow::anyhow!(
                        "Unrecoverable error: corrupted cluster config file \"{}\": {why}",
                        path.display()
                    )
                })?;
                crate::notice!(
                    "Node configuration loaded, I'm {}",
                    node::id_str(&state.myself)
                );
                state
            }
            Ok(_) => ClusterState::new(random, now),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let state = ClusterState::new(random, now);
                crate::notice!(
                    "No cluster configuration found, I'm {}",
                    node::id_str(&state.myself)
                );
                state
            }
            Err(e) => anyhow::bail!("Can't open the cluster config file {}: {e}", path.display()),
        };
        let bus_port = config.cluster.bus_port(config.port);
        let bus = bus::Bus::bind(&config.bind, bus_port, config.sockets())?;
        let mut cluster = Cluster {
            state,
            path,
            bus,
            port: config.port,
            bus_port,
            outbox: Vec::new(),
            link_kills: Vec::new(),
            verified: false,
            lock,
            synced: (0, 0, 0),
        };
        cluster.refresh_myself(config);
        cluster.save()?;
        Ok(cluster)
    }

    /// Sets this node's announced address, ports and hostname from the configuration.
    pub fn refresh_myself(&mut self, config: &crate::config::Config) {
        let c = &config.cluster;
        let port = if c.announce_port != 0 {
            c.announce_port
        } else {
            config.port
        };
        let cport = if c.announce_bus_port != 0 {
            c.announce_bus_port
        } else {
            c.bus_port(config.port)
        };
        let me = self.state.me_mut();
        let mut changed = me.port != port
            || me.cport != cport
            || me.hostname != c.announce_hostname
            || me.human_nodename != c.announce_human_nodename;
        me.port = port;
        me.cport = cport;
        me.pport = c.announce_tls_port;
        me.hostname = c.announce_hostname.clone();
        me.human_nodename = c.announce_human_nodename.clone();
        if !c.announce_ip.is_empty() && me.ip != c.announce_ip {
            me.ip = c.announce_ip.clone();
            changed = true;
        }
        if changed {
            self.state.todo_save = true;
        }
    }

    /// Queues a PUBLISH (to every node) or an SPUBLISH (to the nodes of this shard) for the
    /// bus, sent after the running command.
    pub fn queue_publish(&mut self, channel: &[u8], message: &[u8], shard: bool) {
        self.outbox
            .push((shard, channel.to_vec(), message.to_vec()));
    }

    /// Writes nodes.conf now, fsynced (CLUSTER SAVECONFIG, start-up).
    pub fn save(&mut self) -> std::io::Result<()> {
        self.write(true)
    }

    /// The values a crash must not take back (currentEpoch, lastVoteEpoch, this node's
    /// configEpoch: a vote or an epoch given twice breaks the cluster's safety).
    fn durable(&self) -> (u64, u64, u64) {
        let s = &self.state;
        (s.current_epoch, s.last_vote_epoch, s.me().config_epoch)
    }

    fn write(&mut self, fsync: bool) -> std::io::Result<()> {
        self.state.todo_save = false;
        let durable = self.durable();
        let text = nodes_conf::file_text(&self.state);
        if !fsync {
            return nodes_conf::write_in_place(&self.path, &text);
        }
        nodes_conf::write_atomically(&self.path, &text)?;
        self.synced = durable;
        // The rename put a new file in place: lock that one.
        match lock_config(&self.path) {
            Ok(file) => self.lock = file,
            Err(e) => crate::warning!("{e}"),
        }
        Ok(())
    }

    /// Writes nodes.conf after a change, fsynced only when an epoch changed since the last
    /// fsync (Redis's CLUSTER_TODO_FSYNC_CONFIG: slot moves and gossip are written without
    /// it); logs a failure (Redis exits on it; Goblin keeps serving).
    pub fn save_or_log(&mut self) {
        let fsync = self.durable() != self.synced;
        if let Err(e) = self.write(fsync) {
            crate::warning!("Could not save the cluster configuration: {e}");
        }
    }

    /// Whether `node` has a link (CLUSTER NODES's connected).
    pub fn connected(&self, node: &node::NodeId) -> bool {
        self.bus.linked(node)
    }
}

/// Checks the keys loaded at start against the slot map (Redis's
/// verifyClusterConfigWithData): a master takes the unassigned slots it has keys for, and
/// marks as importing the slots of other nodes it has keys for. Keys outside database 0
/// stop the server, as in Redis.
pub fn verify_data(server: &mut Server) {
    let Some(cluster) = server.cluster.as_deref_mut() else {
        return;
    };
    cluster.verified = true;
    if !cluster.state.me().is_master() {
        return;
    }
    let dbs = server.keyspace.databases();
    if dbs.iter().skip(1).any(|db| !db.is_empty()) {
        crate::warning!(
            "You can't have keys in a DB different than DB 0 when in Cluster mode. Exiting."
        );
        std::process::exit(1);
    }
    let db0 = &dbs[0];
    let me = cluster.state.myself;
    let mut changed = false;
    for slot in 0..slot::SLOTS as u16 {
        if db0.count_in_slot(slot).unwrap_or(0) == 0 {
            continue;
        }
        let owner = cluster.state.slots[slot as usize];
        if owner == Some(me) || cluster.state.importing.contains_key(&slot) {
            continue;
        }
        changed = true;
        match owner {
            None => {
                crate::warning!(
                    "I have keys for unassigned slot {slot}. Taking responsibility for it."
                );
                cluster.state.add_slot(me, slot);
            }
            Some(other) => {
                crate::warning!("I have keys for slot {slot}, but the slot is assigned to another node. Setting it to importing state.");
                cluster.state.importing.insert(slot, other);
            }
        }
    }
    if changed {
        cluster.save_or_log();
    }
}

/// Deletes the keys of `slot` in database 0 (the slot now belongs to another node).
pub fn delete_keys_in_slot(server: &mut Server, slot: u16) -> usize {
    let keys: Vec<Vec<u8>> = server
        .keyspace
        .db(0)
        .keys_in_slot(slot, usize::MAX)
        .into_iter()
        .map(|k| k.to_vec())
        .collect();
    let lazy = server
        .keyspace
        .removal_is_lazy(crate::keyspace::Cause::Server);
    for key in &keys {
        server.keyspace.delete(0, key);
        // Each deletion reaches the replicas and the AOF on its own, as Redis's delKeysInSlot
        // (whose 'del' event goes to modules only: the keys moved, clients get no event).
        server.propagation.deletion(0, key.clone(), lazy);
        server.propagation.end_unit(false);
    }
    server.keyspace.add_dirty(keys.len() as u64);
    keys.len()
}
