//! Goblin as a replica: the link to the master, driven by the event loop (the socket is
//! registered under [`super::LINK_SOURCE`]; nothing here blocks).
//!
//! ```text
//! Connect --cron--> Connecting --writable--> Handshake: PING, [AUTH], REPLCONF listening-port,
//!   REPLCONF capa eof capa psync2, PSYNC <cached id> <offset+1> | PSYNC ? -1
//!   +CONTINUE   -> Connected (the master client continues from the cached offset)
//!   +FULLRESYNC -> Transfer: the payload ($<len> or $EOF:<mark>) into temp-<t>.<pid>.rdb,
//!                  renamed to dbfilename -> Loading (the start-up loader's thread; the loop
//!                  answers -LOADING) -> Connected
//! Connected: the stream applied by the master client (no replies), the offset counted at
//!   command boundaries outside MULTI; the applied bytes fed to this server's backlog and
//!   replicas; REPLCONF ACK <offset> [FACK <aofoffset>] each second and on GETACK.
//! a lost link -> Connect, the master cached (id, offset, database) for the next PSYNC.
//! ```

use super::payload::{self, EofScanner, Header, PsyncReply};
use crate::clients::{Client, ReplRole};
use crate::keyspace::Free;
use crate::resp::parse::{Limits, Parsed, RequestParser};
use crate::server::Server;
use crate::{notice, warning};
use mio::net::TcpStream;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Bytes read from the master per read call.
const READ_CHUNK: usize = 64 << 10;

/// The handshake's steps, each waiting for one reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Pong,
    Auth,
    Port,
    Ip,
    Capa,
    Psync,
}

/// Where the link is (Redis's repl_state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Connect,
    Connecting,
    Handshake(Step),
    Transfer,
    Loading,
    Connected,
}

/// The history a PSYNC continues.
#[derive(Debug, Clone)]
struct Cached {
    replid: String,
    offset: u64,
    db: usize,
}

/// The payload being received.
#[derive(Debug)]
struct Transfer {
    header: Option<Header>,
    file: Option<File>,
    path: PathBuf,
    read: u64,
    scanner: Option<EofScanner>,
    last_io: Instant,
    /// repl-diskless-load: loaded from the socket (Some(async), see [`super::socket_load`]).
    diskless: Option<bool>,
    /// The loading thread's feed, once the header was read (a diskless load).
    feed: Option<std::sync::mpsc::Sender<Vec<u8>>>,
}

/// The link to the master.
pub struct Link {
    state: State,
    stream: Option<TcpStream>,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    last_io: Instant,
    last_attempt: Option<Instant>,
    /// Since when the link is down (None: up, or never was).
    down_since: Option<Instant>,
    cached: Option<Cached>,
    /// The +FULLRESYNC's id and offset, until the snapshot is loaded.
    initial: Option<(String, u64)>,
    /// The payload's end is marked (a diskless sync): an ACK right after the load.
    eof_form: bool,
    transfer: Option<Transfer>,
    client: Option<Box<Client>>,
    parser: RequestParser,
    rpos: usize,
    /// Bytes of `rbuf` applied (outside a transaction), not yet fed on.
    applied: usize,
    /// Offset of the last byte applied.
    reploff: u64,
    last_ack: Option<Instant>,
    /// Drive it from the loop's next round (edge-triggered readiness may not come again).
    pending_drive: bool,
    /// A client pause holds the master's next command (see [`pause_lighter`]).
    held: bool,
    /// Bytes read from the master not yet counted in the server's statistics.
    uncounted: u64,
    /// A swapdb load: the master's snapshot loading while the old data serves.
    async_load: Option<crate::rdb::loading::Loading>,
}

impl Link {
    fn new() -> Link {
        Link {
            state: State::Connect,
            stream: None,
            rbuf: Vec::new(),
            wbuf: Vec::new(),
            last_io: Instant::now(),
            last_attempt: None,
            down_since: None,
            cached: None,
            initial: None,
            eof_form: false,
            transfer: None,
            client: None,
            parser: RequestParser::default(),
            rpos: 0,
            applied: 0,
            reploff: 0,
            last_ack: None,
            pending_drive: false,
            held: false,
            uncounted: 0,
            async_load: None,
        }
    }

    /// Whether the stream flows (Redis's REPL_STATE_CONNECTED).
    pub fn connected(&self) -> bool {
        self.state == State::Connected
    }

    /// The state's name in ROLE.
    pub fn role_state(&self) -> &'static str {
        match self.state {
            State::Connect => "connect",
            State::Connecting => "connecting",
            State::Handshake(_) => "handshake",
            State::Transfer | State::Loading => "sync",
            State::Connected => "connected",
        }
    }

    /// The offset processed (ROLE's last field; -1 without a master client).
    pub fn role_offset(&self) -> i64 {
        if self.client.is_some() {
            self.reploff as i64
        } else {
            -1
        }
    }

    /// The offset of the stream applied, from the master client or else the cached master
    /// (Redis's replicationGetSlaveOffset; 0 with neither).
    pub fn offset(&self) -> u64 {
        match (&self.client, &self.cached) {
            (Some(_), _) => self.reploff,
            (None, Some(c)) => c.offset,
            (None, None) => 0,
        }
    }

    /// Milliseconds since the master last sent something, or since the link went down
    /// (the data age a cluster replica weighs before failing over).
    pub fn data_age_ms(&self) -> u64 {
        let since = match (self.connected(), self.down_since) {
            (false, Some(down)) => down,
            _ => self.last_io,
        };
        since.elapsed().as_millis() as u64
    }

    /// The master's client, while the stream flows (CLIENT LIST).
    pub fn master_client(&self) -> Option<&Client> {
        self.client.as_deref()
    }

    /// The database the master client is in (the stream continues there).
    pub fn master_db(&self) -> Option<usize> {
        self.client.as_ref().map(|c| c.db)
    }

    /// Drops the cached master: the next sync is a full one.
    pub fn forget_history(&mut self) {
        self.cached = None;
    }

    /// Caches a master to continue with PSYNC: history `replid` up to `offset`, the stream
    /// in database `db` (a restarted replica's snapshot).
    pub fn cache_master(&mut self, replid: String, offset: u64, db: usize) {
        self.cached = Some(Cached { replid, offset, db });
    }

    /// The database the master's stream is in: the master client's, else the cached
    /// master's (None: no history to continue).
    pub fn stream_db(&self) -> Option<usize> {
        self.master_db()
            .or_else(|| self.cached.as_ref().map(|c| c.db))
    }

    /// Whether the snapshot from the master is being loaded.
    pub fn loading(&self) -> bool {
        self.state == State::Loading
    }

    /// Whether the link has more to read now (the loop should come back at once).
    pub fn wants_drive(&self) -> bool {
        self.pending_drive
    }

    /// Whether a swapdb load runs (INFO async_loading).
    pub fn async_loading(&self) -> bool {
        self.async_load.is_some()
    }

    /// The master-related fields of INFO replication.
    pub fn info_fields(&self, server: &Server, w: &mut String) {
        let (host, port) = server.replication.master_addr.clone().unwrap_or_default();
        let up = self.state == State::Connected;
        let last_io = if self.client.is_some() {
            self.last_io.elapsed().as_secs() as i64
        } else {
            -1
        };
        let in_sync = matches!(self.state, State::Transfer | State::Loading);
        let offset = match (&self.client, &self.cached) {
            (Some(_), _) => self.reploff,
            (None, Some(c)) => c.offset,
            (None, None) => 1,
        };
        let read_offset = offset
            + if up {
                (self.rbuf.len() - self.applied) as u64
            } else {
                0
            };
        let _ = write!(
            w,
            "master_host:{host}\r\nmaster_port:{port}\r\nmaster_link_status:{}\r\nmaster_last_io_seconds_ago:{last_io}\r\nmaster_sync_in_progress:{}\r\nslave_read_repl_offset:{read_offset}\r\nslave_repl_offset:{offset}\r\n",
            if up { "up" } else { "down" },
            in_sync as u8,
        );
        if let Some(t) = self.transfer.as_ref().filter(|_| in_sync) {
            // As Redis's repl_transfer_size: -1 before the header, 0 for a diskless payload.
            let total = match t.header {
                Some(Header::Len(n)) => n as i64,
                Some(Header::Eof(_)) => 0,
                None => -1,
            };
            let perc = if total != 0 {
                t.read as f64 * 100.0 / total as f64
            } else {
                0.0
            };
            let _ = write!(
                w,
                "master_sync_total_bytes:{total}\r\nmaster_sync_read_bytes:{}\r\nmaster_sync_left_bytes:{}\r\nmaster_sync_perc:{perc:.2}\r\nmaster_sync_last_io_seconds_ago:{}\r\n",
                t.read,
                total - t.read as i64,
                t.last_io.elapsed().as_secs()
            );
        }
        if !up {
            let down = self.down_since.map_or(-1, |t| t.elapsed().as_secs() as i64);
            let _ = write!(w, "master_link_down_since_seconds:{down}\r\n");
        }
        let _ = write!(
            w,
            "slave_priority:{}\r\nslave_read_only:{}\r\nreplica_announced:{}\r\n",
            server.config.repl.priority,
            server.config.repl.read_only as u8,
            server.config.repl.announced as u8
        );
    }
}

/// REPLICAOF host port: this server replicates `host:port` from now on (the connection is
/// made by the next round of the loop). A master keeps its history as the cached master, so
/// that it can continue it with PSYNC if the new master was its replica.
pub fn set_master(server: &mut Server, host: String, port: u16) {
    let was_master = server.replication.master_addr.is_none();
    let mut link = Link::new();
    if was_master {
        link.cached = Some(Cached {
            replid: server.replication.replid.clone(),
            offset: server.replication.offset(),
            db: 0,
        });
    } else if let Some(old) = server.replication.link.take() {
        link.cached = old.cached_now();
    }
    crate::log::set_role('S');
    notice!("Connecting to MASTER {host}:{port}");
    server.replication.master_addr = Some((host, port));
    link.down_since = Some(Instant::now());
    server.replication.link = Some(link);
    super::update_propagation(server);
    crate::service::process::apply_oom_score(&server.config.process, true);
}

/// REPLICAOF NO ONE: this server is a master again; its history continues under a new id
/// (the old one stays valid up to here, for its replicas' PSYNC).
pub fn unset_master(server: &mut Server) {
    if server.replication.master_addr.take().is_none() {
        return;
    }
    server.replication.link = None;
    crate::log::set_role('M');
    super::shift_id(server);
    super::master::disconnect_replicas(server);
    server.propagation.reselect();
    super::update_propagation(server);
    crate::service::process::apply_oom_score(&server.config.process, false);
}

impl Link {
    /// The master to continue with after losing it now.
    fn cached_now(&self) -> Option<Cached> {
        match (&self.client, &self.initial) {
            (Some(c), _) => Some(Cached {
                replid: String::new(),
                offset: self.reploff,
                db: c.db,
            }),
            _ => self.cached.clone(),
        }
    }
}

/// A client pause became lighter: the master's stream it held is applied again at the
/// next round (where it may be held again).
pub fn pause_lighter(server: &mut Server) {
    if let Some(link) = server.replication.link.as_mut() {
        link.pending_drive |= std::mem::take(&mut link.held);
    }
}

/// Per-iteration work: connect when due, drive a link that asked for it, send an ACK that
/// was asked for.
pub fn tick(server: &mut Server, registry: &mio::Registry) {
    let Some(link) = server.replication.link.as_mut() else {
        return;
    };
    // As Redis, which loads its snapshot before it connects: the history to continue
    // comes from it.
    let loading_own = server.loading.is_some() && link.state != State::Loading;
    if link.state == State::Connect
        && !loading_own
        && link
            .last_attempt
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
    {
        connect(server, registry);
    }
    let link = server.replication.link.as_mut().expect("checked");
    if link.async_load.as_ref().is_some_and(|l| l.is_done()) {
        let load = link.async_load.take().expect("checked");
        finish_load(server, load);
    }
    let Some(link) = server.replication.link.as_mut() else {
        return;
    };
    if std::mem::take(&mut link.pending_drive) || server.replication.ack_requested {
        drive(server);
    }
}

/// Periodic work: an ACK each second, timeouts.
pub fn cron(server: &mut Server, registry: &mio::Registry) {
    let timeout = Duration::from_secs(server.config.repl.timeout);
    let Some(link) = server.replication.link.as_mut() else {
        return;
    };
    let stalled = match link.state {
        State::Connecting | State::Handshake(_) => {
            (link.last_io.elapsed() > timeout).then_some("Timeout connecting to the MASTER...")
        }
        State::Transfer => link
            .transfer
            .as_ref()
            .filter(|t| t.last_io.elapsed() > timeout)
            .map(|_| "Timeout receiving bulk data from MASTER... If the problem persists try to set the 'repl-timeout' parameter in redis.conf to a larger value."),
        State::Connected => (link.last_io.elapsed() > timeout)
            .then_some("MASTER timeout: no data nor PING received..."),
        State::Connect | State::Loading => None,
    };
    if let Some(why) = stalled {
        warning!("{why}");
        let mut link = server.replication.link.take().expect("checked");
        link.fail(server);
        server.replication.link = Some(link);
        return;
    }
    if link.state == State::Connected
        && link
            .last_ack
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
    {
        server.replication.ack_requested = true;
    }
    tick(server, registry);
}

/// Starts the non-blocking connection to the master.
fn connect(server: &mut Server, registry: &mio::Registry) {
    use std::net::ToSocketAddrs;
    let Some((host, port)) = server.replication.master_addr.clone() else {
        return;
    };
    let link = server.replication.link.as_mut().expect("a link");
    link.last_attempt = Some(Instant::now());
    let addr = match (host.as_str(), port).to_socket_addrs() {
        Ok(mut addrs) => addrs.next(),
        Err(e) => {
            warning!("Unable to connect to MASTER: {e}");
            return;
        }
    };
    let Some(addr) = addr else {
        warning!("Unable to connect to MASTER: no address for {host}");
        return;
    };
    let source = &server.config.repl.bind_source_addr;
    let mut stream = match crate::net::connect::connect_from(addr, source) {
        Ok(s) => s,
        Err(e) => {
            warning!("Unable to connect to MASTER: {e}");
            return;
        }
    };
    let interest = mio::Interest::READABLE | mio::Interest::WRITABLE;
    if let Err(e) = registry.register(
        &mut stream,
        goblin_evloop::source(super::LINK_SOURCE),
        interest,
    ) {
        warning!("Unable to connect to MASTER: {e}");
        return;
    }
    let _ = stream.set_nodelay(true);
    link.stream = Some(stream);
    link.state = State::Connecting;
    link.last_io = Instant::now();
    link.rbuf.clear();
    link.wbuf.clear();
    notice!("MASTER <-> REPLICA sync started");
}

/// A readiness event on the link (or a round that asked for one): read, act, write.
pub fn drive(server: &mut Server) {
    let Some(mut link) = server.replication.link.take() else {
        return;
    };
    let stepped = link.step(server);
    server.stats.net_repl_input_bytes += std::mem::take(&mut link.uncounted);
    if let Err(why) = stepped {
        warning!("{why}");
        link.fail(server);
    }
    if std::mem::take(&mut server.replication.ack_requested) && link.connected() {
        link.send_ack(server.aof.fsynced_reploff);
    }
    if link.flush().is_err() {
        warning!("Error writing to MASTER");
        link.fail(server);
    }
    // REPLICAOF may have ended or replaced the link while its commands ran.
    if server.replication.master_addr.is_some() && server.replication.link.is_none() {
        server.replication.link = Some(link);
    }
}

/// CLIENT KILL TYPE master: drops the link (it reconnects and continues with PSYNC).
/// Returns how many connections were closed.
pub fn kill_link(server: &mut Server) -> usize {
    let Some(mut link) = server.replication.link.take() else {
        return 0;
    };
    let killed = usize::from(link.connected());
    if killed > 0 {
        link.fail(server);
    }
    server.replication.link = Some(link);
    killed
}

/// The start-up loader finished the master's snapshot: install it and start the stream, or
/// try again from the start.
pub fn finish_load(server: &mut Server, load: crate::rdb::loading::Loading) {
    let started = load.started;
    let temp = load.path.clone();
    let socket = load.socket;
    let mut result = load.finish();
    if server
        .replication
        .link
        .as_ref()
        .is_some_and(|l| l.state != State::Loading)
    {
        // The link failed while the payload arrived: what loaded is not all of it.
        result = Err(crate::rdb::read::LoadError {
            kind: crate::rdb::read::ErrorKind::Io,
            offset: 0,
            message: "the link to the master failed during the transfer".into(),
        });
    }
    let from = if socket { "socket" } else { "disk" };
    let renamed = match &result {
        _ if socket => Ok(()),
        Ok(Some(_)) => {
            let target = server.config.dir.join(&server.config.dbfilename);
            std::fs::rename(&temp, &target).map_err(|e| {
                warning!(
                    "Failed trying to rename the temp DB into {}: {e}",
                    server.config.dbfilename
                )
            })
        }
        _ => Err(()),
    };
    if renamed.is_err() {
        let _ = std::fs::remove_file(&temp);
    } else if !socket {
        let target = server.config.dir.join(&server.config.dbfilename);
        super::del_sync_files::received_snapshot_loaded(server, &target);
    }
    // The master's function libraries replace this server's with its data (a library
    // that does not load fails the load: the old data and libraries stay).
    if let Ok(Some((_, report))) = &result {
        if let Err(e) = server.snapshots().install_functions(&report.functions) {
            warning!("Failed loading library: {e}");
            result = Ok(None);
        }
    }
    let Some(mut link) = server.replication.link.take() else {
        // REPLICAOF NO ONE came during the load: the data is kept.
        if let Ok(Some((dbs, _))) = result {
            server
                .keyspace
                .replace_all(dbs, Free::lazily_if(server.config.replica_lazy_flush));
        }
        return;
    };
    let (dbs, report) = match result {
        Ok(Some(loaded)) => loaded,
        Ok(None) => {
            warning!(
                "Failed trying to load the MASTER synchronization DB from {from}, check server logs."
            );
            if link.state == State::Loading {
                link.fail(server);
            }
            server.replication.link = Some(link);
            return;
        }
        Err(e) => {
            use crate::rdb::read::ErrorKind;
            if socket && matches!(e.kind, ErrorKind::Io | ErrorKind::Truncated) {
                // Redis's words for a payload cut short: the link failed, not the data.
                warning!(
                    "Internal error in RDB reading offset {}: {}. Failure loading rdb format from socket, assuming connection error, resuming operation.",
                    e.offset,
                    e.message
                );
            }
            warning!("Failed trying to load the MASTER synchronization DB from {from}: {e}");
            if link.state == State::Loading {
                link.fail(server);
            }
            server.replication.link = Some(link);
            return;
        }
    };
    Link::attach_to_new_master(&mut link.cached, server);
    server
        .keyspace
        .replace_all(dbs, Free::lazily_if(server.config.replica_lazy_flush));
    server.rdb.last_load_keys = report.keys;
    server.rdb.last_load_expired = report.expired_skipped;
    notice!(
        "MASTER <-> REPLICA sync: Finished with success ({:.3} seconds)",
        started.elapsed().as_secs_f64()
    );
    let db = report
        .aux
        .iter()
        .find(|(k, _)| k == "repl-stream-db")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .filter(|&db| db < server.config.databases)
        .unwrap_or(0);
    let (replid, offset) = link.initial.take().unwrap_or_default();
    let r = &mut server.replication;
    r.replid = replid;
    r.replid2 = "0".repeat(40);
    r.second_offset = -1;
    r.backlog = Some(super::backlog::Backlog::new(
        server.config.repl.backlog_size as usize,
        offset,
    ));
    // Before the first ACK: its FACK must not claim the old history's offset.
    crate::aof::restart_after_sync(server);
    link.start_stream(server, offset, db);
    if link.eof_form {
        // The master sends the stream only after this first ACK (it read up to the mark).
        link.send_ack(server.aof.fsynced_reploff);
    }
    link.pending_drive = true;
    server.replication.link = Some(link);
}

impl Link {
    /// Closes the connection; a link that was streaming keeps its master cached for PSYNC.
    fn fail(&mut self, server: &mut Server) {
        if matches!(self.state, State::Transfer | State::Loading) {
            // A sync cut short is tried again at once, as Redis's
            // cancelReplicationHandshake(reconnect) does.
            self.last_attempt = None;
            if let Some((host, port)) = &server.replication.master_addr {
                notice!("Reconnecting to MASTER {host}:{port} after failure");
            }
        }
        if self.state == State::Connected {
            // A link lost while streaming is tried again at once (the backlog may not keep
            // the missing part for long); a failed attempt waits for the next second.
            self.last_attempt = None;
            notice!("Connection with master lost.");
            notice!("Caching the disconnected master state.");
            if let Some(mut c) = self.client.take() {
                // A transaction cut by the disconnection is dropped: the offset is before it,
                // so the master sends it again.
                c.multi = None;
                self.cached = Some(Cached {
                    replid: server.replication.replid.clone(),
                    offset: self.reploff,
                    db: c.db,
                });
            }
        }
        if let Some(t) = self.transfer.take() {
            if t.file.is_some() {
                drop(t.file);
                let _ = std::fs::remove_file(&t.path);
            }
        }
        self.client = None;
        self.stream = None;
        self.state = State::Connect;
        self.rbuf = Vec::new();
        self.wbuf.clear();
        self.rpos = 0;
        self.applied = 0;
        self.parser = RequestParser::default();
        self.down_since.get_or_insert_with(Instant::now);
    }

    /// Queues a command for the master.
    fn send(&mut self, argv: &[&[u8]]) {
        crate::propagate::encode(&mut self.wbuf, argv);
    }

    /// REPLCONF ACK <offset>, with FACK <aofoffset> when this server's AOF is on
    /// (`fsynced` is its fsynced_reploff, -1 when off), as Redis 7.2's replicas send it.
    fn send_ack(&mut self, fsynced: i64) {
        let offset = self.reploff.to_string();
        if fsynced == -1 {
            self.send(&[b"REPLCONF", b"ACK", offset.as_bytes()]);
        } else {
            let fack = fsynced.to_string();
            self.send(&[
                b"REPLCONF",
                b"ACK",
                offset.as_bytes(),
                b"FACK",
                fack.as_bytes(),
            ]);
        }
        self.last_ack = Some(Instant::now());
    }

    /// Writes what the socket takes.
    fn flush(&mut self) -> std::io::Result<()> {
        let Some(stream) = self.stream.as_mut() else {
            self.wbuf.clear();
            return Ok(());
        };
        let mut written = 0;
        while written < self.wbuf.len() {
            match goblin_evloop::write_some(stream, &self.wbuf[written..])? {
                Some(n) => written += n,
                None => break,
            }
        }
        self.wbuf.drain(..written);
        Ok(())
    }

    /// Reads what the socket holds into `rbuf`, at most `limit` bytes: how many, and whether
    /// the socket is drained (readiness is edge-triggered: a caller that stops before must
    /// come back without waiting for an event). Err when the master closed the connection.
    fn read_some(&mut self, limit: usize) -> Result<(usize, bool), String> {
        let Some(stream) = self.stream.as_mut() else {
            return Ok((0, true));
        };
        let mut got = 0;
        let mut buf = [0u8; READ_CHUNK];
        let mut drained = false;
        while got < limit {
            match stream.read(&mut buf) {
                Ok(0) => return Err("Connection with master lost (closed by the master).".into()),
                Ok(n) => {
                    self.rbuf.extend_from_slice(&buf[..n]);
                    self.uncounted += n as u64;
                    got += n;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    drained = true;
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("Error reading from MASTER: {e}")),
            }
        }
        if got > 0 {
            self.last_io = Instant::now();
        }
        Ok((got, drained))
    }

    /// Does everything the link's state allows now.
    fn step(&mut self, server: &mut Server) -> Result<(), String> {
        loop {
            match self.state {
                State::Connect | State::Loading => return Ok(()),
                State::Connecting => {
                    let stream = self.stream.as_mut().expect("connecting");
                    if let Ok(Some(e)) | Err(e) = stream.take_error() {
                        return Err(format!("Error condition on socket for SYNC: {e}"));
                    }
                    match stream.peer_addr() {
                        Ok(_) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotConnected => return Ok(()),
                        Err(e) => return Err(format!("Error condition on socket for SYNC: {e}")),
                    }
                    notice!("Non blocking connect for SYNC fired the event.");
                    self.send(&[b"PING"]);
                    self.state = State::Handshake(Step::Pong);
                    self.flush()
                        .map_err(|e| format!("Error writing to MASTER: {e}"))?;
                }
                State::Handshake(step) => {
                    self.read_some(usize::MAX)?;
                    let Some((text, used)) = payload::line(&self.rbuf) else {
                        return Ok(());
                    };
                    let text = text.to_vec();
                    self.rbuf.drain(..used);
                    if text.is_empty() {
                        // A newline: the master keeps the link alive while it prepares.
                        continue;
                    }
                    self.handshake(server, step, &text)?;
                }
                State::Transfer => {
                    let interval = server.config.loading_events_interval as usize;
                    let (_, drained) = self.read_some(interval)?;
                    if self.transfer_step(server)? {
                        continue;
                    }
                    // loading-process-events-interval-bytes read: the other clients are
                    // served before the rest is (the loop comes back at once).
                    self.pending_drive = !drained;
                    return Ok(());
                }
                State::Connected => {
                    let (_, drained) = self.read_some(READ_CHUNK * 16)?;
                    self.apply(server)?;
                    if drained || self.state != State::Connected {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Handles the reply of one handshake step and sends the next command.
    fn handshake(&mut self, server: &mut Server, step: Step, reply: &[u8]) -> Result<(), String> {
        let text = String::from_utf8_lossy(reply).into_owned();
        let error = text.starts_with('-');
        match step {
            Step::Pong => {
                let tolerated = ["-NOAUTH", "-NOPERM", "-ERR operation not permitted"]
                    .iter()
                    .any(|p| text.starts_with(p));
                if error && !tolerated {
                    return Err(format!("Error reply to PING from master: '{text}'"));
                }
                notice!("Master replied to PING, replication can continue...");
                let c = &server.config.repl;
                if !c.masterauth.is_empty() {
                    let (user, pass) = (c.masteruser.clone(), c.masterauth.clone());
                    if user.is_empty() {
                        self.send(&[b"AUTH", &pass]);
                    } else {
                        self.send(&[b"AUTH", &user, &pass]);
                    }
                    self.state = State::Handshake(Step::Auth);
                } else {
                    self.send_port(server);
                }
            }
            Step::Auth => {
                if error {
                    return Err(format!("Unable to AUTH to MASTER: {text}"));
                }
                self.send_port(server);
            }
            Step::Port => {
                if error {
                    notice!(
                        "(Non critical) Master does not understand REPLCONF listening-port: {text}"
                    );
                }
                let ip = server.config.repl.announce_ip.clone();
                if ip.is_empty() {
                    self.send_capa();
                } else {
                    self.send(&[b"REPLCONF", b"ip-address", ip.as_bytes()]);
                    self.state = State::Handshake(Step::Ip);
                }
            }
            Step::Ip => {
                if error {
                    notice!(
                        "(Non critical) Master does not understand REPLCONF ip-address: {text}"
                    );
                }
                self.send_capa();
            }
            Step::Capa => {
                if error {
                    notice!("(Non critical) Master does not understand REPLCONF capa: {text}");
                }
                match &self.cached {
                    Some(c) => {
                        let replid = if c.replid.is_empty() {
                            server.replication.replid.clone()
                        } else {
                            c.replid.clone()
                        };
                        let offset = (c.offset + 1).to_string();
                        notice!("Trying a partial resynchronization (request {replid}:{offset}).");
                        if super::failover::handing_over(server) {
                            self.send(&[
                                b"PSYNC",
                                replid.as_bytes(),
                                offset.as_bytes(),
                                b"FAILOVER",
                            ]);
                        } else {
                            self.send(&[b"PSYNC", replid.as_bytes(), offset.as_bytes()]);
                        }
                    }
                    None => {
                        notice!("Partial resynchronization not possible (no cached master)");
                        self.send(&[b"PSYNC", b"?", b"-1"]);
                    }
                }
                self.state = State::Handshake(Step::Psync);
            }
            Step::Psync => self.psync_reply(server, reply)?,
        }
        self.flush()
            .map_err(|e| format!("Error writing to MASTER: {e}"))
    }

    fn send_capa(&mut self) {
        self.send(&[b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"]);
        self.state = State::Handshake(Step::Capa);
    }

    /// REPLCONF listening-port: replica-announce-port, else the port this server serves.
    fn send_port(&mut self, server: &Server) {
        let announced = server.config.repl.announce_port;
        let port = if announced != 0 {
            announced
        } else {
            server
                .listening
                .first()
                .map_or(server.config.port, |a| a.port())
        }
        .to_string();
        self.send(&[b"REPLCONF", b"listening-port", port.as_bytes()]);
        self.state = State::Handshake(Step::Port);
    }

    fn psync_reply(&mut self, server: &mut Server, reply: &[u8]) -> Result<(), String> {
        let answer = payload::psync_reply(reply);
        let accepted = matches!(answer, PsyncReply::Full { .. } | PsyncReply::Continue(_));
        super::failover::psync_answered(server, accepted);
        match answer {
            PsyncReply::Full { replid, offset } => {
                notice!("Full resync from master: {replid}:{offset}");
                let diskless = super::socket_load::mode(server, &replid);
                self.initial = Some((replid, offset));
                let (file, path) = if diskless.is_some() {
                    (None, PathBuf::new())
                } else {
                    let path = server.config.dir.join(format!(
                        "temp-{}.{}.rdb",
                        crate::clock::unix_ms() / 1000,
                        std::process::id()
                    ));
                    let file = File::create(&path).map_err(|e| {
                        format!(
                        "Opening the temp file needed for MASTER <-> REPLICA synchronization: {e}"
                    )
                    })?;
                    (Some(file), path)
                };
                self.transfer = Some(Transfer {
                    header: None,
                    file,
                    path,
                    read: 0,
                    scanner: None,
                    last_io: Instant::now(),
                    diskless,
                    feed: None,
                });
                self.state = State::Transfer;
                Ok(())
            }
            PsyncReply::Continue(new_id) => {
                notice!("Successful partial resynchronization with master.");
                let cached = self.cached.take().unwrap_or(Cached {
                    replid: String::new(),
                    offset: server.replication.offset(),
                    db: 0,
                });
                if let Some(id) = new_id.filter(|id| *id != server.replication.replid) {
                    let r = &mut server.replication;
                    r.replid2 = std::mem::replace(&mut r.replid, id);
                    r.second_offset = r.offset() as i64 + 1;
                    notice!("Master replication ID changed to {}", r.replid);
                    super::master::disconnect_replicas(server);
                }
                if server.replication.backlog.is_none() {
                    let size = server.config.repl.backlog_size as usize;
                    server.replication.backlog =
                        Some(super::backlog::Backlog::new(size, cached.offset));
                }
                notice!("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
                self.start_stream(server, cached.offset, cached.db);
                Ok(())
            }
            PsyncReply::TryLater(t) => Err(format!(
                "Master is currently unable to PSYNC but should be in the future: {t}"
            )),
            PsyncReply::Error(t) => Err(format!("Unexpected reply to PSYNC from master: {t}")),
        }
    }

    /// Receives the payload; true when done (the load started).
    fn transfer_step(&mut self, server: &mut Server) -> Result<bool, String> {
        let t = self.transfer.as_mut().expect("transferring");
        if t.header.is_none() {
            let Some((header, used)) = payload::header(&self.rbuf)? else {
                // Only newlines so far (the master is making the snapshot).
                return Ok(false);
            };
            self.rbuf.drain(..used);
            match &header {
                Header::Len(n) => {
                    notice!("MASTER <-> REPLICA sync: receiving {n} bytes from master to disk")
                }
                Header::Eof(mark) => {
                    notice!("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to disk");
                    t.scanner = Some(EofScanner::new(mark.clone()));
                }
            }
            self.eof_form = matches!(header, Header::Eof(_));
            if let Some(async_load) = t.diskless {
                let total = match header {
                    Header::Len(n) => n,
                    Header::Eof(_) => 0,
                };
                if server.config.repl.diskless_load == super::config::DisklessLoad::OnEmptyDb {
                    // swapdb keeps the old data, and this history, until its load succeeded.
                    Link::attach_to_new_master(&mut self.cached, server);
                }
                // No child may write over what is loaded, nor save the old data afterwards.
                server.snapshots().kill_child();
                crate::aof::rewrite::kill_child(server);
                notice!("MASTER <-> REPLICA sync: Loading DB in memory");
                let (load, feed) =
                    super::socket_load::start(total, server.snapshots().load_options());
                t.feed = Some(feed);
                if async_load {
                    self.async_load = Some(load);
                } else {
                    server.loading = Some(load);
                }
            }
            t.header = Some(header);
        }
        if self.rbuf.is_empty() {
            return Ok(false);
        }
        t.last_io = Instant::now();
        let mut data = std::mem::take(&mut self.rbuf);
        let (write, rest, done) = match (&t.header, t.scanner.as_mut()) {
            (_, Some(scanner)) => {
                let (write, rest) = scanner.feed(&data);
                let done = rest.is_some();
                (write, rest.unwrap_or_default(), done)
            }
            (Some(Header::Len(n)), None) => {
                let take = ((n - t.read) as usize).min(data.len());
                let done = t.read + take as u64 == *n;
                let rest = data.split_off(take);
                (data, rest, done)
            }
            _ => unreachable!("a header was read"),
        };
        t.read += write.len() as u64;
        self.rbuf = rest;
        if let Some(feed) = &t.feed {
            // A loader that stopped (a bad payload) reports it when it is collected.
            let _ = feed.send(write);
            if done {
                // The sender dropped: the loader reads the end of the snapshot.
                self.transfer = None;
                self.state = State::Loading;
            }
            return Ok(done);
        }
        let file = t.file.as_mut().expect("open");
        file.write_all(&write)
            .map_err(|e| format!("Write error writing to the DB on disk: {e}"))?;
        if !done {
            return Ok(false);
        }
        let t = self.transfer.as_mut().expect("transferring");
        let file = t.file.take().expect("open");
        file.sync_all()
            .map_err(|e| format!("Failed trying to sync the temp DB to disk: {e}"))?;
        drop(file);
        // Loaded from the temp file, which becomes the snapshot only once it loaded: a
        // payload this server cannot load does not replace its dump.rdb.
        let target = t.path.clone();
        self.transfer = None;
        Link::attach_to_new_master(&mut self.cached, server);
        // No child may write over what is loaded, nor save the old data afterwards.
        server.snapshots().kill_child();
        crate::aof::rewrite::kill_child(server);
        notice!("MASTER <-> REPLICA sync: Flushing old data");
        notice!("MASTER <-> REPLICA sync: Loading DB in memory");
        let opts = server.snapshots().load_options();
        match crate::rdb::loading::Loading::start(target, opts) {
            Some(load) => {
                server.loading = Some(load);
                self.state = State::Loading;
                Ok(true)
            }
            None => Err("Failed trying to load the MASTER synchronization DB from disk".into()),
        }
    }

    /// A full sync's data is about to replace this server's (its payload arrived, or is
    /// loaded as it arrives into the emptied keyspace, or its swapdb load succeeded): the
    /// cached master is of no more use, and this server's replicas must sync again from
    /// the new history (Redis's replicationAttachToNewMaster). Until then a sync that fails
    /// leaves both, so that the replicas stay and PSYNC with the old master still works.
    fn attach_to_new_master(cached: &mut Option<Cached>, server: &mut Server) {
        *cached = None;
        super::master::disconnect_replicas(server);
        server.replication.backlog = None;
    }

    /// The stream starts (after a load or a +CONTINUE) at `offset`, in database `db`.
    fn start_stream(&mut self, server: &mut Server, offset: u64, db: usize) {
        let stream = self.stream.as_ref();
        let peer = stream
            .and_then(|s| s.peer_addr().ok())
            .unwrap_or_else(|| std::net::SocketAddr::from(([0, 0, 0, 0], 0)));
        let local = stream.and_then(|s| s.local_addr().ok()).unwrap_or(peer);
        let fd = stream.map_or(-1, |s| {
            use std::os::fd::AsRawFd;
            s.as_raw_fd()
        });
        let id = server.clients.new_id();
        let mut client = Client::new(id, fd, peer.into(), local.into(), true);
        client.repl_role = ReplRole::Master;
        client.db = db;
        self.client = Some(Box::new(client));
        self.reploff = offset;
        self.state = State::Connected;
        self.down_since = None;
        self.last_io = Instant::now();
        self.rpos = 0;
        self.applied = 0;
        self.parser = RequestParser::default();
    }

    /// Runs the complete commands of `rbuf` as the master client and feeds the applied
    /// bytes on (to this server's backlog and replicas).
    fn apply(&mut self, server: &mut Server) -> Result<(), String> {
        let mut client = self.client.take().expect("connected");
        let mut scratch = Vec::new();
        let limits = Limits {
            max_bulk: i64::MAX,
            authenticated: true,
        };
        let mut result = Ok(());
        loop {
            match self.parser.parse(&self.rbuf, self.rpos, limits) {
                Ok(Parsed::Incomplete) => break,
                Ok(Parsed::Request { end }) => {
                    let args: Vec<&[u8]> = match self.parser.inline_args() {
                        Some(inline) => inline.iter().map(Vec::as_slice).collect(),
                        None => self
                            .parser
                            .args()
                            .iter()
                            .map(|r| &self.rbuf[r.clone()])
                            .collect(),
                    };
                    if !args.is_empty()
                        && crate::commands::pause::holds_master_command(server, &client, &args)
                    {
                        // Parsed again when the pause lifts ([`pause_lighter`]).
                        self.held = true;
                        break;
                    }
                    self.rpos = end;
                    if !args.is_empty() {
                        // As Redis's replicas: the master's commands see its keys as it
                        // does, expired or not here; its DELs remove them.
                        server.keyspace.pause_expiry(true);
                        crate::commands::unreplied::execute(
                            server,
                            &mut client,
                            &mut scratch,
                            &args,
                            None,
                        );
                        server.keyspace.pause_expiry(false);
                        scratch.clear();
                    }
                    if client.multi.is_none() {
                        self.applied = self.rpos;
                    }
                }
                Err(e) => {
                    result = Err(format!("Protocol error from MASTER: {}", e.0));
                    break;
                }
            }
        }
        self.client = Some(client);
        let n = self.applied;
        if n > 0 {
            super::feed(server, &self.rbuf[..n]);
            self.reploff += n as u64;
            self.rbuf.drain(..n);
            self.rpos -= n;
            self.parser.shift(n);
            self.applied = 0;
        }
        result
    }
}

/// Whether the master's snapshot is what the running load reads.
pub fn loading_sync(server: &Server) -> bool {
    server.loading.as_ref().is_some_and(|l| l.socket)
        || server.replication.link.as_ref().is_some_and(Link::loading)
}

/// Whether a swapdb load runs (INFO async_loading).
pub fn async_loading(server: &Server) -> bool {
    server
        .replication
        .link
        .as_ref()
        .is_some_and(Link::async_loading)
}
