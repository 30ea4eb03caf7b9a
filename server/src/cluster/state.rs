//! The cluster as this node sees it (Redis's clusterState): the known nodes, which node
//! serves each slot, the slots being migrated or imported, the epochs, and whether the
//! cluster is up. No I/O: the bus ([`super::bus`]) and the CLUSTER command change it, and
//! nodes.conf ([`super::nodes_conf`]) saves and loads it.

use super::node::{flags, random_id, FailReport, Node, NodeId};
use super::slot::SLOTS;
use std::collections::{BTreeMap, HashMap};

/// How long a forgotten node stays on the blacklist, seconds (CLUSTER_BLACKLIST_TTL).
pub const BLACKLIST_TTL: u64 = 60;

/// Message counters by type, sent and received (CLUSTER INFO).
#[derive(Default, Clone)]
pub struct MessageStats {
    /// Sent, by message type.
    pub sent: [u64; 11],
    /// Received, by message type.
    pub received: [u64; 11],
}

/// Message type names in CLUSTER INFO.
pub const MESSAGE_NAMES: [&str; 11] = [
    "ping",
    "pong",
    "meet",
    "fail",
    "publish",
    "auth-req",
    "auth-ack",
    "update",
    "mfstart",
    "module",
    "publishshard",
];

/// The cluster state.
pub struct ClusterState {
    /// This node's id.
    pub myself: NodeId,
    /// Every known node, this one included.
    pub nodes: HashMap<NodeId, Node>,
    /// The node serving each slot.
    pub slots: Vec<Option<NodeId>>,
    /// Slots this node migrates, and to whom.
    pub migrating: BTreeMap<u16, NodeId>,
    /// Slots this node imports, and from whom.
    pub importing: BTreeMap<u16, NodeId>,
    /// The greatest epoch seen.
    pub current_epoch: u64,
    /// The epoch of the last vote given.
    pub last_vote_epoch: u64,
    /// Whether the cluster is up (cluster_state:ok).
    pub ok: bool,
    /// Nodes forgotten recently, with the Unix second until which they stay forgotten.
    pub blacklist: HashMap<NodeId, u64>,
    /// Message counters.
    pub stats: MessageStats,
    /// Received messages of this type are counted, then dropped (DEBUG
    /// DROP-CLUSTER-PACKET-FILTER; -1 none).
    pub drop_filter: i64,
    /// The configuration changed and nodes.conf must be written.
    pub todo_save: bool,
    /// When the cluster last came down (Unix ms), to delay rejoining as Redis does.
    pub among_minority_time: u64,
    /// When this node became up last (Unix ms).
    pub first_call_time: u64,
    /// Number of masters serving at least one slot (cluster_size).
    pub size: usize,
    /// This node's election and manual failover ([`super::failover`]).
    pub failover: super::failover::Election,
}

impl ClusterState {
    /// A new cluster of one: this node, a master without slots, with a random id.
    pub fn new(random: impl FnMut() -> u64, now: u64) -> ClusterState {
        let id = random_id(random);
        let mut me = Node::new(id, flags::MYSELF | flags::MASTER, now);
        me.shard_id = id;
        let mut nodes = HashMap::new();
        nodes.insert(id, me);
        ClusterState {
            myself: id,
            nodes,
            slots: vec![None; SLOTS],
            migrating: BTreeMap::new(),
            importing: BTreeMap::new(),
            current_epoch: 0,
            last_vote_epoch: 0,
            ok: false,
            blacklist: HashMap::new(),
            stats: MessageStats::default(),
            drop_filter: -1,
            todo_save: false,
            among_minority_time: 0,
            first_call_time: 0,
            size: 0,
            failover: Default::default(),
        }
    }

    /// This node.
    pub fn me(&self) -> &Node {
        &self.nodes[&self.myself]
    }

    /// This node, mutable.
    pub fn me_mut(&mut self) -> &mut Node {
        self.nodes.get_mut(&self.myself).expect("myself is known")
    }

    /// Assigns `slot` to `node` (which must be known); false when it was already its.
    pub fn add_slot(&mut self, node: NodeId, slot: u16) -> bool {
        if self.slots[slot as usize] == Some(node) {
            return false;
        }
        self.del_slot(slot);
        if let Some(n) = self.nodes.get_mut(&node) {
            n.slots.set(slot as usize, true);
        }
        self.slots[slot as usize] = Some(node);
        true
    }

    /// Unassigns `slot`; false when it was unassigned.
    pub fn del_slot(&mut self, slot: u16) -> bool {
        match self.slots[slot as usize].take() {
            Some(owner) => {
                if let Some(n) = self.nodes.get_mut(&owner) {
                    n.slots.set(slot as usize, false);
                }
                true
            }
            None => false,
        }
    }

    /// Unassigns every slot of `node`; returns how many.
    pub fn del_node_slots(&mut self, node: NodeId) -> usize {
        let mut n = 0;
        for slot in 0..SLOTS {
            if self.slots[slot] == Some(node) {
                self.del_slot(slot as u16);
                n += 1;
            }
        }
        n
    }

    /// Removes `id` (not this node): its slots become unassigned, its replicas masterless,
    /// its failure reports forgotten.
    pub fn del_node(&mut self, id: NodeId) {
        self.del_node_slots(id);
        self.migrating.retain(|_, n| *n != id);
        self.importing.retain(|_, n| *n != id);
        self.nodes.remove(&id);
        for n in self.nodes.values_mut() {
            n.fail_reports.retain(|r| r.from != id);
            if n.replica_of == Some(id) {
                n.replica_of = None;
            }
        }
    }

    /// Renames handshake node `old` to its real id `new`.
    pub fn rename(&mut self, old: NodeId, new: NodeId) {
        if let Some(mut n) = self.nodes.remove(&old) {
            n.id = new;
            n.shard_id = new;
            self.nodes.insert(new, n);
        }
    }

    /// The replicas of `master`.
    pub fn replicas_of(&self, master: &NodeId) -> Vec<&Node> {
        let mut out: Vec<&Node> = self
            .nodes
            .values()
            .filter(|n| n.replica_of.as_ref() == Some(master))
            .collect();
        out.sort_by_key(|n| n.id);
        out
    }

    /// Masters (serving slots or not), in id order.
    pub fn masters(&self) -> Vec<&Node> {
        let mut out: Vec<&Node> = self.nodes.values().filter(|n| n.is_master()).collect();
        out.sort_by_key(|n| n.id);
        out
    }

    /// Whether a node with a handshake to `ip:port` (bus port `cport`) is in progress.
    pub fn handshake_in_progress(&self, ip: &str, port: u16, cport: u16) -> bool {
        self.nodes.values().any(|n| {
            n.has(flags::HANDSHAKE)
                && n.ip.eq_ignore_ascii_case(ip)
                && n.port == port
                && n.cport == cport
        })
    }

    /// Starts a handshake with `ip:port@cport` (CLUSTER MEET, gossip of an unknown node):
    /// a node with a random id and the MEET and HANDSHAKE flags. False when one is already
    /// in progress.
    pub fn start_handshake(
        &mut self,
        ip: &str,
        port: u16,
        cport: u16,
        random: impl FnMut() -> u64,
        now: u64,
    ) -> bool {
        if self.handshake_in_progress(ip, port, cport) {
            return false;
        }
        let id = random_id(random);
        let mut n = Node::new(id, flags::HANDSHAKE | flags::MEET, now);
        n.ip = ip.to_string();
        n.port = port;
        n.cport = cport;
        self.nodes.insert(id, n);
        true
    }

    /// Records `reporter`'s report that `node` fails; true when it is new.
    pub fn add_failure_report(&mut self, node: NodeId, reporter: NodeId, now: u64) -> bool {
        let Some(n) = self.nodes.get_mut(&node) else {
            return false;
        };
        if let Some(r) = n.fail_reports.iter_mut().find(|r| r.from == reporter) {
            r.time = now;
            return false;
        }
        n.fail_reports.push(FailReport {
            from: reporter,
            time: now,
        });
        true
    }

    /// Forgets `reporter`'s report on `node`; true when it had one.
    pub fn del_failure_report(&mut self, node: NodeId, reporter: NodeId) -> bool {
        let Some(n) = self.nodes.get_mut(&node) else {
            return false;
        };
        let before = n.fail_reports.len();
        n.fail_reports.retain(|r| r.from != reporter);
        n.fail_reports.len() != before
    }

    /// Failure reports on `node` still valid at `now` (2 x node timeout), old ones dropped.
    pub fn failure_reports(&mut self, node: NodeId, node_timeout: u64, now: u64) -> usize {
        let validity = node_timeout * 2;
        match self.nodes.get_mut(&node) {
            Some(n) => {
                n.fail_reports
                    .retain(|r| now.saturating_sub(r.time) <= validity);
                n.fail_reports.len()
            }
            None => 0,
        }
    }

    /// Adds `id` to the blacklist until `now_secs` + TTL.
    pub fn blacklist_add(&mut self, id: NodeId, now_secs: u64) {
        self.blacklist_clean(now_secs);
        self.blacklist.insert(id, now_secs + BLACKLIST_TTL);
    }

    /// Drops expired blacklist entries.
    pub fn blacklist_clean(&mut self, now_secs: u64) {
        self.blacklist.retain(|_, until| *until > now_secs);
    }

    /// Whether `id` is blacklisted.
    pub fn blacklisted(&mut self, id: &NodeId, now_secs: u64) -> bool {
        self.blacklist_clean(now_secs);
        self.blacklist.contains_key(id)
    }

    /// The greatest config epoch of any node.
    pub fn max_epoch(&self) -> u64 {
        self.nodes
            .values()
            .map(|n| n.config_epoch)
            .max()
            .unwrap_or(0)
            .max(self.current_epoch)
    }

    /// Gives this node a new config epoch greater than every other when its own is zero or
    /// not the greatest (clusterBumpConfigEpochWithoutConsensus); true when bumped.
    pub fn bump_epoch(&mut self) -> bool {
        let max = self.max_epoch();
        let mine = self.me().config_epoch;
        if mine == 0 || mine != max {
            self.current_epoch += 1;
            let e = self.current_epoch;
            self.me_mut().config_epoch = e;
            self.todo_save = true;
            true
        } else {
            false
        }
    }

    /// Recomputes cluster_state and cluster_size (clusterUpdateState): down when a slot is
    /// unserved or served by a failing node (with full coverage required), or when this
    /// master cannot reach a majority of the masters serving slots.
    pub fn update_state(&mut self, require_full_coverage: bool, node_timeout: u64, now: u64) {
        let mut size = 0;
        let mut reachable = 0;
        // Each slot has one owner, whose bitmap has it: the slots are all served by nodes
        // not in FAIL when those nodes' bitmaps add up to every slot.
        let mut served = 0;
        for n in self.nodes.values() {
            let owned = n.slots.count();
            if !n.has(flags::FAIL) {
                served += owned;
            }
            if n.is_master() && owned > 0 {
                size += 1;
                if !n.failing() {
                    reachable += 1;
                }
            }
        }
        let mut ok = !require_full_coverage || served == SLOTS;
        self.size = size;
        let quorum = size / 2 + 1;
        if reachable < quorum {
            ok = false;
            self.among_minority_time = now;
        }
        // A master that rejoins the majority waits before accepting writes, as Redis does.
        if ok && !self.ok && self.me().is_master() && self.among_minority_time != 0 {
            let rejoin = node_timeout.min(5000);
            if now.saturating_sub(self.among_minority_time) < rejoin {
                return;
            }
        }
        self.ok = ok;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter() -> impl FnMut() -> u64 {
        let mut x = 1u64;
        move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            x
        }
    }

    #[test]
    fn slots_epochs_and_state() {
        let mut c = ClusterState::new(counter(), 0);
        let me = c.myself;
        assert!(c.add_slot(me, 5));
        assert!(!c.add_slot(me, 5));
        c.update_state(true, 15000, 1);
        assert!(!c.ok);
        for s in 0..SLOTS as u16 {
            c.add_slot(me, s);
        }
        c.update_state(true, 15000, 2);
        assert!(c.ok);
        assert_eq!(c.size, 1);
        assert!(c.bump_epoch());
        assert!(!c.bump_epoch());
        assert_eq!(c.me().config_epoch, 1);
        assert_eq!(c.del_node_slots(me), SLOTS);
        assert!(c.start_handshake("127.0.0.1", 7000, 17000, counter(), 0));
        assert!(!c.start_handshake("127.0.0.1", 7000, 17000, counter(), 0));
    }

    use proptest::prelude::*;

    proptest! {
        /// Whatever the sequence of assignments, removals and node deletions, each node's
        /// bitmap holds exactly the slots the slot table gives it.
        #[test]
        fn slot_table_and_bitmaps_agree(ops in proptest::collection::vec((0u8..4, 0u16..64, 0usize..3), 1..200)) {
            let mut c = ClusterState::new(counter(), 0);
            let ids: Vec<NodeId> = (0..3u8).map(|i| [b'a' + i; 40]).collect();
            for id in &ids {
                c.nodes.insert(*id, Node::new(*id, flags::MASTER, 0));
            }
            for (op, slot, who) in ops {
                match op {
                    0 | 1 => { c.add_slot(ids[who], slot); }
                    2 => { c.del_slot(slot); }
                    _ => { c.del_node_slots(ids[who]); }
                }
            }
            for (id, n) in &c.nodes {
                for s in 0..64 {
                    prop_assert_eq!(n.slots.get(s), c.slots[s] == Some(*id));
                }
                let owned = c.slots.iter().filter(|o| **o == Some(*id)).count();
                prop_assert_eq!(n.slots.count(), owned);
            }
        }
    }
}
