//! Goblin as a master: its replicas (the connections that sent SYNC or PSYNC), their full
//! syncs, the stream they receive, their acknowledgements.
//!
//! A replica is a client connection like any other (its socket is the loop's); this module
//! keeps, by CLIENT ID, what replication needs to know of it, and writes to it only through
//! the client registry ([`crate::clients::Clients::push_to`]), never to the socket; a
//! diskless sync's payload too, relayed from the child's pipe ([`super::rdb_pipe`]).
//!
//! # A full sync
//!
//! ```text
//! PSYNC ? -1 / SYNC      -> WaitBgsaveStart  (the stream is not kept for it yet)
//! tick: no child runs    -> drain the stream, offset O, fork:
//!   disk:     BGSAVE (the snapshot file); +FULLRESYNC <id> O pushed   -> WaitBgsaveEnd
//!   diskless: +FULLRESYNC <id> O and $EOF:<mark> pushed; the child writes
//!             the RDB and <mark> into a pipe the loop relays to them  -> WaitBgsaveEnd
//!   (from O + 1 on, the shared buffer keeps the stream for it: its position)
//! disk: BGSAVE done      -> $<size>, then the file by chunks          -> SendBulk
//!        file sent       -> the stream from its position              -> Online
//! diskless: pipe read to its end, child done
//!                        -> Online, the stream waits for the replica's first
//!                           REPLCONF ACK (it reads the RDB up to the mark, not further)
//! ```
//!
//! A partial resync (PSYNC <id> <offset> that the backlog can serve) answers `+CONTINUE`
//! and the replica is online at that offset: its connection writes the stream from the
//! shared buffer from there ([`super::replica_out`]).

use super::fullsync;
use crate::clients::{Client, Clients, ReplRole};
use crate::rdb::Child;
use crate::server::Server;
use crate::{notice, warning};
use std::fmt::Write as _;
use std::fs::File;
use std::time::{Duration, Instant};

/// Where a replica is in its synchronisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Waiting for a fork to start.
    WaitBgsaveStart,
    /// The snapshot is being made (and, diskless, sent).
    WaitBgsaveEnd,
    /// The snapshot file is being sent.
    SendBulk,
    /// Receiving the stream.
    Online,
}

impl State {
    /// The state's name in INFO's slaveN lines.
    pub fn name(self) -> &'static str {
        match self {
            State::WaitBgsaveStart | State::WaitBgsaveEnd => "wait_bgsave",
            State::SendBulk => "send_bulk",
            State::Online => "online",
        }
    }
}

/// What a replica said with REPLCONF before SYNC / PSYNC.
#[derive(Debug, Clone, Default)]
pub struct Handshake {
    /// listening-port: the port it serves on (INFO, ROLE).
    pub listening_port: u16,
    /// ip-address: the address it announces.
    pub ip: Option<String>,
    /// capa eof: it reads the `$EOF:` form of the payload (diskless syncs).
    pub capa_eof: bool,
    /// capa psync2: it understands `+CONTINUE <id>`.
    pub capa_psync2: bool,
    /// rdb-only 1: it wants the snapshot, not the stream (redis-cli --rdb).
    pub rdb_only: bool,
    /// rdb-filter-only: what its snapshot leaves out (redis-cli --replica, --functions-rdb).
    pub filter: RdbFilter,
}

/// The parts of a full sync's snapshot a replica asked to leave out with REPLCONF
/// rdb-filter-only (Redis's SLAVE_REQ_RDB_EXCLUDE_*). Such a snapshot goes only to the
/// replicas that asked for the same, always over their sockets (never the snapshot file).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RdbFilter {
    /// No keys.
    pub exclude_data: bool,
    /// No function libraries.
    pub exclude_functions: bool,
}

impl RdbFilter {
    /// Whether anything is left out.
    pub fn any(self) -> bool {
        self.exclude_data || self.exclude_functions
    }

    /// REPLCONF rdb-filter-only's value: the parts to include, of which Redis 7.2 knows
    /// only `functions`; everything else is left out. Err holds the error reply.
    fn set(&mut self, value: &[u8]) -> Result<(), String> {
        let filters = crate::resp::parse::split_args(value)
            .ok_or_else(|| "ERR Missing rdb-filter-only values".to_string())?;
        *self = RdbFilter {
            exclude_data: true,
            exclude_functions: true,
        };
        for filter in filters {
            if filter.eq_ignore_ascii_case(b"functions") {
                self.exclude_functions = false;
            } else {
                return Err(format!(
                    "ERR Unsupported rdb-filter-only option: {}",
                    String::from_utf8_lossy(&filter)
                ));
            }
        }
        Ok(())
    }
}

/// A snapshot file being sent.
#[derive(Debug)]
pub(super) struct Bulk {
    pub(super) file: File,
    pub(super) size: u64,
    pub(super) sent: u64,
}

/// A replica's part in the shared replication buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    /// Nothing kept yet: before its sync's snapshot (or partial resync), or it wants only
    /// the snapshot.
    NotKept,
    /// Its place: the offset of the next stream byte it gets.
    At(u64),
    /// Stopped: its connection closes, nothing more is kept for it or written to it.
    Stopped,
}

/// One replica.
#[derive(Debug)]
pub struct Replica {
    /// Its CLIENT ID.
    pub id: u64,
    /// The address INFO and ROLE show.
    pub ip: String,
    /// What it said with REPLCONF.
    pub conf: Handshake,
    /// It came with SYNC (no +FULLRESYNC, no ACKs: redis-cli --replica and --rdb).
    pub pre_psync: bool,
    /// Its synchronisation state.
    pub state: State,
    /// Its last full sync went through the sockets.
    pub(super) diskless: bool,
    /// Online, but the stream waits for its first ACK (after a diskless sync).
    pub(super) wait_ack: bool,
    /// An ACK came since its full sync started.
    pub(super) acked: bool,
    /// What the shared replication buffer keeps for it.
    stream: Stream,
    /// Output waiting for it when a diskless sync's relay last looked.
    pub(super) relay_pending: usize,
    /// When its output last went down during a diskless sync: repl-timeout counts from it
    /// (Redis's repl_last_partial_write).
    pub(super) relay_progress: Instant,
    /// The offset it acknowledged (REPLCONF ACK).
    pub ack_off: u64,
    /// The offset it acknowledged as fsynced to its AOF (REPLCONF ACK ... FACK; Redis's
    /// repl_aof_off): WAITAOF's `numreplicas` counts it.
    pub aof_off: u64,
    /// When it last acknowledged (or went online).
    pub ack_time: Instant,
    pub(super) bulk: Option<Bulk>,
}

impl Replica {
    /// A replica just asking for a sync: waiting for a fork, nothing kept for it.
    pub(super) fn new(id: u64, ip: String, conf: Handshake, pre_psync: bool) -> Replica {
        Replica {
            id,
            ip,
            conf,
            pre_psync,
            state: State::WaitBgsaveStart,
            diskless: false,
            wait_ack: false,
            acked: false,
            stream: Stream::NotKept,
            relay_pending: 0,
            relay_progress: Instant::now(),
            ack_off: 0,
            aof_off: 0,
            ack_time: Instant::now(),
            bulk: None,
        }
    }

    /// Its place in the shared buffer: the offset of the next stream byte it gets; None
    /// when nothing is kept for it.
    pub(super) fn pos(&self) -> Option<u64> {
        match self.stream {
            Stream::At(pos) => Some(pos),
            Stream::NotKept | Stream::Stopped => None,
        }
    }

    /// Whether its stream was stopped (its connection closes).
    pub(super) fn dropped(&self) -> bool {
        self.stream == Stream::Stopped
    }

    /// The stream is kept for it from offset `from` on (None: not kept, it wants only the
    /// snapshot). A stopped stream stays stopped.
    pub(super) fn keep_stream_from(&mut self, from: Option<u64>) {
        if !self.dropped() {
            self.stream = from.map_or(Stream::NotKept, Stream::At);
        }
    }

    /// Stops its stream for good, on every path that closes it: its position no longer
    /// holds the buffer's blocks, nothing more is written to it, no sync joins it.
    pub(super) fn stop_stream(&mut self) {
        self.stream = Stream::Stopped;
    }

    /// Stops its stream and closes its connection once serviced, after what waits for it
    /// was written.
    pub(super) fn close(&mut self, clients: &mut Clients) {
        self.stop_stream();
        clients.kill(|c| c.id == self.id);
    }

    /// Stops its stream and closes its connection without writing what waits for it.
    pub(super) fn close_now(&mut self, clients: &mut Clients) {
        self.stop_stream();
        clients.close_now(self.id);
    }

    /// `ip:port` as Redis names a replica in its log lines.
    pub fn name(&self) -> String {
        format!("{}:{}", self.ip, self.conf.listening_port)
    }

    /// Notes that `pending` output bytes wait for it: progress when fewer than last seen,
    /// or none.
    pub(super) fn watch_output(&mut self, pending: usize) {
        if pending == 0 || pending < self.relay_pending {
            self.relay_progress = Instant::now();
        }
        self.relay_pending = pending;
    }

    /// Whether a diskless sync's payload waits for it without progress for `timeout`.
    fn relay_stalled(&self, timeout: Duration) -> bool {
        self.relay_pending > 0 && self.relay_progress.elapsed() > timeout
    }
}

/// The master side's state.
#[derive(Debug, Default)]
pub struct MasterSide {
    /// The replicas, in the order they attached.
    pub replicas: Vec<Replica>,
    /// REPLCONF settings of clients not yet replicas, by CLIENT ID.
    pub handshakes: hashbrown::HashMap<u64, Handshake>,
    /// The diskless sync's child.
    pub child: Option<Child>,
    /// The pipe its payload comes through (open until read to its end).
    pub(super) pipe: Option<super::rdb_pipe::Relay>,
    /// How the child ended, once reaped (a child that wrote all counts once its payload
    /// was relayed).
    pub(super) child_exit: Option<crate::rdb::fork::Exit>,
    /// The BGSAVE a disk-based sync waits for (its pid).
    pub(super) disk_job: Option<libc::pid_t>,
    /// The stream's offset when that BGSAVE forked (the +FULLRESYNC offset of the replicas
    /// it serves).
    pub(super) disk_offset: u64,
    /// A disk-based sync wrote the snapshot file while rdb-del-sync-files was on (see
    /// [`super::del_sync_files`]).
    pub(super) snapshot_for_sync: bool,
    /// Since when replicas wait for a sync to start (the diskless delay counts from it).
    pub(super) waiting_since: Option<Instant>,
    /// When the last PING went to the replicas.
    last_ping: Option<Instant>,
    /// When the last newline went to the replicas waiting for their snapshot.
    last_newline: Option<Instant>,
    /// WAIT asked for acknowledgements: REPLCONF GETACK goes out this iteration.
    pub ask_acks: bool,
    /// An acknowledgement arrived: the clients in WAIT are looked at.
    pub acks_changed: bool,
}

impl MasterSide {
    /// Whether per-iteration work may be due.
    pub fn active(&self) -> bool {
        !self.replicas.is_empty()
            || self.child.is_some()
            || self.pipe.is_some()
            || self.ask_acks
            || self.acks_changed
    }

    /// Whether a transfer needs the loop to come back soon (a file being sent, a payload
    /// relayed).
    pub fn busy(&self) -> bool {
        self.replicas.iter().any(|r| r.state == State::SendBulk)
            || self.pipe.as_ref().is_some_and(super::rdb_pipe::Relay::more)
    }

    /// Replica `id`.
    pub(super) fn get(&self, id: u64) -> Option<&Replica> {
        self.replicas.iter().find(|r| r.id == id)
    }

    /// Replica `id`, to change.
    pub(super) fn get_mut(&mut self, id: u64) -> Option<&mut Replica> {
        self.replicas.iter_mut().find(|r| r.id == id)
    }

    /// Takes replica `id` out of the list.
    fn remove(&mut self, id: u64) -> Option<Replica> {
        let i = self.replicas.iter().position(|r| r.id == id)?;
        Some(self.replicas.remove(i))
    }
}

/// REPLCONF option `name` with `value` from client `client` (not the ACK / GETACK ones).
/// `Err` holds the error reply.
pub fn replconf(
    server: &mut Server,
    client: &Client,
    name: &[u8],
    value: &[u8],
) -> Result<(), String> {
    let h = server
        .replication
        .master
        .handshakes
        .entry(client.id)
        .or_default();
    let lower = name.to_ascii_lowercase();
    match lower.as_slice() {
        b"listening-port" => {
            let port = crate::numbers::parse_i64(value)
                .ok_or_else(|| crate::errors::NOT_AN_INTEGER.to_string())?;
            h.listening_port = port as u16;
        }
        b"ip-address" => {
            if value.len() >= 46 {
                return Err(format!(
                    "ERR REPLCONF ip-address provided by replica instance is too long: {} bytes",
                    value.len()
                ));
            }
            h.ip = Some(String::from_utf8_lossy(value).into_owned());
        }
        b"capa" => {
            if value.eq_ignore_ascii_case(b"eof") {
                h.capa_eof = true;
            } else if value.eq_ignore_ascii_case(b"psync2") {
                h.capa_psync2 = true;
            }
        }
        b"rdb-only" => match value {
            b"0" => h.rdb_only = false,
            b"1" => h.rdb_only = true,
            _ => return Err("ERR value is out of range, must be positive".into()),
        },
        b"rdb-filter-only" => h.filter.set(value)?,
        _ => {
            return Err(format!(
                "ERR Unrecognized REPLCONF option: {}",
                String::from_utf8_lossy(name)
            ))
        }
    }
    Ok(())
}

/// REPLCONF ACK <offset> [FACK <aofoffset>] from replica `id`.
pub fn ack(server: &mut Server, id: u64, offset: u64, fsynced: Option<u64>) {
    let m = &mut server.replication.master;
    let Some(r) = m.get_mut(id) else { return };
    r.ack_off = r.ack_off.max(offset);
    r.aof_off = r.aof_off.max(fsynced.unwrap_or(0));
    r.ack_time = Instant::now();
    r.acked = true;
    if r.wait_ack && r.state == State::Online {
        r.wait_ack = false;
    }
    m.acks_changed = true;
}

/// SYNC (`psync` None) or PSYNC <replid> <offset> from `client`: Ok with the bytes to
/// reply (+CONTINUE and the backlog; nothing for a full sync, whose +FULLRESYNC goes out
/// when its fork starts), or Err with the error reply.
pub fn sync(
    server: &mut Server,
    client: &mut Client,
    psync: Option<(&[u8], &[u8])>,
) -> Result<Vec<u8>, String> {
    if client.repl_role == ReplRole::Replica {
        return Ok(Vec::new());
    }
    if server.replication.is_replica()
        && !server
            .replication
            .link
            .as_ref()
            .is_some_and(|l| l.connected())
    {
        return Err("NOMASTERLINK Can't SYNC while not connected with my master".into());
    }
    let conf = server
        .replication
        .master
        .handshakes
        .remove(&client.id)
        .unwrap_or_default();
    if server.replication.failover.active() {
        return Err("NOMASTERLINK Can't SYNC while failing over".into());
    }
    // A filtered snapshot goes over the socket, which takes the EOF form.
    if conf.filter.any() && !conf.capa_eof {
        return Err("ERR Filtered replica requires EOF capability".into());
    }
    let ip = conf.ip.clone().unwrap_or_else(|| client.addr.ip_text());
    let mut replica = Replica::new(client.id, ip, conf, psync.is_none());
    notice!("Replica {} asks for synchronization", replica.name());
    if let Some((replid, offset)) = psync {
        let Some(offset) = crate::numbers::parse_i64(offset) else {
            warning!(
                "Replica {} asks for synchronization but with a wrong offset",
                replica.name()
            );
            return Err(crate::errors::NOT_AN_INTEGER.into());
        };
        if let Some((reply, from)) = try_partial(server, &replica, replid, offset) {
            server.replication.sync_partial_ok += 1;
            replica.state = State::Online;
            replica.keep_stream_from(Some(from));
            client.repl_role = ReplRole::Replica;
            server.replication.master.replicas.push(replica);
            return Ok(reply);
        }
        if replid != b"?" {
            server.replication.sync_partial_err += 1;
        }
    }
    server.replication.sync_full += 1;
    client.repl_role = ReplRole::Replica;
    if server.config.repl.disable_tcp_nodelay {
        disable_tcp_nodelay(client.fd);
    }
    if server.replication.backlog.is_none() {
        super::create_backlog(server);
    }
    let reply = fullsync::join_disk_sync(server, &mut replica);
    let m = &mut server.replication.master;
    if replica.state == State::WaitBgsaveStart {
        m.waiting_since.get_or_insert_with(Instant::now);
    }
    m.replicas.push(replica);
    Ok(reply)
}

/// Turns TCP_NODELAY off on socket `fd` (repl-disable-tcp-nodelay). As in Redis, a failure
/// does not matter (a unix socket has no such option).
fn disable_tcp_nodelay(fd: i32) {
    let off: libc::c_int = 0;
    // SAFETY: a plain setsockopt on the client's descriptor, with an int option value.
    unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            (&off as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// The +CONTINUE reply and the position to stream from, when the backlog holds the
/// stream from `offset` on.
fn try_partial(
    server: &Server,
    replica: &Replica,
    replid: &[u8],
    offset: i64,
) -> Option<(Vec<u8>, u64)> {
    let r = &server.replication;
    let id = String::from_utf8_lossy(replid);
    let same = id.eq_ignore_ascii_case(&r.replid)
        || (id.eq_ignore_ascii_case(&r.replid2) && offset <= r.second_offset);
    if !same {
        if replid == b"?" {
            notice!("Full resync requested by replica {}", replica.name());
        } else if !id.eq_ignore_ascii_case(&r.replid) && !id.eq_ignore_ascii_case(&r.replid2) {
            notice!(
                "Partial resynchronization not accepted: Replication ID mismatch (Replica asked for '{id}', my replication IDs are '{}' and '{}')",
                r.replid, r.replid2
            );
        } else {
            notice!(
                "Partial resynchronization not accepted: Requested offset for second ID was {offset}, but I can reply up to {}",
                r.second_offset
            );
        }
        return None;
    }
    let backlog = r.backlog.as_ref()?;
    let Some(from) = u64::try_from(offset).ok().filter(|&o| backlog.covers(o)) else {
        notice!(
            "Unable to partial resync with replica {} for lack of backlog (Replica request was: {offset}).",
            replica.name()
        );
        return None;
    };
    let reply = if replica.conf.capa_psync2 {
        format!("+CONTINUE {}\r\n", r.replid).into_bytes()
    } else {
        b"+CONTINUE\r\n".to_vec()
    };
    notice!(
        "Partial resynchronization request from {} accepted. Sending {} bytes of backlog starting from offset {offset}.",
        replica.name(),
        backlog.offset() + 1 - from
    );
    Some((reply, from))
}

/// Writes raw bytes for client `id`; false when it is not reachable now.
pub(super) fn push(
    clients: &mut crate::clients::Clients,
    id: u64,
    hard: u64,
    bytes: &[u8],
) -> bool {
    clients.push_to(id, hard, |w, _| w.raw(bytes))
}

/// Per-iteration work: notice a disk sync's end, start a sync, relay a diskless one's
/// payload and notice its end, send files, GETACK for WAIT, answer
/// the clients in WAIT.
pub fn tick(server: &mut Server, registry: &mio::Registry) {
    // A BGSAVE that ended is sent to its replicas before another may start: the next one
    // would replace the file (and its offset) under them.
    if let Some(pid) = server.replication.master.disk_job {
        if server.rdb.child.as_ref().map(|c| c.pid) != Some(pid) {
            server.replication.master.disk_job = None;
            fullsync::finish_disk(server);
        }
    }
    fullsync::maybe_start_sync(server, registry);
    super::rdb_pipe::relay(server, registry);
    fullsync::reap_sockets_child(server, registry);
    fullsync::pump_files(server);
    if std::mem::take(&mut server.replication.master.ask_acks) {
        send_getack(server);
    }
    if std::mem::take(&mut server.replication.master.acks_changed) {
        crate::commands::serve_waits(server);
    }
}

/// Asks every replica for an acknowledgement now (REPLCONF GETACK on the stream, after
/// what the commands propagated).
pub fn send_getack(server: &mut Server) {
    server.drain_propagation();
    super::feed(
        server,
        b"*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n",
    );
}

/// Periodic work: PING every repl-ping-replica-period, a newline each second to replicas
/// waiting for their snapshot (so they do not time out), replicas that stopped
/// acknowledging dropped after repl-timeout.
pub fn cron(server: &mut Server) {
    let now = Instant::now();
    let period = Duration::from_secs(server.config.repl.ping_period);
    // As Redis: no PING while the replicas' offsets are meant to stay (a pause for a
    // shutdown or a failover), so that they can match the master's.
    let no_ping = server.replication.is_replica()
        || crate::commands::pause::paused(server, crate::commands::pause::REPLICA);
    let m = &mut server.replication.master;
    let due = m.last_ping.is_none_or(|t| now.duration_since(t) >= period);
    if m.replicas.is_empty() || m.last_ping.is_none() {
        // The PINGs keep their cadence with nobody to send them to, as Redis's (every
        // period of its cron's count, from its first round, whose PING goes to nobody): a
        // replica that attaches gets its first PING up to a period later, not at once,
        // even one that attached before the first round.
        if due {
            m.last_ping = Some(now);
        }
        if m.replicas.is_empty() {
            return;
        }
    } else if due && !no_ping {
        m.last_ping = Some(now);
        server.drain_propagation();
        super::feed(server, b"*1\r\n$4\r\nPING\r\n");
    }
    let timeout = Duration::from_secs(server.config.repl.timeout);
    let Server {
        replication,
        clients,
        ..
    } = server;
    let m = &mut replication.master;
    let newline = m
        .last_newline
        .is_none_or(|t| now.duration_since(t) >= Duration::from_secs(1));
    if newline {
        m.last_newline = Some(now);
    }
    for r in &mut m.replicas {
        let waiting =
            r.state == State::WaitBgsaveStart || (r.state == State::WaitBgsaveEnd && !r.diskless);
        if newline && waiting {
            push(clients, r.id, 0, b"\n");
        }
        if r.state == State::WaitBgsaveEnd && r.diskless && !r.dropped() {
            r.watch_output(clients.pending_output(r.id).unwrap_or(0));
            if r.relay_stalled(timeout) {
                warning!("Disconnecting timedout replica (full sync): {}", r.name());
                r.close_now(clients);
            }
        }
        if r.state == State::Online && !r.pre_psync && now.duration_since(r.ack_time) > timeout {
            warning!(
                "Disconnecting timedout replica (streaming sync): {}",
                r.name()
            );
            r.close(clients);
        }
    }
}

/// A client's connection closed: a replica leaves the list (and the shared buffer what
/// only it held). A BGSAVE made for replicas is killed when the replica
/// was the last one waiting for it and no save point asks for snapshots (Redis's
/// freeClient: the child's work is of no use, and a new sync can start sooner).
pub fn client_gone(server: &mut Server, id: u64) {
    let m = &mut server.replication.master;
    m.handshakes.remove(&id);
    let Some(r) = m.remove(id) else {
        return;
    };
    notice!("Connection with replica {} lost.", r.name());
    // The blocks only it still referred to go.
    super::replica_out::trim(server);
    let m = &mut server.replication.master;
    let waited_disk = r.state == State::WaitBgsaveEnd && !r.diskless;
    let others = m
        .replicas
        .iter()
        .any(|o| o.state == State::WaitBgsaveEnd && !o.diskless);
    if waited_disk && !others && m.disk_job.is_some() && server.config.save.is_empty() {
        m.disk_job = None;
        server.snapshots().kill_child();
    }
}

/// How many online replicas acknowledged at least `offset` (WAIT).
pub fn acked(server: &Server, offset: u64) -> usize {
    count_online(server, |r| r.ack_off >= offset)
}

/// How many online replicas acknowledged at least `offset` as fsynced to their AOF
/// (WAITAOF).
pub fn aof_acked(server: &Server, offset: u64) -> usize {
    count_online(server, |r| r.aof_off >= offset)
}

fn count_online(server: &Server, counted: impl Fn(&Replica) -> bool) -> usize {
    server
        .replication
        .master
        .replicas
        .iter()
        .filter(|r| r.state == State::Online && counted(r))
        .count()
}

/// Online replicas that acknowledged within min-replicas-max-lag seconds.
pub fn good_replicas(server: &Server) -> usize {
    let lag = server.config.repl.min_replicas_max_lag;
    count_online(server, |r| r.ack_time.elapsed().as_secs() <= lag)
}

/// Whether writes may be accepted under min-replicas-to-write / min-replicas-max-lag
/// (Redis's checkGoodReplicasStatus): always on a replica, or when either is 0.
pub fn min_replicas_met(server: &Server) -> bool {
    let c = &server.config.repl;
    server.replication.is_replica()
        || c.min_replicas_to_write == 0
        || c.min_replicas_max_lag == 0
        || good_replicas(server) as u64 >= c.min_replicas_to_write
}

/// The online replicas as ROLE lists them: address, listening port, acknowledged offset.
pub fn role_entries(server: &Server) -> Vec<(String, u16, u64)> {
    server
        .replication
        .master
        .replicas
        .iter()
        .filter(|r| r.state == State::Online)
        .map(|r| (r.ip.clone(), r.conf.listening_port, r.ack_off))
        .collect()
}

/// The replica announcing `host` (ASCII case ignored) and `port`: Some(whether it is
/// online), None when there is none (Redis's findReplica).
pub fn replica_at(server: &Server, host: &str, port: i64) -> Option<bool> {
    server
        .replication
        .master
        .replicas
        .iter()
        .find(|r| r.ip.eq_ignore_ascii_case(host) && r.conf.listening_port as i64 == port)
        .map(|r| r.state == State::Online)
}

/// The address of a replica that acknowledged the stream up to `offset`: `target` when it
/// did, or any such replica without a target.
pub fn synced_replica(
    server: &Server,
    offset: u64,
    target: Option<&(String, u16)>,
) -> Option<(String, u16)> {
    server
        .replication
        .master
        .replicas
        .iter()
        .filter(|r| r.ack_off == offset)
        .map(|r| (r.ip.clone(), r.conf.listening_port))
        .find(|(ip, port)| target.is_none_or(|(h, p)| h.eq_ignore_ascii_case(ip) && p == port))
}

/// connected_slaves, min_slaves_good_slaves and the slaveN lines of INFO replication.
pub fn info_fields(server: &Server, w: &mut String) {
    let m = &server.replication.master;
    let _ = write!(w, "connected_slaves:{}\r\n", m.replicas.len());
    let c = &server.config.repl;
    if c.min_replicas_to_write > 0 && c.min_replicas_max_lag > 0 {
        let _ = write!(w, "min_slaves_good_slaves:{}\r\n", good_replicas(server));
    }
    for (i, r) in m.replicas.iter().enumerate() {
        let _ = write!(
            w,
            "slave{i}:ip={},port={},state={},offset={},lag={}\r\n",
            r.ip,
            r.conf.listening_port,
            r.state.name(),
            r.ack_off,
            r.ack_time.elapsed().as_secs()
        );
    }
}

/// Client `id`'s connection is closing: when it is a replica, nothing more of the stream
/// is kept for it or written to it, and no sync joins it.
pub fn stop_stream(server: &mut Server, id: u64) {
    if let Some(r) = server.replication.master.get_mut(id) {
        r.stop_stream();
    }
}

/// The replicas to drop when this server's history changes (REPLICAOF NO ONE, a new
/// master's full sync): they reconnect and resync. Their streams stop at once, as their
/// positions are in the history being replaced.
pub fn disconnect_replicas(server: &mut Server) {
    let mut ids = Vec::new();
    for r in &mut server.replication.master.replicas {
        r.stop_stream();
        ids.push(r.id);
    }
    server.clients.kill(|c| ids.contains(&c.id));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn replica(psync2: bool) -> Replica {
        let conf = Handshake {
            capa_psync2: psync2,
            ..Default::default()
        };
        Replica::new(1, "127.0.0.1".into(), conf, false)
    }

    #[test]
    fn a_closing_replica_keeps_no_stream() {
        let mut server = Server::new(Config::default());
        let mut r = replica(true);
        r.keep_stream_from(Some(1));
        server.replication.master.replicas.push(r);
        stop_stream(&mut server, 2);
        assert_eq!(
            server.replication.master.replicas[0].pos(),
            Some(1),
            "another"
        );
        stop_stream(&mut server, 1);
        let r = &mut server.replication.master.replicas[0];
        assert!(r.dropped() && r.pos().is_none());
        r.keep_stream_from(Some(5));
        assert!(r.dropped(), "stopped for good");
    }

    #[test]
    fn a_relayed_sync_stalls_only_without_progress() {
        let timeout = Duration::from_secs(5);
        let long_ago = Instant::now() - Duration::from_secs(10);
        let mut r = replica(true);
        r.relay_progress = long_ago;
        r.watch_output(100);
        assert!(
            r.relay_stalled(timeout),
            "output waiting, none written for 10 s"
        );
        r.watch_output(60);
        assert!(!r.relay_stalled(timeout), "some was written");
        r.relay_progress = long_ago;
        r.watch_output(60);
        assert!(r.relay_stalled(timeout));
        r.watch_output(0);
        assert!(!r.relay_stalled(timeout), "nothing waits");
    }

    #[test]
    fn partial_resync_only_within_the_history_and_the_backlog() {
        let mut server = Server::new(Config::default());
        super::super::create_backlog(&mut server);
        super::super::feed(&mut server, b"0123456789");
        let id = server.replication.replid.clone();
        let r = replica(true);
        let cont = |s: &Server, id: &str, off: i64| try_partial(s, &r, id.as_bytes(), off);
        let continued = format!("+CONTINUE {id}\r\n").into_bytes();
        assert_eq!(cont(&server, &id, 4), Some((continued.clone(), 4)));
        assert_eq!(cont(&server, &id, 11), Some((continued, 11)));
        assert!(cont(&server, &id, 12).is_none(), "past the end");
        assert!(cont(&server, &id, 0).is_none(), "before the start");
        assert!(cont(&server, "?", -1).is_none());
        assert!(
            cont(&server, &"f".repeat(40), 4).is_none(),
            "another history"
        );
        // After a promotion the old id is good up to where it ended.
        super::super::shift_id(&mut server);
        super::super::feed(&mut server, b"abc");
        assert_eq!(server.replication.second_offset, 11);
        assert!(cont(&server, &id, 11).is_some());
        assert!(cont(&server, &id, 12).is_none(), "the old id ended at 11");
        let new = server.replication.replid.clone();
        assert!(cont(&server, &new, 12).is_some());
        let old_style = try_partial(&server, &replica(false), new.as_bytes(), 14).unwrap();
        assert_eq!(old_style, (b"+CONTINUE\r\n".to_vec(), 14));
    }
}
