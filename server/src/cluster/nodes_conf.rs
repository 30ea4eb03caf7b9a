//! The node lines of CLUSTER NODES and nodes.conf (Redis's clusterGenNodeDescription), the
//! file's writing and its loading. A save that must survive a power loss writes a temporary
//! file, fsyncs it, renames it and fsyncs the directory (the old file or the new one);
//! other saves write in place as Redis 7.0 does (one write padded with newlines to the old
//! length, then a truncation: a kill between the two leaves blank lines, which loading
//! skips), since on ext4 a rename over the old file flushes the data as an fsync would.
//!
//! ```text
//! <id> <ip>:<port>@<cport>[,<hostname>[,tls-port=N,shard-id=ID[,nodename=NAME]]] <flags> \
//!     <master|-> <ping-sent> <pong-received> <config-epoch> <connected|disconnected> <slot>... \
//!     [<slot>->-<id>] [<slot>-<-<id>]
//! vars currentEpoch <n> lastVoteEpoch <n>
//! ```
//!
//! CLUSTER NODES shows the hostname only when one is set; the file always has it (maybe
//! empty) and the auxiliary fields after it, as Redis 7.2 writes them.

use super::node::{flags, id_str, parse_id, Node, NodeId};
use super::state::ClusterState;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// One node's line, without the newline. `connected` tells whether a link to it is up;
/// `for_file` adds the auxiliary fields.
pub fn node_line(state: &ClusterState, node: &Node, connected: bool, for_file: bool) -> String {
    let mut s = String::with_capacity(128);
    let _ = write!(
        s,
        "{} {}:{}@{}",
        id_str(&node.id),
        node.ip,
        node.port,
        node.cport
    );
    if for_file {
        let _ = write!(
            s,
            ",{},tls-port={},shard-id={}",
            node.hostname,
            node.pport,
            id_str(&node.shard_id)
        );
        if !node.human_nodename.is_empty() {
            let _ = write!(s, ",nodename={}", node.human_nodename);
        }
    } else if !node.hostname.is_empty() {
        let _ = write!(s, ",{}", node.hostname);
    }
    let master = node.replica_of.as_ref().map(id_str).unwrap_or("-");
    let link = if connected || node.has(flags::MYSELF) {
        "connected"
    } else {
        "disconnected"
    };
    let _ = write!(
        s,
        " {} {} {} {} {} {}",
        node.flag_names(),
        master,
        node.ping_sent,
        node.pong_received,
        epoch_of(state, node),
        link
    );
    for (start, end) in node.slots.ranges() {
        if node.is_master() {
            if start == end {
                let _ = write!(s, " {start}");
            } else {
                let _ = write!(s, " {start}-{end}");
            }
        }
    }
    if node.has(flags::MYSELF) {
        for (slot, to) in &state.migrating {
            let _ = write!(s, " [{slot}->-{}]", id_str(to));
        }
        for (slot, from) in &state.importing {
            if !state.migrating.contains_key(slot) {
                let _ = write!(s, " [{slot}-<-{}]", id_str(from));
            }
        }
    }
    s
}

/// A node's epoch as shown: a replica shows its master's (nodeEpoch).
pub fn epoch_of(state: &ClusterState, node: &Node) -> u64 {
    match node.replica_of.and_then(|m| state.nodes.get(&m)) {
        Some(master) if !node.is_master() => master.config_epoch,
        _ => node.config_epoch,
    }
}

/// Every node's line, each ending in a newline, this node first, then by id: CLUSTER NODES
/// lists every node, the file leaves out those in handshake (as Redis).
pub fn nodes_text(
    state: &ClusterState,
    connected: &dyn Fn(&NodeId) -> bool,
    for_file: bool,
) -> String {
    let mut ids: Vec<&NodeId> = state.nodes.keys().collect();
    ids.sort_by_key(|id| (**id != state.myself, **id));
    let mut out = String::new();
    for id in ids {
        let node = &state.nodes[id];
        if for_file && node.has(flags::HANDSHAKE) {
            continue;
        }
        out.push_str(&node_line(state, node, connected(id), for_file));
        out.push('\n');
    }
    out
}

/// The whole file: the nodes and the vars line.
pub fn file_text(state: &ClusterState) -> String {
    let mut text = nodes_text(state, &|_| false, true);
    let _ = writeln!(
        text,
        "vars currentEpoch {} lastVoteEpoch {}",
        state.current_epoch, state.last_vote_epoch
    );
    text
}

/// Writes `text` over `path` in place, without fsync (Redis 7.0's clusterSaveConfig): the
/// text padded with newlines to the file's old length in one write, then the file cut to
/// the text's length.
pub fn write_in_place(path: &Path, text: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    let old = f.metadata()?.len() as usize;
    let mut bytes = text.as_bytes().to_vec();
    if old > bytes.len() {
        bytes.resize(old, b'\n');
    }
    f.write_all(&bytes)?;
    if bytes.len() != text.len() {
        f.set_len(text.len() as u64)?;
    }
    Ok(())
}

/// Writes `text` to `path` atomically and durably: a temporary file beside it, fsync,
/// rename, fsync of the directory.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!("{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Parses a nodes.conf; `Err` says what is wrong (Redis refuses to start on it).
pub fn parse(text: &str, now: u64) -> Result<ClusterState, String> {
    let mut myself: Option<NodeId> = None;
    let mut nodes: Vec<Node> = Vec::new();
    let mut slots: Vec<(u16, u16, NodeId)> = Vec::new();
    let mut migrating = Vec::new();
    let mut importing = Vec::new();
    let (mut current_epoch, mut last_vote_epoch) = (0u64, 0u64);
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        if words[0] == "vars" {
            if words.len() % 2 != 1 {
                return Err("vars line with an odd number of words".into());
            }
            for pair in words[1..].chunks(2) {
                let v: u64 = pair[1].parse().map_err(|_| "bad vars value")?;
                match pair[0] {
                    "currentEpoch" => current_epoch = v,
                    "lastVoteEpoch" => last_vote_epoch = v,
                    _ => {}
                }
            }
            continue;
        }
        if words.len() < 8 {
            return Err(format!("node line with {} fields", words.len()));
        }
        let id = parse_id(words[0].as_bytes()).ok_or("bad node id")?;
        let mut node = Node::new(id, 0, now);
        let mut parts = words[1].split(',');
        let addr = parts.next().unwrap_or("");
        if let Some(host) = parts.next() {
            if !host.contains('=') {
                node.hostname = host.to_string();
            }
        }
        for aux in words[1].split(',').skip(1) {
            if let Some(v) = aux.strip_prefix("shard-id=") {
                node.shard_id = parse_id(v.as_bytes()).ok_or("bad shard id")?;
            } else if let Some(v) = aux.strip_prefix("nodename=") {
                node.human_nodename = v.to_string();
            } else if let Some(v) = aux.strip_prefix("tls-port=") {
                node.pport = v.parse().map_err(|_| "bad tls-port")?;
            }
        }
        let colon = addr.rfind(':').ok_or("address without a port")?;
        node.ip = addr[..colon].to_string();
        let ports = &addr[colon + 1..];
        let (port, cport) = match ports.split_once('@') {
            Some((p, c)) => (p, Some(c)),
            None => (ports, None),
        };
        node.port = port.parse().map_err(|_| "bad port")?;
        node.cport = match cport {
            Some(c) => c.parse().map_err(|_| "bad bus port")?,
            None => node.port.wrapping_add(10000),
        };
        for f in words[2].split(',') {
            node.flags |= match f {
                "myself" => {
                    if myself.is_some() {
                        return Err("two nodes flagged myself".into());
                    }
                    myself = Some(id);
                    flags::MYSELF
                }
                "master" => flags::MASTER,
                "slave" => flags::SLAVE,
                "fail?" => flags::PFAIL,
                "fail" => flags::FAIL,
                "handshake" => flags::HANDSHAKE,
                "noaddr" => flags::NOADDR,
                "nofailover" => flags::NOFAILOVER,
                "noflags" => 0,
                _ => return Err(format!("unknown flag {f}")),
            };
        }
        if words[3] != "-" {
            node.replica_of = Some(parse_id(words[3].as_bytes()).ok_or("bad master id")?);
        }
        node.config_epoch = words[6].parse().map_err(|_| "bad config epoch")?;
        if node.has(flags::FAIL) {
            node.fail_time = now;
        }
        for w in &words[8..] {
            if let Some(inner) = w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
                if let Some((slot, to)) = inner.split_once("->-") {
                    let slot = parse_slot(slot)?;
                    migrating.push((slot, parse_id(to.as_bytes()).ok_or("bad node id")?));
                } else if let Some((slot, from)) = inner.split_once("-<-") {
                    let slot = parse_slot(slot)?;
                    importing.push((slot, parse_id(from.as_bytes()).ok_or("bad node id")?));
                } else {
                    return Err(format!("bad slot state {w}"));
                }
                continue;
            }
            let (start, end) = match w.split_once('-') {
                Some((a, b)) => (parse_slot(a)?, parse_slot(b)?),
                None => (parse_slot(w)?, parse_slot(w)?),
            };
            if start > end {
                return Err(format!("bad slot range {w}"));
            }
            slots.push((start, end, id));
        }
        if nodes.iter().any(|n| n.id == id) {
            return Err("a node listed twice".into());
        }
        nodes.push(node);
    }
    let me = myself.ok_or("no node flagged myself")?;
    let mut state = ClusterState::new(|| 0, now);
    state.nodes.clear();
    state.myself = me;
    for n in nodes {
        state.nodes.insert(n.id, n);
    }
    // A master named only as some replica's master is known by its id alone.
    let masters: Vec<NodeId> = state.nodes.values().filter_map(|n| n.replica_of).collect();
    for m in masters {
        state
            .nodes
            .entry(m)
            .or_insert_with(|| Node::new(m, flags::MASTER | flags::NOADDR, now));
    }
    for (start, end, id) in slots {
        for s in start..=end {
            state.add_slot(id, s);
        }
    }
    for (slot, id) in migrating {
        if !state.nodes.contains_key(&id) {
            return Err("migrating to an unknown node".into());
        }
        state.migrating.insert(slot, id);
    }
    for (slot, id) in importing {
        if !state.nodes.contains_key(&id) {
            return Err("importing from an unknown node".into());
        }
        state.importing.insert(slot, id);
    }
    state.current_epoch = current_epoch.max(state.max_epoch());
    state.last_vote_epoch = last_vote_epoch;
    Ok(state)
}

fn parse_slot(text: &str) -> Result<u16, String> {
    match text.parse::<u16>() {
        Ok(s) if (s as usize) < super::slot::SLOTS => Ok(s),
        _ => Err(format!("bad slot {text}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_place_and_atomic_writes_leave_the_last_text() {
        let dir = std::env::temp_dir().join(format!("goblin-nodes-conf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("nodes.conf");
        let long = "a6fdb6046b81f5dcee582e7424cd01f76121c810 :23001@33001, myself,master - 0 0 0 connected 1-3 5\nvars currentEpoch 0 lastVoteEpoch 0\n";
        let short = "a6fdb6046b81f5dcee582e7424cd01f76121c810 :23001@33001, myself,master - 0 0 1 connected 1\nvars currentEpoch 1 lastVoteEpoch 0\n";
        write_in_place(&path, long).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), long);
        write_in_place(&path, short).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), short);
        // What a kill between the padded write and the truncation leaves still loads.
        let padded = format!("{short}{}", "\n".repeat(long.len() - short.len()));
        assert!(parse(&padded, 0).is_ok());
        write_atomically(&path, long).unwrap();
        write_in_place(&path, short).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), short);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn lines_as_redis_writes_them() {
        let text = "a6fdb6046b81f5dcee582e7424cd01f76121c810 :23001@33001,foo.example myself,master - 0 0 0 connected 1-3 5\nvars currentEpoch 0 lastVoteEpoch 0\n";
        let state = parse(text, 0).unwrap();
        let me = state.me();
        assert_eq!(
            node_line(&state, me, false, false),
            "a6fdb6046b81f5dcee582e7424cd01f76121c810 :23001@33001,foo.example myself,master - 0 0 0 connected 1-3 5"
        );
        let file = file_text(&state);
        assert!(file.starts_with("a6fdb6046b81f5dcee582e7424cd01f76121c810 :23001@33001,foo.example,tls-port=0,shard-id=a6fdb6046b81f5dcee582e7424cd01f76121c810 myself,master"));
        let named = text.replace("foo.example", "foo.example,nodename=node-a");
        let state = parse(&named, 0).unwrap();
        assert_eq!(state.me().human_nodename, "node-a");
        assert!(file_text(&state)
            .contains(",shard-id=a6fdb6046b81f5dcee582e7424cd01f76121c810,nodename=node-a "));
        assert!(file.ends_with("vars currentEpoch 0 lastVoteEpoch 0\n"));
        let again = parse(&file, 0).unwrap();
        assert_eq!(file_text(&again), file);
    }

    #[test]
    fn replicas_migrations_and_errors() {
        let m = "1".repeat(40);
        let r = "2".repeat(40);
        let text = format!(
            "{r} 127.0.0.1:7001@17001 myself,slave {m} 0 0 3 connected [5->-{m}] [6-<-{m}]\n\
             {m} 127.0.0.1:7000@17000 master - 0 1 3 connected 0-16383\n\
             vars currentEpoch 7 lastVoteEpoch 2\n"
        );
        let s = parse(&text, 0).unwrap();
        assert_eq!(s.current_epoch, 7);
        assert_eq!(s.slots[100], parse_id(m.as_bytes()));
        assert_eq!(s.migrating.len(), 1);
        let again = parse(&file_text(&s), 0).unwrap();
        assert_eq!(file_text(&again), file_text(&s));
        assert!(parse("x y z", 0).is_err());
        assert!(parse(&format!("{m} :1@2 master - 0 0 0 connected 1\n"), 0).is_err());
        assert!(parse(
            &format!("{m} :1@2 myself,master - 0 0 0 connected 16384\n"),
            0
        )
        .is_err());
        assert!(parse(&format!("{m} :1@2 myself,bogus - 0 0 0 connected\n"), 0).is_err());
    }
}
