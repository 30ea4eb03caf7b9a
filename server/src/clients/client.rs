//! One client's state as commands see it: everything about a client except its socket and
//! buffers (those belong to `net`).

use std::net::SocketAddr;
use std::time::Instant;

/// CLIENT REPLY modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyMode {
    /// Replies are sent.
    On,
    /// No reply is sent until CLIENT REPLY ON.
    Off,
    /// The reply of the next command is dropped (set by CLIENT REPLY SKIP, armed after it).
    SkipNext,
    /// The reply of the current command is dropped.
    Skip,
}

/// A connection's part in replication.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReplRole {
    /// An ordinary client.
    #[default]
    Normal,
    /// A replica of this server (it sent SYNC or PSYNC): it gets the stream, no replies.
    Replica,
    /// This server's master, applying the stream (never in the registry).
    Master,
}

/// A command queued inside MULTI: the resolved command and its arguments.
pub type Queued = (&'static crate::commands::Command, Vec<Vec<u8>>);

/// A client blocked in a blocking pop.
#[derive(Debug, Clone)]
pub struct Blocked {
    /// Database the keys live in.
    pub db: usize,
    /// Keys the client waits on, in the order given.
    pub keys: Vec<Vec<u8>>,
    /// The whole command, re-run when a key becomes ready.
    pub command: Vec<Vec<u8>>,
    /// When the wait ends with a null reply, in Unix milliseconds (None: forever).
    pub deadline_ms: Option<u64>,
}

/// State of one client.
pub struct Client {
    /// CLIENT ID.
    pub id: u64,
    /// Selected database.
    pub db: usize,
    /// Whether HELLO 3 was negotiated.
    pub resp3: bool,
    /// CLIENT SETNAME.
    pub name: Option<Vec<u8>>,
    /// CLIENT SETINFO LIB-NAME.
    pub lib_name: Option<Vec<u8>>,
    /// CLIENT SETINFO LIB-VER.
    pub lib_ver: Option<Vec<u8>>,
    /// Whether the client passed AUTH (or no password is required).
    pub authenticated: bool,
    /// Commands queued after MULTI.
    pub multi: Option<Vec<Queued>>,
    /// Set while EXEC runs its queue: how many commands were queued.
    pub exec_queued: Option<usize>,
    /// A command was refused while queuing: EXEC answers EXECABORT.
    pub multi_failed: bool,
    /// WATCHed keys: database, key, and whether the key was alive when watched.
    pub watched: Vec<(usize, Vec<u8>, bool)>,
    /// CLIENT REPLY state.
    pub reply_mode: ReplyMode,
    /// CLIENT NO-EVICT.
    pub no_evict: bool,
    /// CLIENT NO-TOUCH.
    pub no_touch: bool,
    /// CLIENT TRACKING and CLIENT CACHING state.
    pub tracking: crate::tracking::ClientTracking,
    /// The socket's file descriptor (CLIENT LIST fd=).
    pub fd: i32,
    /// Peer address.
    pub addr: super::ClientAddr,
    /// Local address.
    pub laddr: super::ClientAddr,
    /// When the connection was accepted.
    pub created: Instant,
    /// When the client last sent a command.
    pub last_interaction: Instant,
    /// Name of the last command run ("client|list" style).
    pub last_command: &'static str,
    /// Close the connection once pending replies are written.
    pub close_after_reply: bool,
    /// Set while in a blocking pop.
    pub blocked: Option<Blocked>,
    /// A command held by a client pause, run again when the pause lifts (the client reads
    /// nothing more meanwhile).
    pub postponed: Option<Vec<Vec<u8>>>,
    /// Pub/sub subscriptions.
    pub subscriptions: crate::pubsub::Subscriptions,
    /// The user it runs as (AUTH, HELLO AUTH), with the dispatcher's cached check.
    pub user: crate::acl::ClientUser,
    /// In MONITOR mode: sent a line for every command the server runs.
    pub monitor: bool,
    /// Replica, master, or neither.
    pub repl_role: ReplRole,
    /// Replication offset just after this client's last propagated write (WAIT waits for it).
    pub woff: u64,
    /// Cluster: ASKING (the next command may use an importing slot) and READONLY (reads
    /// served by a replica).
    pub cluster: crate::cluster::ClientFlags,
    /// The reply buffer's size as Redis would have it (CLIENT LIST rbs, rbp).
    pub reply_buffer: super::reply_buffer::ReplyBuffer,
    /// The connection's buffers as the running command sees them (set before each
    /// command: what CLIENT LIST and CLIENT INFO show for the client running them).
    pub io: super::Buffers,
    /// Evicted by `maxmemory-clients` (or handed to a forked Lua debugging session): its
    /// connection closes without writing more.
    pub evicted: bool,
    /// SCRIPT DEBUG YES or SYNC: its next EVAL runs under the Lua debugger.
    pub lua_debug: Option<crate::scripting::ldb::Mode>,
}

impl Client {
    /// A client with no connection (fd -1, addresses 0.0.0.0:0), authenticated: what
    /// scripts, the AOF loader and tests run commands as.
    pub fn internal(id: u64) -> Self {
        let none = super::ClientAddr::Tcp(SocketAddr::from(([0, 0, 0, 0], 0)));
        Client::new(id, -1, none.clone(), none, true)
    }

    /// A fresh client for an accepted connection.
    pub fn new(
        id: u64,
        fd: i32,
        addr: super::ClientAddr,
        laddr: super::ClientAddr,
        authenticated: bool,
    ) -> Self {
        let now = Instant::now();
        Client {
            id,
            db: 0,
            resp3: false,
            name: None,
            lib_name: None,
            lib_ver: None,
            authenticated,
            multi: None,
            exec_queued: None,
            multi_failed: false,
            watched: Vec::new(),
            reply_mode: ReplyMode::On,
            no_evict: false,
            no_touch: false,
            tracking: Default::default(),
            fd,
            addr,
            laddr,
            created: now,
            last_interaction: now,
            last_command: "NULL",
            close_after_reply: false,
            blocked: None,
            postponed: None,
            subscriptions: Default::default(),
            user: crate::acl::ClientUser::default_user(),
            monitor: false,
            repl_role: ReplRole::Normal,
            woff: 0,
            cluster: Default::default(),
            reply_buffer: Default::default(),
            io: Default::default(),
            evicted: false,
            lua_debug: None,
        }
    }

    /// The `flags=` letters of CLIENT LIST.
    pub fn flags(&self) -> String {
        let mut f = String::new();
        // Redis's order: O|S M P x b t R B c e T (a monitor is a replica to Redis: O, not S).
        if self.monitor {
            f.push('O');
        }
        match self.repl_role {
            ReplRole::Replica if !self.monitor => f.push('S'),
            ReplRole::Master => f.push('M'),
            _ => {}
        }
        if self.subscriptions.active() {
            f.push('P');
        }
        if self.multi.is_some() || self.exec_queued.is_some() {
            f.push('x');
        }
        if self.blocked.is_some() || self.postponed.is_some() {
            f.push('b');
        }
        for (set, flag) in [
            (self.tracking.on, 't'),
            (self.tracking.broken_redirect, 'R'),
            (self.tracking.bcast, 'B'),
        ] {
            if set {
                f.push(flag);
            }
        }
        if self.close_after_reply {
            f.push('c');
        }
        if self.addr.is_unix() {
            f.push('U');
        }
        if self.cluster.readonly {
            f.push('r');
        }
        if self.no_evict {
            f.push('e');
        }
        if self.no_touch {
            f.push('T');
        }
        if f.is_empty() {
            f.push('N');
        }
        f
    }
}
