//! What a bus message does to the cluster state (Redis's clusterProcessPacket and its
//! helpers), and the messages this node sends (clusterBuildMessageHdr, clusterSendPing).
//! No I/O: processing returns [`Action`]s that [`super::bus`] carries out on the sockets.

use super::config::ClusterConfig;
use super::node::{flags, Node, NodeId};
use super::slot::SLOTS;
use super::state::ClusterState;
use super::wire::{self, types, Body, Ext, Gossip, Header, Message};

/// What this node knows of itself that the state does not hold.
pub struct Env<'a> {
    /// The cluster directives.
    pub config: &'a ClusterConfig,
    /// Now, Unix milliseconds.
    pub now: u64,
    /// Keys in a slot of this node (to drop them when the slot moves away).
    pub keys_in_slot: &'a dyn Fn(u16) -> usize,
}

#[cfg(test)]
impl Env<'static> {
    /// For tests: the default directives at `now`, with no keys in any slot.
    pub fn at(now: u64) -> Env<'static> {
        fn no_keys(_: u16) -> usize {
            0
        }
        Env {
            config: Box::leak(Box::default()),
            now,
            keys_in_slot: &no_keys,
        }
    }
}

/// The link a message came on.
pub struct LinkView {
    /// Accepted (the peer connected to us) rather than opened by us.
    pub inbound: bool,
    /// The node the link belongs to (for an outbound link, the node we connected to).
    pub node: Option<NodeId>,
    /// The peer's address.
    pub peer_ip: String,
    /// Our address on this connection.
    pub local_ip: String,
}

/// What the bus must do after a message.
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    /// Send these bytes back on the same link.
    Reply(Vec<u8>),
    /// Send these bytes to every connected node.
    Broadcast(Vec<u8>),
    /// Send these bytes to this node's outbound link.
    SendTo(NodeId, Vec<u8>),
    /// Close the link the message came on.
    FreeThisLink,
    /// Close this node's outbound link (it will be reopened to the new address).
    FreeLinkOf(NodeId),
    /// The link the message came on is this node's inbound link.
    BindInbound(NodeId),
    /// The node of the link the message came on (in handshake) has its real id now.
    Renamed(NodeId, NodeId),
    /// Delete the keys of a slot that moved to another node.
    DeleteKeysInSlot(u16),
    /// Deliver a PUBLISH (shard: SPUBLISH) to this node's subscribers.
    Publish {
        /// Channel.
        channel: Vec<u8>,
        /// Message.
        message: Vec<u8>,
        /// A shard channel.
        shard: bool,
    },
    /// nodes.conf must be written now (an epoch changed).
    SaveNow,
}

/// The header this node sends (clusterBuildMessageHdr).
pub fn header(state: &ClusterState, env: &Env, mtype: u16) -> Header {
    let me = state.me();
    let master = me
        .replica_of
        .and_then(|m| state.nodes.get(&m))
        .filter(|_| !me.is_master());
    let served = master.unwrap_or(me);
    let paused = me.is_master() && state.failover.mf_end != 0;
    Header {
        mtype,
        port: me.port,
        current_epoch: state.current_epoch,
        config_epoch: served.config_epoch,
        offset: me.repl_offset,
        sender: me.id,
        myslots: served.slots.clone(),
        slaveof: if me.is_master() { None } else { me.replica_of },
        myip: env.config.announce_ip.clone(),
        pport: me.pport,
        cport: me.cport,
        flags: me.flags,
        state_fail: !state.ok,
        mflags: [if paused { wire::FLAG0_PAUSED } else { 0 }, 0, 0],
    }
}

fn gossip_entry(n: &Node) -> Gossip {
    Gossip {
        id: n.id,
        ping_sent: (n.ping_sent / 1000) as u32,
        pong_received: (n.pong_received / 1000) as u32,
        ip: n.ip.clone(),
        port: n.port,
        cport: n.cport,
        flags: n.flags,
        pport: n.pport,
    }
}

/// A PING, PONG or MEET with its gossip section (a tenth of the nodes, at least 3, chosen
/// at random, plus every node in PFAIL) and extensions (hostname, forgotten nodes, shard
/// id, unless `to` is known not to take it), as clusterSendPing. `linked` tells which nodes
/// have an outbound link.
pub fn ping(
    state: &ClusterState,
    env: &Env,
    mtype: u16,
    to: Option<&NodeId>,
    linked: &dyn Fn(&NodeId) -> bool,
    mut random: impl FnMut() -> u64,
) -> Vec<u8> {
    let total = state.nodes.len();
    let fresh = total.saturating_sub(2);
    let wanted = (total / 10).max(3).min(fresh);
    let mut candidates: Vec<&Node> = state
        .nodes
        .values()
        .filter(|n| {
            n.id != state.myself
                && !n.has(flags::PFAIL | flags::HANDSHAKE | flags::NOADDR)
                && (linked(&n.id) || n.slots.count() > 0)
        })
        .collect();
    candidates.sort_by_key(|n| n.id);
    let mut gossip = Vec::new();
    while gossip.len() < wanted && !candidates.is_empty() {
        let i = (random() % candidates.len() as u64) as usize;
        gossip.push(gossip_entry(candidates.swap_remove(i)));
    }
    let mut pfail: Vec<&Node> = state
        .nodes
        .values()
        .filter(|n| n.has(flags::PFAIL) && !n.has(flags::HANDSHAKE | flags::NOADDR))
        .collect();
    pfail.sort_by_key(|n| n.id);
    gossip.extend(pfail.into_iter().map(gossip_entry));
    let me = state.me();
    let mut exts = Vec::new();
    if !me.hostname.is_empty() {
        exts.push(Ext::Hostname(me.hostname.clone()));
    }
    // A node that knows only the hostname extension (Redis 7.0 logs a warning for each
    // other one) gets only that.
    let hostname_only = to
        .and_then(|id| state.nodes.get(id))
        .is_some_and(|n| n.no_shard_ext);
    if !hostname_only {
        if !me.human_nodename.is_empty() {
            exts.push(Ext::HumanNodename(me.human_nodename.clone()));
        }
        let now_secs = env.now / 1000;
        let mut forgotten: Vec<_> = state.blacklist.iter().collect();
        forgotten.sort();
        for (id, until) in forgotten {
            if *until > now_secs {
                exts.push(Ext::ForgottenNode(*id, until - now_secs));
            }
        }
        exts.push(Ext::ShardId(me.shard_id));
    }
    wire::encode(&Message {
        header: header(state, env, mtype),
        body: Body::Ping { gossip, exts },
    })
}

/// A FAIL about `node`.
pub fn fail(state: &ClusterState, env: &Env, node: NodeId) -> Vec<u8> {
    wire::encode(&Message {
        header: header(state, env, types::FAIL),
        body: Body::Fail(node),
    })
}

/// An UPDATE telling `node`'s slots and epoch.
pub fn update(state: &ClusterState, env: &Env, node: &Node) -> Vec<u8> {
    wire::encode(&Message {
        header: header(state, env, types::UPDATE),
        body: Body::Update {
            config_epoch: node.config_epoch,
            id: node.id,
            slots: node.slots.clone(),
        },
    })
}

/// A FAILOVER_AUTH_ACK: this master's vote.
pub fn auth_ack(state: &ClusterState, env: &Env) -> Vec<u8> {
    wire::encode(&Message {
        header: header(state, env, types::AUTH_ACK),
        body: Body::Other(Vec::new()),
    })
}

/// Votes for replica `node` asking to replace its failed master, when Redis's rules allow
/// (clusterSendFailoverAuthIfNeeded): this node a master serving slots, the request's
/// epoch current, no vote yet in this epoch, the replica's master failed (or the request
/// forced, for a manual failover), no vote for a replica of that master within twice the
/// node timeout, and no claimed slot served here with a greater config epoch.
fn vote_if_needed(
    state: &mut ClusterState,
    env: &Env,
    node: NodeId,
    h: &Header,
    actions: &mut Vec<Action>,
) {
    let me = state.me();
    if !me.is_master() || me.slots.count() == 0 {
        return;
    }
    let name = super::node::id_str(&node).to_string();
    if h.current_epoch < state.current_epoch {
        crate::notice!(
            "Failover auth denied to {name}: reqEpoch ({}) < curEpoch({})",
            h.current_epoch,
            state.current_epoch
        );
        return;
    }
    if state.last_vote_epoch == state.current_epoch {
        crate::notice!(
            "Failover auth denied to {name}: already voted for epoch {}",
            state.current_epoch
        );
        return;
    }
    let Some(n) = state.nodes.get(&node) else {
        return;
    };
    let force = h.mflags[0] & wire::FLAG0_FORCEACK != 0;
    let master = n.replica_of.and_then(|m| state.nodes.get(&m));
    let Some(master) = master.filter(|m| !n.is_master() && (m.has(flags::FAIL) || force)) else {
        crate::notice!("Failover auth denied to {name}: its master is up or it is not a replica");
        return;
    };
    if env.now.saturating_sub(master.voted_time) < env.config.node_timeout * 2 {
        crate::notice!(
            "Failover auth denied to {name}: can't vote about this master before {} milliseconds",
            env.config.node_timeout * 2 - env.now.saturating_sub(master.voted_time)
        );
        return;
    }
    for slot in 0..SLOTS {
        if !h.myslots.get(slot) {
            continue;
        }
        let owner_epoch = state.slots[slot]
            .and_then(|o| state.nodes.get(&o))
            .map(|o| o.config_epoch);
        if owner_epoch.is_some_and(|e| e > h.config_epoch) {
            crate::notice!(
                "Failover auth denied to {name}: slot {slot} epoch ({}) > reqEpoch ({})",
                owner_epoch.unwrap_or(0),
                h.config_epoch
            );
            return;
        }
    }
    let master_id = master.id;
    state.last_vote_epoch = state.current_epoch;
    if let Some(m) = state.nodes.get_mut(&master_id) {
        m.voted_time = env.now;
    }
    actions.push(Action::SaveNow);
    actions.push(Action::SendTo(node, auth_ack(state, env)));
    crate::notice!(
        "Failover auth granted to {name} for epoch {}",
        state.current_epoch
    );
}

/// A PUBLISH (or PUBLISHSHARD) of `message` on `channel`.
pub fn publish(
    state: &ClusterState,
    env: &Env,
    channel: &[u8],
    message: &[u8],
    shard: bool,
) -> Vec<u8> {
    let mtype = if shard {
        types::PUBLISHSHARD
    } else {
        types::PUBLISH
    };
    wire::encode(&Message {
        header: header(state, env, mtype),
        body: Body::Publish {
            channel: channel.to_vec(),
            message: message.to_vec(),
        },
    })
}

/// Flags `node` FAIL when enough masters reported it (markNodeAsFailingIfNeeded): a
/// majority of the masters serving slots, this one included when a master.
pub fn mark_failing_if_needed(
    state: &mut ClusterState,
    env: &Env,
    node: NodeId,
    actions: &mut Vec<Action>,
) {
    let quorum = state.size / 2 + 1;
    match state.nodes.get(&node) {
        Some(n) if n.has(flags::PFAIL) && !n.has(flags::FAIL) => {}
        _ => return,
    }
    let mut failures = state.failure_reports(node, env.config.node_timeout, env.now);
    if state.me().is_master() {
        failures += 1;
    }
    if failures < quorum {
        return;
    }
    crate::notice!(
        "Marking node {} as failing (quorum reached).",
        super::node::id_str(&node)
    );
    if let Some(n) = state.nodes.get_mut(&node) {
        n.flags = (n.flags & !flags::PFAIL) | flags::FAIL;
        n.fail_time = env.now;
    }
    actions.push(Action::Broadcast(fail(state, env, node)));
    state.todo_save = true;
}

/// Clears FAIL on a node that is reachable again (clearNodeFailureIfNeeded).
fn clear_failure_if_needed(state: &mut ClusterState, env: &Env, node: NodeId) {
    let Some(n) = state.nodes.get_mut(&node) else {
        return;
    };
    // A replica or a master without slots is cleared at once; a master serving slots
    // after twice the node timeout (no replica took its slots meanwhile).
    let serving = n.is_master() && n.slots.count() > 0;
    if !serving || env.now.saturating_sub(n.fail_time) > env.config.node_timeout * 2 {
        n.flags &= !flags::FAIL;
        state.todo_save = true;
    }
}

/// Takes the slots `sender` claims with `epoch` where its claim wins
/// (clusterUpdateSlotsConfigWith): unassigned slots, or slots whose owner has a smaller
/// config epoch; slots being imported are left alone.
fn update_slots_with(
    state: &mut ClusterState,
    env: &Env,
    sender: NodeId,
    epoch: u64,
    slots: &super::node::SlotBits,
    actions: &mut Vec<Action>,
) {
    let myself = state.myself;
    if sender == myself {
        crate::notice!("Discarding UPDATE message about myself.");
        return;
    }
    // The master whose slots this node serves: itself, or its master.
    let me = state.me();
    let cur_master = if me.is_master() {
        Some(myself)
    } else {
        me.replica_of
    };
    let (mut sender_slots, mut migrated_ours) = (0, 0);
    let mut dirty = Vec::new();
    for slot in 0..SLOTS {
        if !slots.get(slot) {
            continue;
        }
        sender_slots += 1;
        let owner = state.slots[slot];
        if owner == Some(sender) || state.importing.contains_key(&(slot as u16)) {
            continue;
        }
        let owner_epoch = owner
            .and_then(|o| state.nodes.get(&o))
            .map(|n| n.config_epoch);
        if owner.is_none() || owner_epoch.is_some_and(|e| e < epoch) || owner_epoch.is_none() {
            if owner == Some(myself) && sender != myself && (env.keys_in_slot)(slot as u16) > 0 {
                dirty.push(Action::DeleteKeysInSlot(slot as u16));
            }
            if owner == Some(myself) {
                state.migrating.remove(&(slot as u16));
            }
            if owner.is_some() && owner == cur_master {
                migrated_ours += 1;
            }
            state.add_slot(sender, slot as u16);
            state.todo_save = true;
        }
    }
    // This node's master (or this master) lost its last slot to the sender: follow it, as
    // Redis does after a failover or when resharding emptied a master.
    let emptied = cur_master
        .and_then(|m| state.nodes.get(&m))
        .is_some_and(|m| m.slots.count() == 0);
    let grand_master = state
        .me()
        .replica_of
        .and_then(|m| state.nodes.get(&m))
        .and_then(|m| m.replica_of.filter(|_| !m.is_master()));
    if migrated_ours > 0
        && emptied
        && (env.config.allow_replica_migration || sender_slots == migrated_ours)
    {
        crate::notice!(
            "Configuration change detected. Reconfiguring myself as a replica of {}",
            super::node::id_str(&sender)
        );
        super::failover::set_master(state, sender);
    } else if let Some(gm) = grand_master.filter(|gm| *gm != myself) {
        crate::notice!(
            "I'm a sub-replica! Reconfiguring myself as a replica of grandmaster {}",
            super::node::id_str(&gm)
        );
        super::failover::set_master(state, gm);
    } else {
        actions.append(&mut dirty);
    }
}

/// Gives this master a new epoch when `sender` (a master) has the same one and a greater
/// id (clusterHandleConfigEpochCollision).
fn handle_epoch_collision(state: &mut ClusterState, sender: NodeId, actions: &mut Vec<Action>) {
    let me = state.me();
    let Some(s) = state.nodes.get(&sender) else {
        return;
    };
    if s.config_epoch != me.config_epoch || !s.is_master() || !me.is_master() {
        return;
    }
    if sender <= state.myself {
        return;
    }
    state.current_epoch += 1;
    let e = state.current_epoch;
    state.me_mut().config_epoch = e;
    state.todo_save = true;
    actions.push(Action::SaveNow);
    crate::notice!(
        "WARNING: configEpoch collision with node {}. configEpoch set to {e}",
        super::node::id_str(&sender)
    );
}

/// Logs (verbose) that master `sender` reported `node` `what`, naming both by id and
/// human nodename as Redis does.
fn log_report(state: &ClusterState, sender: NodeId, node: NodeId, what: &str) {
    let name = |id: &NodeId| {
        let human = state
            .nodes
            .get(id)
            .map_or("", |n| n.human_nodename.as_str());
        format!("{} ({human})", super::node::id_str(id))
    };
    crate::log::log(
        crate::config::LogLevel::Verbose,
        &format!(
            "Node {} reported node {} {what}.",
            name(&sender),
            name(&node)
        ),
    );
}

/// Reads the gossip section (clusterProcessGossipSection): failure reports from masters,
/// pong times, new addresses of unreachable nodes, and nodes not yet known.
fn process_gossip(
    state: &mut ClusterState,
    env: &Env,
    sender: Option<NodeId>,
    gossip: &[Gossip],
    actions: &mut Vec<Action>,
) {
    let now_secs = env.now / 1000;
    let sender_is_master = sender
        .and_then(|s| state.nodes.get(&s))
        .is_some_and(|n| n.is_master());
    for g in gossip {
        if state.nodes.contains_key(&g.id) {
            if let Some(s) = sender.filter(|_| sender_is_master && g.id != state.myself) {
                if g.flags & (flags::FAIL | flags::PFAIL) != 0 {
                    if state.add_failure_report(g.id, s, env.now) {
                        log_report(state, s, g.id, "as not reachable");
                    }
                    mark_failing_if_needed(state, env, g.id, actions);
                } else if state.del_failure_report(g.id, s) {
                    log_report(state, s, g.id, "is back online");
                }
            }
            let node = state.nodes.get_mut(&g.id).expect("known");
            if g.flags & (flags::PFAIL | flags::FAIL) == 0
                && node.ping_sent == 0
                && node.fail_reports.is_empty()
            {
                let pong = g.pong_received as u64 * 1000;
                if pong <= env.now + 500 && pong > node.pong_received {
                    node.pong_received = pong;
                }
            }
            if node.has(flags::PFAIL | flags::FAIL)
                && g.flags & flags::NOADDR == 0
                && g.flags & (flags::PFAIL | flags::FAIL) == 0
                && (!node.ip.eq_ignore_ascii_case(&g.ip)
                    || node.port != g.port
                    || node.cport != g.cport)
            {
                node.ip = g.ip.clone();
                node.port = g.port;
                node.pport = g.pport;
                node.cport = g.cport;
                node.flags &= !flags::NOADDR;
                actions.push(Action::FreeLinkOf(g.id));
            }
        } else if sender.is_some()
            && g.flags & flags::NOADDR == 0
            && !state.blacklisted(&g.id, now_secs)
        {
            let mut n = Node::new(
                g.id,
                g.flags & !(flags::MYSELF | flags::HANDSHAKE | flags::MEET),
                env.now,
            );
            n.ip = g.ip.clone();
            n.port = g.port;
            n.pport = g.pport;
            n.cport = g.cport;
            state.nodes.insert(g.id, n);
            state.todo_save = true;
        }
    }
}

/// Applies the extensions of `sender`'s PING (clusterProcessPingExt).
fn process_exts(
    state: &mut ClusterState,
    env: &Env,
    sender: NodeId,
    exts: &[Ext],
    actions: &mut Vec<Action>,
) {
    // Redis 7.2 and Goblin send their shard id in every PING; Redis 7.0 never does (and
    // sets the extension flag only when it announces a hostname).
    let has_shard = exts.iter().any(|e| matches!(e, Ext::ShardId(_)));
    if let Some(n) = state.nodes.get_mut(&sender) {
        n.no_shard_ext = !has_shard;
    }
    let mut hostname = String::new();
    let mut human_nodename = String::new();
    for e in exts {
        match e {
            Ext::Hostname(h) => hostname = h.clone(),
            Ext::HumanNodename(h) => human_nodename = h.clone(),
            Ext::ForgottenNode(id, ttl) => {
                if *id != state.myself && state.nodes.contains_key(id) {
                    let until = env.now / 1000 + ttl;
                    state.del_node(*id);
                    state.blacklist.insert(*id, until);
                    actions.push(Action::FreeLinkOf(*id));
                    state.todo_save = true;
                }
            }
            Ext::ShardId(shard) => {
                if let Some(n) = state.nodes.get_mut(&sender) {
                    if n.shard_id != *shard {
                        n.shard_id = *shard;
                        state.todo_save = true;
                    }
                }
            }
            Ext::Unknown(_) => {}
        }
    }
    if let Some(n) = state.nodes.get_mut(&sender) {
        if n.hostname != hostname || n.human_nodename != human_nodename {
            n.hostname = hostname;
            n.human_nodename = human_nodename;
            state.todo_save = true;
        }
    }
}

/// Processes one message that arrived on `link`.
pub fn process(
    state: &mut ClusterState,
    env: &Env,
    link: &LinkView,
    msg: Message,
    linked: &dyn Fn(&NodeId) -> bool,
    mut random: impl FnMut() -> u64,
) -> Vec<Action> {
    let mut actions = Vec::new();
    let h = &msg.header;
    let mtype = h.mtype;
    if (mtype as usize) < types::COUNT {
        state.stats.received[mtype as usize] += 1;
    }
    if i64::from(mtype) == state.drop_filter {
        crate::log::log(
            crate::config::LogLevel::Warning,
            "Dropping packet that matches debug drop filter",
        );
        return actions;
    }
    let sender = state
        .nodes
        .get(&h.sender)
        .filter(|n| !n.has(flags::HANDSHAKE))
        .map(|n| n.id);
    if let Some(s) = sender {
        if link.inbound {
            actions.push(Action::BindInbound(s));
        }
        if h.current_epoch > state.current_epoch {
            state.current_epoch = h.current_epoch;
            state.todo_save = true;
        }
        let n = state.nodes.get_mut(&s).expect("known");
        if h.config_epoch > n.config_epoch {
            n.config_epoch = h.config_epoch;
            state.todo_save = true;
        }
        n.repl_offset = h.offset;
        n.data_received = env.now;
        // A replica in a manual failover learns the offset its paused master stopped at.
        let me = state.me();
        let my_master = !me.is_master() && me.replica_of == Some(s);
        let e = &mut state.failover;
        if e.mf_end != 0
            && my_master
            && h.mflags[0] & wire::FLAG0_PAUSED != 0
            && e.mf_master_offset.is_none()
        {
            e.mf_master_offset = Some(h.offset);
            crate::notice!(
                "Received replication offset for paused master manual failover: {}",
                h.offset
            );
        }
    }
    let is_ping = matches!(mtype, types::PING | types::PONG | types::MEET);
    if mtype == types::PING || mtype == types::MEET {
        // Our address as the peer sees it, when we do not announce one.
        if (mtype == types::MEET || state.me().ip.is_empty())
            && env.config.announce_ip.is_empty()
            && !link.local_ip.is_empty()
            && state.me().ip != link.local_ip
        {
            state.me_mut().ip = link.local_ip.clone();
            state.todo_save = true;
        }
        if sender.is_none() && mtype == types::MEET {
            let mut n = Node::new(
                super::node::random_id(&mut random),
                flags::HANDSHAKE,
                env.now,
            );
            n.ip = if h.myip.is_empty() {
                link.peer_ip.clone()
            } else {
                h.myip.clone()
            };
            n.port = h.port;
            n.pport = h.pport;
            n.cport = h.cport;
            state.nodes.insert(n.id, n);
            state.todo_save = true;
            if let Body::Ping { gossip, .. } = &msg.body {
                process_gossip(state, env, None, gossip, &mut actions);
            }
        }
        let to = sender;
        actions.push(Action::Reply(ping(
            state,
            env,
            types::PONG,
            to.as_ref(),
            linked,
            &mut random,
        )));
    }
    if is_ping {
        if let (false, Some(link_node)) = (link.inbound, link.node) {
            let in_handshake = state
                .nodes
                .get(&link_node)
                .is_some_and(|n| n.has(flags::HANDSHAKE));
            if in_handshake {
                if let Some(s) = sender {
                    // Already known under its real id: keep that one, maybe at a new address.
                    update_address(state, s, &link.peer_ip, h, &mut actions);
                    state.del_node(link_node);
                    actions.push(Action::FreeThisLink);
                    return actions;
                }
                state.rename(link_node, h.sender);
                actions.push(Action::Renamed(link_node, h.sender));
                let n = state.nodes.get_mut(&h.sender).expect("renamed");
                n.flags &= !flags::HANDSHAKE;
                n.flags |= h.flags & (flags::MASTER | flags::SLAVE);
                n.config_epoch = n.config_epoch.max(h.config_epoch);
                n.data_received = env.now;
                state.current_epoch = state.current_epoch.max(h.current_epoch);
                state.todo_save = true;
                return finish_ping(state, env, Some(h.sender), msg, actions, true);
            } else if link_node != h.sender {
                if let Some(n) = state.nodes.get_mut(&link_node) {
                    n.flags |= flags::NOADDR;
                    n.ip.clear();
                    n.port = 0;
                    n.cport = 0;
                }
                actions.push(Action::FreeThisLink);
                state.todo_save = true;
                return actions;
            }
        }
        // A PING tells where its sender is now (a node restarted on another address).
        if let (Some(s), types::PING) = (sender, mtype) {
            update_address(state, s, &link.peer_ip, &msg.header, &mut actions);
        }
        return finish_ping(state, env, sender, msg, actions, false);
    }
    if mtype == types::AUTH_REQUEST {
        if let Some(s) = sender {
            vote_if_needed(state, env, s, h, &mut actions);
        }
        return actions;
    }
    if mtype == types::AUTH_ACK {
        // A vote counts from a master serving slots, sent in the election's epoch or later.
        let voter = sender.and_then(|s| state.nodes.get(&s));
        if voter.is_some_and(|n| n.is_master() && n.slots.count() > 0)
            && h.current_epoch >= state.failover.auth_epoch
        {
            state.failover.auth_count += 1;
        }
        return actions;
    }
    if mtype == types::MFSTART {
        // Only a master's own replica may ask it to pause for a manual failover.
        let me = state.myself;
        let from_replica =
            sender.filter(|s| state.nodes[s].replica_of == Some(me) && state.me().is_master());
        if let Some(s) = from_replica {
            state.failover.start_manual_as_master(s, env.now);
            crate::notice!(
                "Manual failover requested by replica {}.",
                super::node::id_str(&s)
            );
            actions.push(Action::Reply(ping(
                state,
                env,
                types::PING,
                Some(&s),
                linked,
                &mut random,
            )));
        }
        return actions;
    }
    match msg.body {
        Body::Fail(id) if sender.is_some() => {
            if let Some(n) = state.nodes.get_mut(&id) {
                if !n.has(flags::FAIL | flags::MYSELF) {
                    crate::notice!(
                        "FAIL message received from {} about {}",
                        super::node::id_str(&h.sender),
                        super::node::id_str(&id)
                    );
                    n.flags = (n.flags | flags::FAIL) & !flags::PFAIL;
                    n.fail_time = env.now;
                    state.todo_save = true;
                }
            }
        }
        Body::Publish { channel, message } if sender.is_some() => {
            actions.push(Action::Publish {
                channel,
                message,
                shard: mtype == types::PUBLISHSHARD,
            });
        }
        Body::Update {
            config_epoch,
            id,
            slots,
        } if sender.is_some() => {
            let newer = state
                .nodes
                .get(&id)
                .is_some_and(|n| n.config_epoch < config_epoch);
            if newer {
                let n = state.nodes.get_mut(&id).expect("known");
                if !n.is_master() {
                    n.flags = (n.flags & !flags::SLAVE) | flags::MASTER;
                    n.replica_of = None;
                }
                n.config_epoch = config_epoch;
                update_slots_with(state, env, id, config_epoch, &slots, &mut actions);
                actions.push(Action::SaveNow);
            }
        }
        _ => {}
    }
    actions
}

/// Updates `node`'s address from a message's header and the link's peer address
/// (nodeUpdateAddressIfNeeded).
fn update_address(
    state: &mut ClusterState,
    node: NodeId,
    peer_ip: &str,
    h: &Header,
    actions: &mut Vec<Action>,
) {
    if node == state.myself {
        return;
    }
    let ip = if h.myip.is_empty() { peer_ip } else { &h.myip };
    let Some(n) = state.nodes.get_mut(&node) else {
        return;
    };
    if n.ip == ip && n.port == h.port && n.cport == h.cport && n.pport == h.pport {
        return;
    }
    n.ip = ip.to_string();
    n.port = h.port;
    n.cport = h.cport;
    n.pport = h.pport;
    n.flags &= !flags::NOADDR;
    actions.push(Action::FreeLinkOf(node));
    state.todo_save = true;
}

/// The rest of a PING, PONG or MEET from a known sender: pong bookkeeping, role, slots,
/// epoch collisions, gossip and extensions.
fn finish_ping(
    state: &mut ClusterState,
    env: &Env,
    sender: Option<NodeId>,
    msg: Message,
    mut actions: Vec<Action>,
    outbound_pong: bool,
) -> Vec<Action> {
    let h = &msg.header;
    let Some(s) = sender else {
        return actions;
    };
    {
        let n = state.nodes.get_mut(&s).expect("known");
        n.flags = (n.flags & !flags::NOFAILOVER) | (h.flags & flags::NOFAILOVER);
    }
    if h.mtype == types::PONG || outbound_pong {
        let timed_out;
        let failed;
        {
            let n = state.nodes.get_mut(&s).expect("known");
            n.pong_received = env.now;
            n.ping_sent = 0;
            timed_out = n.has(flags::PFAIL);
            failed = n.has(flags::FAIL);
            if timed_out {
                n.flags &= !flags::PFAIL;
            }
        }
        if failed && !timed_out {
            clear_failure_if_needed(state, env, s);
        }
    }
    // Role: master, or replica of the announced master.
    match h.slaveof {
        None => {
            let n = state.nodes.get_mut(&s).expect("known");
            if !n.is_master() {
                // A promoted replica: a master replicas may migrate to.
                if n.replica_of.is_some() {
                    n.flags |= flags::MIGRATE_TO;
                }
                n.flags = (n.flags & !flags::SLAVE) | flags::MASTER;
                n.replica_of = None;
                state.todo_save = true;
            }
        }
        Some(master) => {
            if state.nodes[&s].is_master() {
                state.del_node_slots(s);
                let n = state.nodes.get_mut(&s).expect("known");
                n.flags = (n.flags & !(flags::MASTER | flags::MIGRATE_TO)) | flags::SLAVE;
                state.todo_save = true;
            }
            if state.nodes.contains_key(&master) && state.nodes[&s].replica_of != Some(master) {
                state.nodes.get_mut(&s).expect("known").replica_of = Some(master);
                state.todo_save = true;
            }
        }
    }
    let sender_is_master = state.nodes[&s].is_master();
    let served_by = if sender_is_master {
        Some(s)
    } else {
        state.nodes[&s].replica_of
    };
    let dirty = served_by
        .and_then(|m| state.nodes.get(&m))
        .is_some_and(|m| m.slots != h.myslots);
    if sender_is_master && dirty {
        update_slots_with(state, env, s, h.config_epoch, &h.myslots, &mut actions);
    }
    if dirty {
        for slot in 0..SLOTS {
            if !h.myslots.get(slot) {
                continue;
            }
            match state.slots[slot].and_then(|o| state.nodes.get(&o)) {
                Some(owner) if owner.id != s && owner.config_epoch > h.config_epoch => {
                    actions.push(Action::SendTo(s, update(state, env, owner)));
                    break;
                }
                _ => {}
            }
        }
    }
    if sender_is_master && state.me().is_master() && h.config_epoch == state.me().config_epoch {
        handle_epoch_collision(state, s, &mut actions);
    }
    if let Body::Ping { gossip, exts } = &msg.body {
        process_gossip(state, env, Some(s), gossip, &mut actions);
        process_exts(state, env, s, exts, &mut actions);
    }
    actions
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 11
        }
    }

    fn view(inbound: bool, node: Option<NodeId>) -> LinkView {
        LinkView {
            inbound,
            node,
            peer_ip: "127.0.0.1".into(),
            local_ip: "127.0.0.1".into(),
        }
    }

    /// Two states meet, handshake, and learn each other's slots: the exchange of a MEET,
    /// a PONG and a PING as the bus would carry them.
    #[test]
    fn meet_handshake_and_slot_propagation() {
        let env = Env::at(1_000_000);
        let mut a = ClusterState::new(rng(1), 0);
        let mut b = ClusterState::new(rng(2), 0);
        a.me_mut().port = 7000;
        a.me_mut().cport = 17000;
        b.me_mut().port = 7001;
        b.me_mut().cport = 17001;
        for s in 0..100 {
            b.add_slot(b.myself, s);
        }
        b.me_mut().config_epoch = 2;
        // A meets B: a handshake node with a random id.
        assert!(a.start_handshake("127.0.0.1", 7001, 17001, rng(3), 0));
        let hs = *a.nodes.keys().find(|id| **id != a.myself).unwrap();
        let meet = ping(&a, &env, types::MEET, None, &|_| true, rng(4));
        // B gets the MEET on an inbound link, adds A in handshake and answers PONG.
        let actions = process(
            &mut b,
            &env,
            &view(true, None),
            wire::decode(&meet).unwrap(),
            &|_| false,
            rng(5),
        );
        let Some(Action::Reply(pong)) = actions.into_iter().find(|a| matches!(a, Action::Reply(_)))
        else {
            panic!("no PONG");
        };
        assert_eq!(b.nodes.len(), 2);
        // A gets the PONG on its outbound link: the handshake node takes B's real id,
        // and B's slots.
        process(
            &mut a,
            &env,
            &view(false, Some(hs)),
            wire::decode(&pong).unwrap(),
            &|_| true,
            rng(6),
        );
        assert!(a.nodes.contains_key(&b.myself));
        assert!(!a.nodes[&b.myself].has(flags::HANDSHAKE));
        assert_eq!(a.slots[50], Some(b.myself));
        assert_eq!(a.nodes[&b.myself].config_epoch, 2);
        assert_eq!(a.current_epoch, 0);
    }

    #[test]
    fn epoch_collision_moves_the_smaller_id() {
        let env = Env::at(5);
        let mut a = ClusterState::new(rng(1), 0);
        let mut b = ClusterState::new(rng(2), 0);
        let (ia, ib) = (a.myself, b.myself);
        let (small, big) = if ia < ib {
            (&mut a, &mut b)
        } else {
            (&mut b, &mut a)
        };
        let big_id = big.myself;
        let mut other = Node::new(big_id, flags::MASTER, 0);
        other.config_epoch = 1;
        small.nodes.insert(big_id, other);
        small.me_mut().config_epoch = 1;
        big.me_mut().config_epoch = 1;
        small.current_epoch = 1;
        big.current_epoch = 1;
        let msg = ping(big, &env, types::PING, None, &|_| true, rng(9));
        process(
            small,
            &env,
            &view(true, None),
            wire::decode(&msg).unwrap(),
            &|_| true,
            rng(7),
        );
        assert_eq!(small.me().config_epoch, 2);
    }

    /// An UPDATE with a newer epoch moves the slots it names to their new owner; one about
    /// this node is discarded.
    #[test]
    fn update_moves_slots_unless_about_myself() {
        let env = Env::at(5);
        let mut a = ClusterState::new(rng(1), 0);
        let me = a.myself;
        let (b, c) = ([b'b'; 40], [b'c'; 40]);
        for id in [b, c] {
            a.nodes.insert(id, Node::new(id, flags::MASTER, 0));
        }
        a.nodes.get_mut(&b).unwrap().config_epoch = 1;
        for s in 0..10 {
            a.add_slot(b, s);
        }
        a.add_slot(me, 10);
        let mut sender = ClusterState::new(rng(3), 0);
        sender.myself = b;
        sender
            .nodes
            .insert(b, Node::new(b, flags::MASTER | flags::MYSELF, 0));
        let mut moved = Node::new(c, flags::MASTER, 0);
        moved.config_epoch = 4;
        for s in 5..11 {
            moved.slots.set(s, true);
        }
        let bytes = update(&sender, &env, &moved);
        process(
            &mut a,
            &env,
            &view(true, None),
            wire::decode(&bytes).unwrap(),
            &|_| true,
            rng(4),
        );
        assert_eq!(a.slots[4], Some(b));
        assert_eq!(a.slots[5], Some(c));
        // Slot 10 was this node's, with epoch 0 < 4: it moves too.
        assert_eq!(a.slots[10], Some(c));
        assert_eq!(a.nodes[&c].config_epoch, 4);
        let mut about_me = Node::new(me, flags::MASTER, 0);
        about_me.config_epoch = 9;
        about_me.slots.set(0, true);
        let bytes = update(&sender, &env, &about_me);
        process(
            &mut a,
            &env,
            &view(true, None),
            wire::decode(&bytes).unwrap(),
            &|_| true,
            rng(5),
        );
        assert_eq!(a.slots[0], Some(b));
    }
}
