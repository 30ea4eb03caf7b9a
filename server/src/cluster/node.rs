//! One node of the cluster as this node sees it: its id, address, flags, epochs, slots and
//! failure reports, and the text CLUSTER NODES and nodes.conf give it.

use super::slot::SLOTS;

/// A node id: 40 lowercase hex characters.
pub type NodeId = [u8; 40];

/// The node flags, with Redis's bit values (they travel on the bus).
pub mod flags {
    /// A master.
    pub const MASTER: u16 = 1;
    /// A replica.
    pub const SLAVE: u16 = 2;
    /// Possibly failing (this node's view).
    pub const PFAIL: u16 = 4;
    /// Failing (agreed by a majority).
    pub const FAIL: u16 = 8;
    /// This node.
    pub const MYSELF: u16 = 16;
    /// Met, first PING not yet answered.
    pub const HANDSHAKE: u16 = 32;
    /// Address unknown.
    pub const NOADDR: u16 = 64;
    /// A MEET is to be sent.
    pub const MEET: u16 = 128;
    /// A master eligible for replica migration.
    pub const MIGRATE_TO: u16 = 256;
    /// A replica that will not fail over.
    pub const NOFAILOVER: u16 = 512;

    /// Names in the order Redis prints them (representClusterNodeFlags).
    pub const NAMES: [(u16, &str); 9] = [
        (MYSELF, "myself"),
        (MASTER, "master"),
        (SLAVE, "slave"),
        (PFAIL, "fail?"),
        (FAIL, "fail"),
        (HANDSHAKE, "handshake"),
        (NOADDR, "noaddr"),
        (NOFAILOVER, "nofailover"),
        (0, ""),
    ];
}

/// A random node id (40 hex digits) from the random source.
pub fn random_id(mut random: impl FnMut() -> u64) -> NodeId {
    let mut id = [0u8; 40];
    for chunk in id.chunks_mut(16) {
        let mut r = random();
        for b in chunk {
            *b = b"0123456789abcdef"[(r & 15) as usize];
            r >>= 4;
        }
    }
    id
}

/// Whether `text` is a well-formed node id (40 hex characters).
pub fn parse_id(text: &[u8]) -> Option<NodeId> {
    if text.len() != 40 || !text.iter().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut id = [0u8; 40];
    id.copy_from_slice(text);
    Some(id)
}

/// The id as text.
pub fn id_str(id: &NodeId) -> &str {
    std::str::from_utf8(id).unwrap_or("")
}

/// A bitmap of the 16384 slots.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SlotBits(pub Box<[u8; SLOTS / 8]>);

impl Default for SlotBits {
    fn default() -> Self {
        SlotBits(Box::new([0; SLOTS / 8]))
    }
}

impl SlotBits {
    /// Whether `slot` is set.
    #[inline]
    pub fn get(&self, slot: usize) -> bool {
        self.0[slot / 8] & (1 << (slot & 7)) != 0
    }

    /// Sets or clears `slot`.
    #[inline]
    pub fn set(&mut self, slot: usize, on: bool) {
        if on {
            self.0[slot / 8] |= 1 << (slot & 7);
        } else {
            self.0[slot / 8] &= !(1 << (slot & 7));
        }
    }

    /// Number of slots set.
    pub fn count(&self) -> usize {
        self.0.iter().map(|b| b.count_ones() as usize).sum()
    }

    /// The set slots as inclusive ranges, in order.
    pub fn ranges(&self) -> Vec<(u16, u16)> {
        let mut out = Vec::new();
        let mut start: Option<usize> = None;
        for slot in 0..=SLOTS {
            let on = slot < SLOTS && self.get(slot);
            match (on, start) {
                (true, None) => start = Some(slot),
                (false, Some(s)) => {
                    out.push((s as u16, (slot - 1) as u16));
                    start = None;
                }
                _ => {}
            }
        }
        out
    }
}

/// A failure report: who said the node fails, and when (Unix ms).
#[derive(Clone, Debug)]
pub struct FailReport {
    /// The reporting master.
    pub from: NodeId,
    /// When it was last reported.
    pub time: u64,
}

/// One node.
#[derive(Clone)]
pub struct Node {
    /// Its id.
    pub id: NodeId,
    /// Its shard id.
    pub shard_id: NodeId,
    /// flags::* bits.
    pub flags: u16,
    /// Client address ("" unknown).
    pub ip: String,
    /// Client port.
    pub port: u16,
    /// Bus port.
    pub cport: u16,
    /// The other client port (TLS), 0 none.
    pub pport: u16,
    /// Announced hostname ("" none).
    pub hostname: String,
    /// Announced human-readable name, for log lines ("" none).
    pub human_nodename: String,
    /// Its config epoch.
    pub config_epoch: u64,
    /// The master it replicates, if a replica.
    pub replica_of: Option<NodeId>,
    /// Slots it serves, as it announced.
    pub slots: SlotBits,
    /// When we sent the PING not yet answered (Unix ms, 0 none).
    pub ping_sent: u64,
    /// When its last PONG arrived (Unix ms).
    pub pong_received: u64,
    /// When anything last arrived from it (Unix ms).
    pub data_received: u64,
    /// When it was flagged FAIL (Unix ms).
    pub fail_time: u64,
    /// When it was created here (Unix ms).
    pub ctime: u64,
    /// Its replication offset as announced.
    pub repl_offset: u64,
    /// Masters that reported it failing.
    pub fail_reports: Vec<FailReport>,
    /// Its PINGs carry extensions but no shard id (a Redis 7.0 node, which knows only the
    /// hostname extension and logs a warning for each other one): it is sent only that.
    pub no_shard_ext: bool,
    /// When this node last voted for a replica of this master (Unix ms).
    pub voted_time: u64,
}

impl Node {
    /// A node with `id` and `flags`, created at `now` (Unix ms).
    pub fn new(id: NodeId, flags: u16, now: u64) -> Node {
        Node {
            id,
            shard_id: id,
            flags,
            ip: String::new(),
            port: 0,
            cport: 0,
            pport: 0,
            hostname: String::new(),
            human_nodename: String::new(),
            config_epoch: 0,
            replica_of: None,
            slots: SlotBits::default(),
            ping_sent: 0,
            pong_received: 0,
            data_received: 0,
            fail_time: 0,
            ctime: now,
            repl_offset: 0,
            fail_reports: Vec::new(),
            no_shard_ext: false,
            voted_time: 0,
        }
    }

    /// Whether flag `f` is set.
    #[inline]
    pub fn has(&self, f: u16) -> bool {
        self.flags & f != 0
    }

    /// Whether it is a master.
    pub fn is_master(&self) -> bool {
        self.has(flags::MASTER)
    }

    /// Whether it is failing (FAIL or PFAIL).
    pub fn failing(&self) -> bool {
        self.has(flags::FAIL | flags::PFAIL)
    }

    /// The flags as CLUSTER NODES prints them ("noflags" when none).
    pub fn flag_names(&self) -> String {
        let names: Vec<&str> = flags::NAMES
            .iter()
            .filter(|(bit, _)| *bit != 0 && self.has(*bit))
            .map(|(_, n)| *n)
            .collect();
        if names.is_empty() {
            "noflags".into()
        } else {
            names.join(",")
        }
    }
}
