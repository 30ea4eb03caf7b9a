//! CLUSTER's subcommands, ASKING, READONLY and READWRITE, with Redis 7.2's replies and
//! error texts. Outside cluster mode every one answers "This instance has cluster support
//! disabled".

use super::cluster_route::preferred_endpoint;
use super::Ctx;
use crate::cluster::node::{flags, id_str, parse_id, Node, NodeId};
use crate::cluster::slot::{key_slot, SLOTS};
use crate::cluster::Cluster;
use crate::cluster::{failover, nodes_conf};
use crate::keyspace::Free;
use std::fmt::Write as _;

const DISABLED: &str = "ERR This instance has cluster support disabled";

/// The cluster, or the "disabled" error replied.
fn cluster<'c>(ctx: &'c mut Ctx) -> Option<&'c mut Cluster> {
    if ctx.server.cluster.is_none() {
        ctx.error(DISABLED);
        return None;
    }
    ctx.server.cluster.as_deref_mut()
}

/// After a change of the configuration: the state recomputed and nodes.conf written.
fn changed(ctx: &mut Ctx) {
    let config = ctx.server.config.cluster.clone();
    let now = ctx.now_ms;
    if let Some(c) = ctx.server.cluster.as_deref_mut() {
        c.state
            .update_state(config.require_full_coverage, config.node_timeout, now);
        c.save_or_log();
    }
}

/// A slot argument (getSlotOrReply).
fn slot_arg(ctx: &mut Ctx, arg: &[u8]) -> Option<u16> {
    match crate::numbers::parse_i64(arg) {
        Some(s) if (0..SLOTS as i64).contains(&s) => Some(s as u16),
        _ => {
            ctx.error("ERR Invalid or out of range slot");
            None
        }
    }
}

fn lookup(c: &Cluster, arg: &[u8]) -> Option<NodeId> {
    parse_id(arg).filter(|id| c.state.nodes.contains_key(id))
}

fn text(arg: &[u8]) -> String {
    String::from_utf8_lossy(arg).into_owned()
}

/// CLUSTER INFO
pub fn info(ctx: &mut Ctx, _: &[&[u8]]) {
    let Some(c) = cluster(ctx) else { return };
    let s = &c.state;
    let (mut assigned, mut ok, mut pfail, mut fail) = (0, 0, 0, 0);
    // Each slot's owner has it in its bitmap: count by node, not by slot.
    for n in s.nodes.values() {
        let owned = n.slots.count();
        assigned += owned;
        if n.has(flags::FAIL) {
            fail += owned;
        } else if n.has(flags::PFAIL) {
            pfail += owned;
        } else {
            ok += owned;
        }
    }
    let mut out = String::new();
    let _ = write!(
        out,
        "cluster_state:{}\r\ncluster_slots_assigned:{assigned}\r\ncluster_slots_ok:{ok}\r\ncluster_slots_pfail:{pfail}\r\ncluster_slots_fail:{fail}\r\ncluster_known_nodes:{}\r\ncluster_size:{}\r\ncluster_current_epoch:{}\r\ncluster_my_epoch:{}\r\n",
        if s.ok { "ok" } else { "fail" },
        s.nodes.len(),
        s.size,
        s.current_epoch,
        nodes_conf::epoch_of(s, s.me()),
    );
    let names = crate::cluster::state::MESSAGE_NAMES;
    for (dir, counts) in [("sent", &s.stats.sent), ("received", &s.stats.received)] {
        for (i, n) in counts.iter().enumerate() {
            if *n > 0 {
                let _ = write!(out, "cluster_stats_messages_{}_{dir}:{n}\r\n", names[i]);
            }
        }
        let total: u64 = counts.iter().sum();
        let _ = write!(out, "cluster_stats_messages_{dir}:{total}\r\n");
    }
    let _ = write!(
        out,
        "total_cluster_links_buffer_limit_exceeded:{}\r\n",
        c.bus.limit_exceeded
    );
    ctx.out.verbatim(out.as_bytes());
}

/// CLUSTER MYID
pub fn myid(ctx: &mut Ctx, _: &[&[u8]]) {
    let Some(c) = cluster(ctx) else { return };
    let id = c.state.myself;
    ctx.out.bulk(&id);
}

/// CLUSTER MYSHARDID
pub fn myshardid(ctx: &mut Ctx, _: &[&[u8]]) {
    let Some(c) = cluster(ctx) else { return };
    let id = c.state.me().shard_id;
    ctx.out.bulk(&id);
}

/// CLUSTER NODES
pub fn nodes(ctx: &mut Ctx, _: &[&[u8]]) {
    let Some(c) = cluster(ctx) else { return };
    let text = nodes_conf::nodes_text(&c.state, &|id| c.connected(id), false);
    ctx.out.verbatim(text.as_bytes());
}

/// CLUSTER REPLICAS / SLAVES node-id
pub fn replicas(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(c) = cluster(ctx) else { return };
    let Some(id) = lookup(c, args[2]) else {
        return ctx.error(&format!("ERR Unknown node {}", text(args[2])));
    };
    if !c.state.nodes[&id].is_master() {
        return ctx.error("ERR The specified node is not a master");
    }
    let lines: Vec<String> = c
        .state
        .replicas_of(&id)
        .into_iter()
        .map(|r| nodes_conf::node_line(&c.state, r, c.connected(&r.id), false))
        .collect();
    ctx.out.array(lines.len());
    for l in lines {
        ctx.out.bulk(l.as_bytes());
    }
}

/// One node of a CLUSTER SLOTS range: endpoint, port, id, and the other addresses.
fn slots_node(ctx: &mut Ctx, endpoint_kind: &str, n: &Node) {
    ctx.out.array(4);
    if endpoint_kind == "unknown-endpoint" {
        ctx.out.null();
    } else {
        ctx.out
            .bulk(preferred_endpoint(endpoint_kind, n).as_bytes());
    }
    ctx.out.int(n.port as i64);
    ctx.out.bulk(&n.id);
    let with_ip = endpoint_kind != "ip";
    let with_host = endpoint_kind != "hostname" && !n.hostname.is_empty();
    ctx.out.map(with_ip as usize + with_host as usize);
    if with_ip {
        ctx.out.bulk(b"ip");
        ctx.out.bulk(n.ip.as_bytes());
    }
    if with_host {
        ctx.out.bulk(b"hostname");
        ctx.out.bulk(n.hostname.as_bytes());
    }
}

/// CLUSTER SLOTS
pub fn slots(ctx: &mut Ctx, _: &[&[u8]]) {
    let Some(c) = ctx.server.cluster.as_deref() else {
        return ctx.error(DISABLED);
    };
    let kind = ctx.server.config.cluster.preferred_endpoint.clone();
    let mut ranges: Vec<(u16, u16, Node, Vec<Node>)> = Vec::new();
    let mut start = 0usize;
    for j in 0..=SLOTS {
        let here = if j < SLOTS { c.state.slots[j] } else { None };
        let prev = if j > 0 { c.state.slots[j - 1] } else { None };
        if j > 0 && (here != prev) {
            if let Some(owner) = prev.and_then(|o| c.state.nodes.get(&o)) {
                let replicas = c
                    .state
                    .replicas_of(&owner.id)
                    .into_iter()
                    .filter(|r| !r.has(flags::FAIL))
                    .cloned()
                    .collect();
                ranges.push((start as u16, (j - 1) as u16, owner.clone(), replicas));
            }
        }
        if j == 0 || here != prev {
            start = j;
        }
    }
    ctx.out.array(ranges.len());
    for (start, end, owner, replicas) in ranges {
        ctx.out.array(3 + replicas.len());
        ctx.out.int(start as i64);
        ctx.out.int(end as i64);
        slots_node(ctx, &kind, &owner);
        for r in &replicas {
            slots_node(ctx, &kind, r);
        }
    }
}

/// CLUSTER SHARDS
pub fn shards(ctx: &mut Ctx, _: &[&[u8]]) {
    let Some(c) = ctx.server.cluster.as_deref() else {
        return ctx.error(DISABLED);
    };
    let kind = ctx.server.config.cluster.preferred_endpoint.clone();
    let masters: Vec<Node> = c.state.masters().into_iter().cloned().collect();
    let mut shards = Vec::new();
    for m in masters {
        let mut members = vec![m.clone()];
        members.extend(c.state.replicas_of(&m.id).into_iter().cloned());
        shards.push((m.slots.ranges(), members));
    }
    let myself = c.state.myself;
    let my_offset = failover::my_offset(ctx.server);
    ctx.out.array(shards.len());
    for (ranges, members) in shards {
        ctx.out.map(2);
        ctx.out.bulk(b"slots");
        ctx.out.array(ranges.len() * 2);
        for (s, e) in ranges {
            ctx.out.int(s as i64);
            ctx.out.int(e as i64);
        }
        ctx.out.bulk(b"nodes");
        ctx.out.array(members.len());
        for n in members {
            let host = !n.hostname.is_empty();
            ctx.out.map(7 + host as usize);
            ctx.out.bulk(b"id");
            ctx.out.bulk(&n.id);
            ctx.out.bulk(b"port");
            ctx.out.int(n.port as i64);
            ctx.out.bulk(b"ip");
            ctx.out.bulk(n.ip.as_bytes());
            ctx.out.bulk(b"endpoint");
            ctx.out.bulk(preferred_endpoint(&kind, &n).as_bytes());
            if host {
                ctx.out.bulk(b"hostname");
                ctx.out.bulk(n.hostname.as_bytes());
            }
            ctx.out.bulk(b"role");
            ctx.out.bulk(if n.is_master() {
                b"master" as &[u8]
            } else {
                b"replica"
            });
            ctx.out.bulk(b"replication-offset");
            let offset = if n.id == myself {
                my_offset
            } else {
                n.repl_offset
            };
            ctx.out.int(offset as i64);
            ctx.out.bulk(b"health");
            ctx.out.bulk(if n.has(flags::FAIL) {
                b"fail" as &[u8]
            } else if !n.is_master() && offset == 0 {
                b"loading"
            } else {
                b"online"
            });
        }
    }
}

/// CLUSTER KEYSLOT key
pub fn keyslot(ctx: &mut Ctx, args: &[&[u8]]) {
    if cluster(ctx).is_none() {
        return;
    }
    ctx.out.int(key_slot(args[2]) as i64);
}

/// CLUSTER COUNTKEYSINSLOT slot
pub fn countkeysinslot(ctx: &mut Ctx, args: &[&[u8]]) {
    if cluster(ctx).is_none() {
        return;
    }
    let Some(slot) = ctx.int_arg(args[2]) else {
        return;
    };
    if !(0..SLOTS as i64).contains(&slot) {
        return ctx.error("ERR Invalid slot");
    }
    let n = ctx
        .server
        .keyspace
        .db(0)
        .count_in_slot(slot as u16)
        .unwrap_or(0);
    ctx.out.int(n as i64);
}

/// CLUSTER GETKEYSINSLOT slot count
pub fn getkeysinslot(ctx: &mut Ctx, args: &[&[u8]]) {
    if cluster(ctx).is_none() {
        return;
    }
    let Some(slot) = ctx.int_arg(args[2]) else {
        return;
    };
    let Some(count) = ctx.int_arg(args[3]) else {
        return;
    };
    if !(0..SLOTS as i64).contains(&slot) || count < 0 {
        return ctx.error("ERR Invalid slot or number of keys");
    }
    let keys: Vec<Vec<u8>> = ctx
        .server
        .keyspace
        .db(0)
        .keys_in_slot(slot as u16, count as usize)
        .into_iter()
        .map(|k| k.to_vec())
        .collect();
    ctx.out.array(keys.len());
    for k in keys {
        ctx.out.bulk(&k);
    }
}

/// Parses "ip" into the form Redis keeps (inet_pton then inet_ntop).
fn normal_ip(text: &str) -> Option<String> {
    text.parse::<std::net::IpAddr>()
        .ok()
        .map(|ip| ip.to_string())
}

/// CLUSTER MEET ip port [bus-port]
pub fn meet(ctx: &mut Ctx, args: &[&[u8]]) {
    if cluster(ctx).is_none() {
        return;
    }
    if args.len() > 5 {
        return ctx.error(&crate::errors::wrong_arity("cluster|meet"));
    }
    let Some(port) = crate::numbers::parse_i64(args[3]) else {
        return ctx.error(&format!(
            "ERR Invalid TCP base port specified: {}",
            text(args[3])
        ));
    };
    let cport = match args.get(4) {
        Some(a) => match crate::numbers::parse_i64(a) {
            Some(p) => p,
            None => return ctx.error(&format!("ERR Invalid TCP bus port specified: {}", text(a))),
        },
        None => port + 10000,
    };
    let ip = normal_ip(&text(args[2]));
    let ports_ok = (1..=65535).contains(&port) && (1..=65535).contains(&cport);
    let (Some(ip), true) = (ip, ports_ok) else {
        return ctx.error(&format!(
            "ERR Invalid node address specified: {}:{}",
            text(args[2]),
            text(args[3])
        ));
    };
    let mut seed = ctx.server.keyspace.random();
    let now = ctx.now_ms;
    let c = ctx.server.cluster.as_deref_mut().expect("cluster mode");
    c.state.start_handshake(
        &ip,
        port as u16,
        cport as u16,
        || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 7
        },
        now,
    );
    ctx.out.ok();
}

/// Slots from ADDSLOTS/DELSLOTS arguments, or their ...RANGE pairs.
fn slot_list(ctx: &mut Ctx, args: &[&[u8]], ranges: bool) -> Option<Vec<u16>> {
    let mut slots = Vec::new();
    if ranges {
        if args.len() % 2 == 1 {
            let name = String::from_utf8_lossy(args[1]).to_ascii_lowercase();
            ctx.error(&crate::errors::wrong_arity(&format!("cluster|{name}")));
            return None;
        }
        for pair in args[2..].chunks(2) {
            let start = slot_arg(ctx, pair[0])?;
            let end = slot_arg(ctx, pair[1])?;
            if start > end {
                ctx.error(&format!(
                    "ERR start slot number {start} is greater than end slot number {end}"
                ));
                return None;
            }
            slots.extend(start..=end);
        }
    } else {
        for a in &args[2..] {
            slots.push(slot_arg(ctx, a)?);
        }
    }
    Some(slots)
}

fn add_or_del_slots(ctx: &mut Ctx, args: &[&[u8]], add: bool, ranges: bool) {
    if cluster(ctx).is_none() {
        return;
    }
    let Some(slots) = slot_list(ctx, args, ranges) else {
        return;
    };
    let c = ctx.server.cluster.as_deref().expect("cluster mode");
    let mut seen = vec![false; SLOTS];
    for &s in &slots {
        let owned = c.state.slots[s as usize].is_some();
        if add && owned {
            return ctx.error(&format!("ERR Slot {s} is already busy"));
        }
        if !add && !owned {
            return ctx.error(&format!("ERR Slot {s} is already unassigned"));
        }
        if seen[s as usize] {
            return ctx.error(&format!("ERR Slot {s} specified multiple times"));
        }
        seen[s as usize] = true;
    }
    let c = ctx.server.cluster.as_deref_mut().expect("cluster mode");
    let me = c.state.myself;
    for s in slots {
        if add {
            c.state.importing.remove(&s);
            c.state.add_slot(me, s);
        } else {
            c.state.del_slot(s);
            c.state.importing.remove(&s);
            c.state.migrating.remove(&s);
        }
    }
    changed(ctx);
    ctx.out.ok();
}

/// CLUSTER ADDSLOTS slot...
pub fn addslots(ctx: &mut Ctx, args: &[&[u8]]) {
    add_or_del_slots(ctx, args, true, false)
}

/// CLUSTER ADDSLOTSRANGE start end...
pub fn addslotsrange(ctx: &mut Ctx, args: &[&[u8]]) {
    add_or_del_slots(ctx, args, true, true)
}

/// CLUSTER DELSLOTS slot...
pub fn delslots(ctx: &mut Ctx, args: &[&[u8]]) {
    add_or_del_slots(ctx, args, false, false)
}

/// CLUSTER DELSLOTSRANGE start end...
pub fn delslotsrange(ctx: &mut Ctx, args: &[&[u8]]) {
    add_or_del_slots(ctx, args, false, true)
}

/// CLUSTER FLUSHSLOTS
pub fn flushslots(ctx: &mut Ctx, _: &[&[u8]]) {
    if cluster(ctx).is_none() {
        return;
    }
    if !ctx.server.keyspace.db(0).is_empty() {
        return ctx.error("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
    }
    let c = ctx.server.cluster.as_deref_mut().expect("cluster mode");
    let me = c.state.myself;
    c.state.del_node_slots(me);
    changed(ctx);
    ctx.out.ok();
}

/// CLUSTER SETSLOT slot IMPORTING|MIGRATING|NODE node-id | STABLE
pub fn setslot(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(c) = cluster(ctx) else { return };
    if !c.state.me().is_master() {
        return ctx.error("ERR Please use SETSLOT only with masters.");
    }
    let Some(slot) = slot_arg(ctx, args[2]) else {
        return;
    };
    let action = String::from_utf8_lossy(args[3]).to_ascii_lowercase();
    let keys = ctx.server.keyspace.db(0).count_in_slot(slot).unwrap_or(0);
    let c = ctx.server.cluster.as_deref_mut().expect("cluster mode");
    let me = c.state.myself;
    let owner = c.state.slots[slot as usize];
    let target = args.get(4).map(|a| (lookup(c, a), text(a)));
    match (action.as_str(), args.len(), target) {
        ("migrating", 5, Some((n, name))) => {
            if owner != Some(me) {
                return ctx.error(&format!("ERR I'm not the owner of hash slot {slot}"));
            }
            let Some(n) = n else {
                return ctx.error(&format!("ERR I don't know about node {name}"));
            };
            if !c.state.nodes[&n].is_master() {
                return ctx.error("ERR Target node is not a master");
            }
            c.state.migrating.insert(slot, n);
        }
        ("importing", 5, Some((n, name))) => {
            if owner == Some(me) {
                return ctx.error(&format!("ERR I'm already the owner of hash slot {slot}"));
            }
            let Some(n) = n else {
                return ctx.error(&format!("ERR I don't know about node {name}"));
            };
            if !c.state.nodes[&n].is_master() {
                return ctx.error("ERR Target node is not a master");
            }
            c.state.importing.insert(slot, n);
        }
        ("stable", 4, _) => {
            c.state.importing.remove(&slot);
            c.state.migrating.remove(&slot);
        }
        ("node", 5, Some((n, name))) => {
            let Some(n) = n else {
                return ctx.error(&format!("ERR Unknown node {name}"));
            };
            if !c.state.nodes[&n].is_master() {
                return ctx.error("ERR Target node is not a master");
            }
            if owner == Some(me) && n != me && keys != 0 {
                return ctx.error(&format!("ERR Can't assign hashslot {slot} to a different node while I still hold keys for this hash slot."));
            }
            if keys == 0 {
                c.state.migrating.remove(&slot);
            }
            c.state.add_slot(n, slot);
            if n == me && c.state.importing.remove(&slot).is_some() && c.state.bump_epoch() {
                crate::warning!("configEpoch updated after importing slot {slot}");
            }
            // A master left without slots replicates the node that got its last one.
            let allow = ctx.server.config.cluster.allow_replica_migration;
            if owner == Some(me) && n != me && c.state.me().slots.count() == 0 && allow {
                crate::notice!(
                    "Configuration change detected. Reconfiguring myself as a replica of {}",
                    id_str(&n)
                );
                let mut c = ctx.server.cluster.take().expect("cluster mode");
                failover::set_master(&mut c.state, n);
                failover::follow_master(ctx.server, &c.state);
                ctx.server.cluster = Some(c);
            }
        }
        _ => {
            return ctx.error(
                "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP",
            )
        }
    }
    changed(ctx);
    ctx.out.ok();
}

/// CLUSTER FORGET node-id
pub fn forget(ctx: &mut Ctx, args: &[&[u8]]) {
    let now_secs = ctx.now_ms / 1000;
    let Some(c) = cluster(ctx) else { return };
    let Some(n) = lookup(c, args[2]) else {
        let listed = parse_id(args[2]).is_some_and(|id| c.state.blacklisted(&id, now_secs));
        if listed {
            return ctx.out.ok();
        }
        return ctx.error(&format!("ERR Unknown node {}", text(args[2])));
    };
    if n == c.state.myself {
        return ctx.error("ERR I tried hard but I can't forget myself...");
    }
    let me = c.state.me();
    if !me.is_master() && me.replica_of == Some(n) {
        return ctx.error("ERR Can't forget my master!");
    }
    c.state.blacklist_add(n, now_secs);
    c.state.del_node(n);
    if let Some(key) = c.bus.outbound.get(&n).copied() {
        // The cron closes links of unknown nodes.
        if let Some(l) = c.bus.links.get_mut(key) {
            l.node = None;
        }
        c.bus.outbound.remove(&n);
    }
    changed(ctx);
    ctx.out.ok();
}

/// CLUSTER REPLICATE node-id: this node becomes a replica of the master (clusterSetMaster),
/// and replicates its data from now on.
pub fn replicate(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(c) = cluster(ctx) else { return };
    let Some(n) = lookup(c, args[2]) else {
        return ctx.error(&format!("ERR Unknown node {}", text(args[2])));
    };
    if n == c.state.myself {
        return ctx.error("ERR Can't replicate myself");
    }
    if !c.state.nodes[&n].is_master() {
        return ctx.error("ERR I can only replicate a master, not a replica.");
    }
    let me = c.state.me();
    let has_slots = me.slots.count() > 0;
    let is_master = me.is_master();
    if is_master && (has_slots || !ctx.server.keyspace.db(0).is_empty()) {
        return ctx.error("ERR To set a master the node must be empty and without assigned slots.");
    }
    let mut c = ctx.server.cluster.take().expect("cluster mode");
    failover::set_master(&mut c.state, n);
    failover::follow_master(ctx.server, &c.state);
    ctx.server.cluster = Some(c);
    changed(ctx);
    ctx.out.ok();
}

/// CLUSTER FAILOVER [FORCE|TAKEOVER]: this replica replaces its master; after the master
/// paused at an offset this replica reached (MFSTART), without it (FORCE), or without the
/// other masters' votes (TAKEOVER).
pub fn failover(ctx: &mut Ctx, args: &[&[u8]]) {
    let (mut force, mut takeover) = (false, false);
    match args.get(2) {
        _ if args.len() > 3 => {
            return ctx.error(&crate::errors::subcommand_syntax(&text(args[1]), "CLUSTER"))
        }
        None => {}
        Some(a) if a.eq_ignore_ascii_case(b"force") => force = true,
        Some(a) if a.eq_ignore_ascii_case(b"takeover") => (force, takeover) = (true, true),
        Some(_) => return ctx.error("ERR syntax error"),
    }
    let now = ctx.now_ms;
    let Some(c) = cluster(ctx) else { return };
    let me = c.state.me();
    if me.is_master() {
        return ctx.error("ERR You should send CLUSTER FAILOVER to a replica");
    }
    let Some(master) = me.replica_of.filter(|m| c.state.nodes.contains_key(m)) else {
        return ctx.error("ERR I'm a replica but my master is unknown to me");
    };
    if !force && (c.state.nodes[&master].has(flags::FAIL) || !c.connected(&master)) {
        return ctx.error("ERR Master is down or failed, please use CLUSTER FAILOVER FORCE");
    }
    c.state.failover.reset_manual();
    c.state.failover.mf_end = now + failover::MF_TIMEOUT;
    if takeover {
        crate::notice!("Taking over the master (user request).");
        if c.state.bump_epoch() {
            crate::notice!("New configEpoch set to {}", c.state.me().config_epoch);
        }
        let mut c = ctx.server.cluster.take().expect("cluster mode");
        failover::replace_my_master(ctx.server, &mut c, now);
        ctx.server.cluster = Some(c);
    } else if force {
        crate::notice!("Forced failover user request accepted.");
        c.state.failover.mf_can_start = true;
    } else {
        crate::notice!("Manual failover user request accepted.");
        c.state.failover.todo_mfstart = true;
    }
    ctx.out.ok();
}

/// CLUSTER COUNT-FAILURE-REPORTS node-id
pub fn count_failure_reports(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(c) = cluster(ctx) else { return };
    let Some(n) = lookup(c, args[2]) else {
        return ctx.error(&format!("ERR Unknown node {}", text(args[2])));
    };
    let timeout = ctx.server.config.cluster.node_timeout;
    let now = ctx.now_ms;
    let c = ctx.server.cluster.as_deref_mut().expect("cluster mode");
    let count = c.state.failure_reports(n, timeout, now);
    ctx.out.int(count as i64);
}

/// CLUSTER LINKS
pub fn links(ctx: &mut Ctx, _: &[&[u8]]) {
    let Some(c) = cluster(ctx) else { return };
    let links = crate::cluster::bus::links(c);
    ctx.out.array(links.len());
    for (dir, node, ctime, events, alloc, used) in links {
        ctx.out.map(6);
        ctx.out.bulk(b"direction");
        ctx.out.bulk(dir.as_bytes());
        ctx.out.bulk(b"node");
        ctx.out.bulk(&node);
        ctx.out.bulk(b"create-time");
        ctx.out.int(ctime as i64);
        ctx.out.bulk(b"events");
        ctx.out.bulk(events.as_bytes());
        ctx.out.bulk(b"send-buffer-allocated");
        ctx.out.int(alloc as i64);
        ctx.out.bulk(b"send-buffer-used");
        ctx.out.int(used as i64);
    }
}

/// CLUSTER BUMPEPOCH
pub fn bumpepoch(ctx: &mut Ctx, _: &[&[u8]]) {
    let Some(c) = cluster(ctx) else { return };
    let bumped = c.state.bump_epoch();
    let epoch = c.state.me().config_epoch;
    changed(ctx);
    ctx.out.simple(&format!(
        "{} {epoch}",
        if bumped { "BUMPED" } else { "STILL" }
    ));
}

/// CLUSTER SET-CONFIG-EPOCH epoch
pub fn set_config_epoch(ctx: &mut Ctx, args: &[&[u8]]) {
    if cluster(ctx).is_none() {
        return;
    }
    let Some(epoch) = ctx.int_arg(args[2]) else {
        return;
    };
    let c = ctx.server.cluster.as_deref_mut().expect("cluster mode");
    if epoch < 0 {
        return ctx.error(&format!("ERR Invalid config epoch specified: {epoch}"));
    }
    if c.state.nodes.len() > 1 {
        return ctx.error("ERR The user can assign a config epoch only when the node does not know any other node.");
    }
    if c.state.me().config_epoch != 0 {
        return ctx.error("ERR Node config epoch is already non-zero");
    }
    c.state.me_mut().config_epoch = epoch as u64;
    crate::notice!("configEpoch set to {epoch} via CLUSTER SET-CONFIG-EPOCH");
    c.state.current_epoch = c.state.current_epoch.max(epoch as u64);
    changed(ctx);
    ctx.out.ok();
}

/// CLUSTER RESET [HARD|SOFT]
pub fn reset(ctx: &mut Ctx, args: &[&[u8]]) {
    if cluster(ctx).is_none() {
        return;
    }
    let hard = match args.get(2) {
        None => false,
        Some(a) if a.eq_ignore_ascii_case(b"hard") => true,
        Some(a) if a.eq_ignore_ascii_case(b"soft") => false,
        Some(_) => return ctx.syntax_error(),
    };
    let c = ctx.server.cluster.as_deref().expect("cluster mode");
    let master = c.state.me().is_master();
    if master && !ctx.server.keyspace.db(ctx.client.db).is_empty() {
        return ctx.error("ERR CLUSTER RESET can't be called with master nodes containing keys");
    }
    if !master {
        // As Redis's clusterReset empties the data without EMPTYDB_ASYNC.
        ctx.server.keyspace.flush_all(Free::Now);
    }
    let mut seed = ctx.server.keyspace.random();
    let c = ctx.server.cluster.as_deref_mut().expect("cluster mode");
    let s = &mut c.state;
    s.importing.clear();
    s.migrating.clear();
    let me = s.myself;
    s.del_node_slots(me);
    let others: Vec<NodeId> = s.nodes.keys().copied().filter(|id| *id != me).collect();
    for id in others {
        s.del_node(id);
    }
    let mn = s.me_mut();
    mn.flags = (mn.flags & !flags::SLAVE) | flags::MASTER;
    mn.replica_of = None;
    if hard {
        s.current_epoch = 0;
        s.last_vote_epoch = 0;
        s.me_mut().config_epoch = 0;
        let new = crate::cluster::node::random_id(|| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 7
        });
        s.rename(me, new);
        s.myself = new;
        crate::notice!("Node hard reset, now I'm {}", id_str(&new));
    } else {
        let id = s.myself;
        s.me_mut().shard_id = id;
    }
    changed(ctx);
    ctx.out.ok();
}

/// CLUSTER SAVECONFIG
pub fn saveconfig(ctx: &mut Ctx, _: &[&[u8]]) {
    let Some(c) = cluster(ctx) else { return };
    match c.save() {
        Ok(()) => ctx.out.ok(),
        Err(e) => ctx.error(&format!("ERR error saving the cluster node config: {e}")),
    }
}

/// CLUSTER HELP
pub fn help(ctx: &mut Ctx, _: &[&[u8]]) {
    super::help_reply(
        ctx,
        "CLUSTER",
        &[
            "ADDSLOTS <slot> [<slot> ...]",
            "    Assign slots to current node.",
            "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
            "    Assign slots which are between <start-slot> and <end-slot> to current node.",
            "BUMPEPOCH",
            "    Advance the cluster config epoch.",
            "COUNT-FAILURE-REPORTS <node-id>",
            "    Return number of failure reports for <node-id>.",
            "COUNTKEYSINSLOT <slot>",
            "    Return the number of keys in <slot>.",
            "DELSLOTS <slot> [<slot> ...]",
            "    Delete slots information from current node.",
            "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
            "    Delete slots information which are between <start-slot> and <end-slot> from current node.",
            "FAILOVER [FORCE|TAKEOVER]",
            "    Promote current replica node to being a master.",
            "FORGET <node-id>",
            "    Remove a node from the cluster.",
            "GETKEYSINSLOT <slot> <count>",
            "    Return key names stored by current node in a slot.",
            "FLUSHSLOTS",
            "    Delete current node own slots information.",
            "INFO",
            "    Return information about the cluster.",
            "KEYSLOT <key>",
            "    Return the hash slot for <key>.",
            "MEET <ip> <port> [<bus-port>]",
            "    Connect nodes into a working cluster.",
            "MYID",
            "    Return the node id.",
            "MYSHARDID",
            "    Return the node's shard id.",
            "NODES",
            "    Return cluster configuration seen by node. Output format:",
            "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
            "REPLICATE <node-id>",
            "    Configure current node as replica to <node-id>.",
            "RESET [HARD|SOFT]",
            "    Reset current node (default: soft).",
            "SET-CONFIG-EPOCH <epoch>",
            "    Set config epoch of current node.",
            "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
            "    Set slot state.",
            "REPLICAS <node-id>",
            "    Return <node-id> replicas.",
            "SAVECONFIG",
            "    Force saving cluster configuration on disk.",
            "SLOTS",
            "    Return information about slots range mappings. Each range is made of:",
            "    start, end, master and replicas IP addresses, ports and ids",
            "SHARDS",
            "    Return information about slot range mappings and the nodes associated with them.",
            "LINKS",
            "    Return information about all network links between this node and its peers.",
            "    Output format is an array where each array element is a map containing attributes of a link",
        ],
    );
}

/// ASKING
pub fn asking(ctx: &mut Ctx, _: &[&[u8]]) {
    if ctx.server.cluster.is_none() {
        return ctx.error(DISABLED);
    }
    ctx.client.cluster.asking = true;
    ctx.out.ok();
}

/// READONLY
pub fn readonly(ctx: &mut Ctx, _: &[&[u8]]) {
    if ctx.server.cluster.is_none() {
        return ctx.error(DISABLED);
    }
    ctx.client.cluster.readonly = true;
    ctx.out.ok();
}

/// READWRITE
pub fn readwrite(ctx: &mut Ctx, _: &[&[u8]]) {
    if ctx.server.cluster.is_none() {
        return ctx.error(DISABLED);
    }
    ctx.client.cluster.readonly = false;
    ctx.out.ok();
}
