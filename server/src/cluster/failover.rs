//! Replicas and failover in cluster mode, as Redis 7.2's cluster.c: the replication that
//! follows the cluster's view of this node's role (clusterSetMaster), the automatic
//! failover of a replica whose master failed (clusterHandleSlaveFailover: the delay, the
//! rank, FAILOVER_AUTH_REQUEST and the votes counted), the manual failover of CLUSTER
//! FAILOVER (MFSTART, the master pausing writes until the replica has its offset), and
//! replica migration to orphaned masters (clusterHandleSlaveMigration).
//!
//! The votes a master gives are [`super::gossip`]'s (clusterSendFailoverAuthIfNeeded); the
//! messages go out through [`super::bus`].

use super::bus;
use super::node::{flags, id_str, NodeId};
use super::state::ClusterState;
use super::wire::types;
use super::Cluster;
use crate::server::Server;
use std::collections::HashMap;

/// How long a manual failover may take, ms (CLUSTER_MF_TIMEOUT).
pub const MF_TIMEOUT: u64 = 5000;
/// The master's pause lasts this many times [`MF_TIMEOUT`] at most (CLUSTER_MF_PAUSE_MULT).
const MF_PAUSE_MULT: u64 = 2;
/// A master must stay orphaned this long before a replica migrates to it, ms
/// (CLUSTER_SLAVE_MIGRATION_DELAY).
const MIGRATION_DELAY: u64 = 5000;
/// A reason for not failing over is logged again after this long, ms.
const CANT_FAILOVER_RELOG: u64 = 10_000;

/// This node's election (as a replica) and manual failover (on either side).
#[derive(Default, Debug)]
pub struct Election {
    /// When the election starts, or started (Unix ms; 0 never).
    pub auth_time: u64,
    /// Votes received.
    pub auth_count: usize,
    /// FAILOVER_AUTH_REQUEST sent for this election.
    pub auth_sent: bool,
    /// This replica's rank among its master's replicas (0: the greatest offset).
    pub auth_rank: usize,
    /// The epoch of the election.
    pub auth_epoch: u64,
    /// When the manual failover in progress times out (Unix ms; 0 none).
    pub mf_end: u64,
    /// A replica's manual failover may start its election.
    pub mf_can_start: bool,
    /// The offset the paused master announced (a replica's manual failover).
    pub mf_master_offset: Option<u64>,
    /// The replica that asked this master for a manual failover.
    pub mf_replica: Option<NodeId>,
    /// A PONG is to be sent to every node (this node's role or slots changed).
    pub todo_pong_all: bool,
    /// An MFSTART is to be sent to this replica's master.
    pub todo_mfstart: bool,
    /// Since when each orphaned master is orphaned (Unix ms).
    orphaned_since: HashMap<NodeId, u64>,
    /// The last reason logged for not failing over, and when.
    cant_logged: (u8, u64),
    /// This master paused its clients' writes for the manual failover.
    paused: bool,
}

impl Election {
    /// Ends the manual failover in progress (resetManualFailover).
    pub fn reset_manual(&mut self) {
        self.mf_end = 0;
        self.mf_can_start = false;
        self.mf_master_offset = None;
        self.mf_replica = None;
    }

    /// Starts a manual failover on a master at `now`: `replica` asked with MFSTART.
    pub fn start_manual_as_master(&mut self, replica: NodeId, now: u64) {
        self.reset_manual();
        self.mf_end = now + MF_TIMEOUT;
        self.mf_replica = Some(replica);
    }
}

/// This node's replication offset: the stream applied on a replica, master_repl_offset on
/// a master.
pub fn my_offset(server: &Server) -> u64 {
    match (&server.replication.master_addr, &server.replication.link) {
        (Some(_), Some(link)) => link.offset(),
        (Some(_), None) => 0,
        _ => server.replication.offset(),
    }
}

/// Makes this node a replica of `master` in the cluster configuration (clusterSetMaster;
/// the replication follows at [`follow_master`]). This node serves no slots.
pub fn set_master(state: &mut ClusterState, master: NodeId) {
    let shard = state.nodes.get(&master).map_or(master, |n| n.shard_id);
    let me = state.me_mut();
    let was_master = me.is_master();
    me.flags = (me.flags & !(flags::MASTER | flags::MIGRATE_TO)) | flags::SLAVE;
    me.replica_of = Some(master);
    me.shard_id = shard;
    if was_master {
        state.importing.clear();
        state.migrating.clear();
    }
    if let Some(m) = state.nodes.get_mut(&master) {
        m.flags |= flags::MIGRATE_TO;
    }
    state.failover.reset_manual();
    state.todo_save = true;
}

/// Makes the replication agree with the cluster's view of this node: a replica replicates
/// its master's address (replicationSetMaster), a master replicates nothing.
pub fn follow_master(server: &mut Server, state: &ClusterState) {
    let me = state.me();
    if me.is_master() {
        if server.replication.is_replica() {
            crate::replication::replica::unset_master(server);
        }
        return;
    }
    let Some(m) = me.replica_of.and_then(|m| state.nodes.get(&m)) else {
        return;
    };
    if m.ip.is_empty() || m.port == 0 || m.has(flags::NOADDR) {
        return;
    }
    let already = server
        .replication
        .master_addr
        .as_ref()
        .is_some_and(|(h, p)| *h == m.ip && *p == m.port);
    if !already {
        crate::replication::replica::set_master(server, m.ip.clone(), m.port);
    }
}

/// This replica takes its master's place (clusterFailoverReplaceYourMaster): a master now,
/// serving the old master's slots; the other nodes hear it from the PONG sent next.
pub fn replace_my_master(server: &mut Server, cluster: &mut Cluster, now: u64) {
    let state = &mut cluster.state;
    let me = state.me();
    let Some(old) = me.replica_of.filter(|_| !me.is_master()) else {
        return;
    };
    let me = state.me_mut();
    me.flags = (me.flags & !flags::SLAVE) | flags::MASTER;
    me.replica_of = None;
    crate::replication::replica::unset_master(server);
    let myself = state.myself;
    let slots: Vec<u16> = state
        .nodes
        .get(&old)
        .map(|n| {
            (0..super::slot::SLOTS)
                .filter(|&s| n.slots.get(s))
                .map(|s| s as u16)
                .collect()
        })
        .unwrap_or_default();
    for slot in slots {
        state.add_slot(myself, slot);
    }
    let config = &server.config.cluster;
    state.update_state(config.require_full_coverage, config.node_timeout, now);
    cluster.save_or_log();
    cluster.state.failover.todo_pong_all = true;
    cluster.state.failover.reset_manual();
}

/// The rank of this replica: how many of its master's other replicas (that may fail over)
/// have a greater offset (clusterGetSlaveRank).
fn rank(state: &ClusterState, my_offset: u64) -> usize {
    let Some(master) = state.me().replica_of else {
        return 0;
    };
    state
        .replicas_of(&master)
        .iter()
        .filter(|r| r.id != state.myself && !r.has(flags::NOFAILOVER) && r.repl_offset > my_offset)
        .count()
}

/// Why an election cannot go on (clusterLogCantFailover's reasons).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cant {
    DataAge = 1,
    WaitingDelay = 2,
    Expired = 3,
    WaitingVotes = 4,
}

/// Logs why this replica cannot fail over, once per reason every ten seconds, and not in
/// the first node timeout plus five seconds after its master failed.
fn log_cant(state: &mut ClusterState, reason: Cant, node_timeout: u64, now: u64) {
    let (last, at) = state.failover.cant_logged;
    if last == reason as u8 && now.saturating_sub(at) < CANT_FAILOVER_RELOG {
        return;
    }
    state.failover.cant_logged = (reason as u8, now);
    let failed_recently = state
        .me()
        .replica_of
        .and_then(|m| state.nodes.get(&m))
        .is_some_and(|m| {
            m.has(flags::FAIL) && now.saturating_sub(m.fail_time) < node_timeout + 5000
        });
    if failed_recently {
        return;
    }
    let why = match reason {
        Cant::DataAge => "Disconnected from master for longer than allowed. Please check the 'cluster-replica-validity-factor' configuration option.",
        Cant::WaitingDelay => "Waiting the delay before I can start a new failover.",
        Cant::Expired => "Failover attempt expired.",
        Cant::WaitingVotes => "Waiting for votes, but majority still not reached.",
    };
    crate::notice!("Currently unable to failover: {why}");
}

/// What the election step asks the bus to send.
enum Send {
    /// Nothing.
    None,
    /// A PONG to the other replicas of this node's master (they learn its offset).
    PongLocalReplicas,
    /// FAILOVER_AUTH_REQUEST to every node.
    AuthRequest,
}

/// One step of a replica's election (clusterHandleSlaveFailover). Returns what to send;
/// true in the second place when the election is won.
fn election_step(state: &mut ClusterState, server: &Server, now: u64, random: u64) -> (Send, bool) {
    let config = &server.config.cluster;
    let e = &state.failover;
    let manual = e.mf_end != 0 && e.mf_can_start;
    let me = state.me();
    let master = me.replica_of.and_then(|m| state.nodes.get(&m));
    let Some(master) = master.filter(|_| !me.is_master()) else {
        return (Send::None, false);
    };
    if (!manual && (!master.has(flags::FAIL) || config.replica_no_failover))
        || master.slots.count() == 0
    {
        state.failover.cant_logged = (0, 0);
        return (Send::None, false);
    }
    let timeout = config.node_timeout;
    let mut data_age = server
        .replication
        .link
        .as_ref()
        .map_or(u64::MAX / 2, |l| l.data_age_ms());
    if data_age > timeout {
        data_age -= timeout;
    }
    let limit = server.config.repl.ping_period * 1000 + timeout * config.replica_validity_factor;
    if config.replica_validity_factor != 0 && data_age > limit && !manual {
        log_cant(state, Cant::DataAge, timeout, now);
        return (Send::None, false);
    }
    let auth_timeout = (timeout * 2).max(2000);
    let auth_retry = auth_timeout * 2;
    let my_offset = state.me().repl_offset;
    let auth_age = now.saturating_sub(state.failover.auth_time);
    if auth_age > auth_retry {
        let rank = rank(state, my_offset);
        let e = &mut state.failover;
        e.auth_time = now + 500 + random % 500 + rank as u64 * 1000;
        e.auth_count = 0;
        e.auth_sent = false;
        e.auth_rank = rank;
        if e.mf_end != 0 {
            e.auth_time = now;
            e.auth_rank = 0;
        }
        crate::notice!(
            "Start of election delayed for {} milliseconds (rank #{}, offset {my_offset}).",
            e.auth_time - now,
            e.auth_rank
        );
        return (Send::PongLocalReplicas, false);
    }
    if !state.failover.auth_sent && state.failover.mf_end == 0 {
        let new_rank = rank(state, my_offset);
        let e = &mut state.failover;
        if new_rank > e.auth_rank {
            let added = (new_rank - e.auth_rank) as u64 * 1000;
            e.auth_time += added;
            e.auth_rank = new_rank;
            crate::notice!(
                "Replica rank updated to #{new_rank}, added {added} milliseconds of delay."
            );
        }
    }
    if now < state.failover.auth_time {
        log_cant(state, Cant::WaitingDelay, timeout, now);
        return (Send::None, false);
    }
    if auth_age > auth_timeout {
        log_cant(state, Cant::Expired, timeout, now);
        return (Send::None, false);
    }
    if !state.failover.auth_sent {
        state.current_epoch += 1;
        state.failover.auth_epoch = state.current_epoch;
        state.failover.auth_sent = true;
        state.todo_save = true;
        crate::notice!(
            "Starting a failover election for epoch {}.",
            state.current_epoch
        );
        return (Send::AuthRequest, false);
    }
    let quorum = state.size / 2 + 1;
    if state.failover.auth_count >= quorum {
        let epoch = state.failover.auth_epoch;
        crate::notice!("Failover election won for epoch {epoch}.");
        if state.me().config_epoch < epoch {
            state.me_mut().config_epoch = epoch;
            crate::notice!("configEpoch set to {epoch} after successful failover");
        }
        return (Send::None, true);
    }
    log_cant(state, Cant::WaitingVotes, timeout, now);
    (Send::None, false)
}

/// A replica's manual failover: once the paused master's offset is reached, the election
/// may start (clusterHandleManualFailover).
fn manual_step(state: &mut ClusterState) {
    let my_offset = state.me().repl_offset;
    let e = &mut state.failover;
    if e.mf_end == 0 || e.mf_can_start || e.mf_master_offset != Some(my_offset) {
        return;
    }
    e.mf_can_start = true;
    crate::notice!("All master replication stream processed, manual failover can start.");
}

/// Number of replicas of `master` not flagged FAIL (clusterCountNonFailingSlaves).
fn ok_replicas(state: &ClusterState, master: &NodeId) -> usize {
    state
        .replicas_of(master)
        .iter()
        .filter(|r| !r.has(flags::FAIL))
        .count()
}

/// Replica migration (clusterCron's census and clusterHandleSlaveMigration): a replica of
/// a master with the most working replicas, the one of them with the smallest id, moves to
/// a master that serves slots and lost all its replicas, when its own master keeps more
/// than cluster-migration-barrier of them. Returns the master to migrate to.
fn migration_target(state: &mut ClusterState, server: &Server, now: u64) -> Option<NodeId> {
    let config = &server.config.cluster;
    let me = state.me();
    let my_master = me.replica_of.filter(|_| !me.is_master())?;
    let (mut orphaned, mut max_replicas, mut mine) = (0, 0, 0);
    for n in state.nodes.values() {
        if !n.is_master() || n.has(flags::FAIL) {
            continue;
        }
        let ok = ok_replicas(state, &n.id);
        if ok == 0 && n.slots.count() > 0 && n.has(flags::MIGRATE_TO) {
            orphaned += 1;
        }
        max_replicas = max_replicas.max(ok);
        if n.id == my_master {
            mine = ok;
        }
    }
    if orphaned == 0 || max_replicas < 2 || mine != max_replicas || !config.allow_replica_migration
    {
        return None;
    }
    if !state.ok {
        return None;
    }
    let working = state
        .replicas_of(&my_master)
        .iter()
        .filter(|r| !r.failing())
        .count();
    if working as u64 <= config.migration_barrier {
        return None;
    }
    let mut ids: Vec<NodeId> = state.nodes.keys().copied().collect();
    ids.sort();
    let mut candidate = state.myself;
    let mut target = None;
    for id in ids {
        let n = &state.nodes[&id];
        let ok = if n.is_master() {
            ok_replicas(state, &id)
        } else {
            0
        };
        let is_orphaned =
            n.is_master() && !n.has(flags::FAIL) && n.has(flags::MIGRATE_TO) && ok == 0;
        if is_orphaned {
            if target.is_none() && n.slots.count() > 0 {
                target = Some(id);
            }
            state.failover.orphaned_since.entry(id).or_insert(now);
        } else {
            state.failover.orphaned_since.remove(&id);
        }
        if n.is_master() && ok == max_replicas {
            for r in state.replicas_of(&id) {
                if r.id < candidate {
                    candidate = r.id;
                }
            }
        }
    }
    let target = target?;
    let since = state.failover.orphaned_since.get(&target).copied()?;
    (candidate == state.myself && now.saturating_sub(since) > MIGRATION_DELAY).then_some(target)
}

/// The failover's share of the bus cron (every 100 ms): this node's offset for the bus
/// headers, the masters replicas may migrate to, the manual failover's timeout, the
/// replica's election and migration, and the replication following the role.
pub fn cron(server: &mut Server, cluster: &mut Cluster, registry: &mio::Registry, now: u64) {
    cluster.state.me_mut().repl_offset = my_offset(server);
    let masters: Vec<NodeId> = cluster
        .state
        .nodes
        .values()
        .filter(|n| !n.is_master())
        .filter_map(|n| n.replica_of)
        .collect();
    for m in masters {
        if let Some(n) = cluster.state.nodes.get_mut(&m) {
            if m != cluster.state.myself || n.is_master() {
                n.flags |= flags::MIGRATE_TO;
            }
        }
    }
    let e = &mut cluster.state.failover;
    if e.mf_end != 0 && e.mf_end < now {
        crate::notice!("Manual failover timed out.");
        e.reset_manual();
    }
    if !cluster.state.me().is_master() {
        manual_step(&mut cluster.state);
        let random = server.keyspace.random();
        let (send, won) = election_step(&mut cluster.state, server, now, random);
        match send {
            Send::None => {}
            Send::PongLocalReplicas => {
                let master = cluster.state.me().replica_of;
                let peers: Vec<NodeId> = cluster
                    .state
                    .nodes
                    .values()
                    .filter(|n| n.replica_of == master && n.id != cluster.state.myself)
                    .map(|n| n.id)
                    .collect();
                for id in peers {
                    bus::send_ping(server, cluster, registry, id, types::PONG);
                }
            }
            Send::AuthRequest => {
                let bytes = bus::message(server, cluster, types::AUTH_REQUEST);
                bus::broadcast(cluster, registry, &bytes);
            }
        }
        if won {
            replace_my_master(server, cluster, now);
        } else if let Some(target) = migration_target(&mut cluster.state, server, now) {
            crate::notice!("Migrating to orphaned master {}", id_str(&target));
            set_master(&mut cluster.state, target);
        }
    }
    follow_master(server, &cluster.state);
    sync_pause(server, &mut cluster.state);
}

/// The messages a command queued, sent at once (every loop iteration): the PONG to every
/// node after a role change, the MFSTART to this replica's master.
pub fn send_pending(server: &mut Server, cluster: &mut Cluster, registry: &mio::Registry) {
    let e = &mut cluster.state.failover;
    if std::mem::take(&mut e.todo_mfstart) {
        if let Some(master) = cluster.state.me().replica_of {
            let bytes = bus::message(server, cluster, types::MFSTART);
            bus::send_to(cluster, registry, &master, &bytes);
        }
    }
    if std::mem::take(&mut cluster.state.failover.todo_pong_all) {
        cluster.state.me_mut().repl_offset = my_offset(server);
        let ids: Vec<NodeId> = cluster.bus.outbound.keys().copied().collect();
        for id in ids {
            let up = cluster
                .state
                .nodes
                .get(&id)
                .is_some_and(|n| !n.has(flags::HANDSHAKE | flags::MYSELF));
            if up {
                bus::send_ping(server, cluster, registry, id, types::PONG);
            }
        }
    }
}

/// Pauses the clients' writes (and expiry, eviction) while this master's manual failover
/// runs, up to twice its timeout after MFSTART, and lifts the pause when it ends, whatever
/// the outcome (Redis's pauseActions(PAUSE_DURING_FAILOVER) and resetManualFailover).
pub fn sync_pause(server: &mut Server, state: &mut ClusterState) {
    use crate::commands::pause::{self, Purpose};
    let e = &mut state.failover;
    let running = e.mf_end != 0 && e.mf_replica.is_some() && state.nodes[&state.myself].is_master();
    if running && !e.paused {
        let end = e.mf_end - MF_TIMEOUT + MF_TIMEOUT * MF_PAUSE_MULT;
        pause::pause(server, Purpose::Failover, end, pause::WRITE_SET);
        e.paused = true;
    } else if !running && e.paused {
        pause::unpause(server, Purpose::Failover);
        e.paused = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::node::Node;

    fn counter() -> impl FnMut() -> u64 {
        let mut x = 7u64;
        move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            x
        }
    }

    /// A replica's rank counts the sibling replicas ahead of it, not those that may not
    /// fail over; set_master makes a master without slots a replica of the new master.
    #[test]
    fn rank_and_set_master() {
        let mut s = ClusterState::new(counter(), 0);
        let (m, a, b, c) = ([b'm'; 40], [b'a'; 40], [b'b'; 40], [b'c'; 40]);
        s.nodes.insert(m, Node::new(m, flags::MASTER, 0));
        set_master(&mut s, m);
        assert!(!s.me().is_master());
        assert_eq!(s.me().replica_of, Some(m));
        assert!(s.nodes[&m].has(flags::MIGRATE_TO));
        for (id, off, extra) in [(a, 10, 0), (b, 5, 0), (c, 50, flags::NOFAILOVER)] {
            let mut n = Node::new(id, flags::SLAVE | extra, 0);
            n.replica_of = Some(m);
            n.repl_offset = off;
            s.nodes.insert(id, n);
        }
        assert_eq!(rank(&s, 7), 1);
        assert_eq!(rank(&s, 11), 0);
        assert_eq!(rank(&s, 0), 2);
    }

    /// An UPDATE giving this master's last slot to another node (a failover, a reshard)
    /// makes this node a replica of that node, as Redis 7's clusterUpdateSlotsConfigWith.
    #[test]
    fn a_master_that_loses_its_last_slot_follows_the_new_owner() {
        use crate::cluster::gossip::{self, Env, LinkView};
        use crate::cluster::wire;
        let env = Env::at(10);
        let mut s = ClusterState::new(counter(), 0);
        let me = s.myself;
        let (winner, sender) = ([b'w'; 40], [b's'; 40]);
        for id in [winner, sender] {
            s.nodes.insert(id, Node::new(id, flags::MASTER, 0));
        }
        for slot in 0..3 {
            s.add_slot(me, slot);
        }
        let mut sender_state = ClusterState::new(counter(), 0);
        sender_state.myself = sender;
        sender_state
            .nodes
            .insert(sender, Node::new(sender, flags::MASTER | flags::MYSELF, 0));
        let mut w = Node::new(winner, flags::MASTER, 0);
        w.config_epoch = 5;
        for slot in 0..2 {
            w.slots.set(slot, true);
        }
        let view = LinkView {
            inbound: true,
            node: None,
            peer_ip: String::new(),
            local_ip: String::new(),
        };
        let msg = wire::decode(&gossip::update(&sender_state, &env, &w)).unwrap();
        gossip::process(&mut s, &env, &view, msg, &|_| true, counter());
        assert!(s.me().is_master(), "slot 2 is still served here");
        w.slots.set(2, true);
        let msg = wire::decode(&gossip::update(&sender_state, &env, &{
            w.config_epoch = 6;
            w.clone()
        }))
        .unwrap();
        gossip::process(&mut s, &env, &view, msg, &|_| true, counter());
        assert!(!s.me().is_master());
        assert_eq!(s.me().replica_of, Some(winner));
        assert_eq!(s.slots[2], Some(winner));
    }
}
