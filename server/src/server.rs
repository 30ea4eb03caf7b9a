//! Server state shared by all commands: configuration, the keyspace, statistics, the
//! client registry, the slow log and the snapshot state.

use crate::clients::Clients;
use crate::config::Config;
use crate::keyspace::Keyspace;
use crate::stats::Stats;
use std::time::Instant;

/// The whole server.
pub struct Server {
    /// Runtime configuration.
    pub config: Config,
    /// The databases with their expiry, WATCH and waited-on keys.
    pub keyspace: Keyspace,
    /// Counters for INFO.
    pub stats: Stats,
    /// The connected clients; the one running a command is leased out while it runs.
    pub clients: Clients,
    /// Who is subscribed to which channel, pattern and shard channel.
    pub pubsub: crate::pubsub::Registry,
    /// The running client's own pub/sub messages, held until its reply is written.
    pub pushes: crate::pubsub::PendingPushes,
    /// The object cache, when enabled (INFO objcache).
    pub store: Option<goblin_objcache::StoreHandle>,
    /// SLOWLOG entries.
    pub slowlog: crate::commands::SlowLog,
    /// Start time.
    pub started: Instant,
    /// Random run id (INFO run_id).
    pub run_id: String,
    /// Snapshot state: last save, BGSAVE child, save statistics.
    pub rdb: crate::rdb::SaveState,
    /// A shutdown is done (saved if it had to): the loop stops at the end of its iteration.
    pub shutdown: bool,
    /// A shutdown waiting for lagging replicas (SHUTDOWN, SIGTERM, SIGINT).
    pub shutdown_pending: Option<crate::service::shutdown::Pending>,
    /// DEBUG PAUSE-CRON: the periodic work (Redis's serverCron: expiry, snapshots, the
    /// AOF, replication, idle clients, signalled and pending shutdowns) is skipped.
    pub pause_cron: bool,
    /// The start-up load, while it runs.
    pub loading: Option<crate::rdb::loading::Loading>,
    /// The memory figure, eviction pool and evicted key count.
    pub memory: crate::memory::MemoryState,
    /// The addresses the server listens on, in the event loop's order.
    pub listening: Vec<std::net::SocketAddr>,
    /// Client-side caching: who read which key, the BCAST prefixes.
    pub tracking: crate::tracking::Tracking,
    /// Listeners CONFIG SET port/bind opened, for the event loop to switch to.
    pub relisten: Option<Vec<goblin_evloop::Listen>>,
    /// The stream of commands that replays the changes (for the AOF).
    pub propagation: crate::propagate::Propagation,
    /// The append-only file.
    pub aof: crate::aof::Aof,
    /// The Lua interpreter, the script cache and the script running now.
    pub scripting: crate::scripting::Scripting,
    /// MIGRATE's cached connections to other servers.
    pub migrate: crate::migrate::Sockets,
    /// The ACL users and log.
    pub acl: crate::acl::Acl,
    /// The clients in MONITOR mode, by id, in the order they started.
    pub monitors: Vec<u64>,
    /// Replication: ids, offsets, backlog, replicas, the link to a master.
    pub replication: crate::replication::Replication,
    /// Cluster mode's state and bus (cluster-enabled yes), else None.
    pub cluster: Option<Box<crate::cluster::Cluster>>,
    /// Client pauses (CLIENT PAUSE, shutdown, failover) and the clients they hold.
    pub pauses: crate::commands::pause::Pauses,
    /// HOTKEYS's tracking session.
    pub hotkeys: crate::hotkeys::Hotkeys,
}

impl Server {
    /// A server with empty databases.
    pub fn new(config: Config) -> Server {
        let mut keyspace = Keyspace::new(config.databases);
        keyspace.set_access_policy(config.memory.access_policy());
        keyspace.set_lazy_removals(config.lazy_removals());
        keyspace.notifier.set_flags(config.notify_keyspace_events);
        crate::latency::set_threshold(config.latency_monitor_threshold);
        let run_id = (0..40)
            .map(|_| char::from_digit((keyspace.random() % 16) as u32, 16).expect("hex digit"))
            .collect();
        let mut acl = crate::acl::Acl::default();
        acl.set_default_password(config.requirepass.as_deref());
        let mut server = Server {
            config,
            keyspace,
            stats: Stats::default(),
            clients: Clients::default(),
            pubsub: Default::default(),
            pushes: Default::default(),
            store: None,
            slowlog: Default::default(),
            started: Instant::now(),
            run_id,
            rdb: crate::rdb::SaveState::new(),
            shutdown: false,
            shutdown_pending: None,
            pause_cron: false,
            loading: None,
            memory: Default::default(),
            listening: Vec::new(),
            tracking: Default::default(),
            relisten: None,
            propagation: Default::default(),
            aof: Default::default(),
            scripting: Default::default(),
            migrate: Default::default(),
            acl,
            monitors: Vec::new(),
            replication: Default::default(),
            cluster: None,
            pauses: Default::default(),
            hotkeys: Default::default(),
        };
        crate::replication::init(&mut server);
        server
    }

    /// Takes what the commands propagated since the last call (and the removals by expiry
    /// and eviction) to its consumers: the AOF's buffer and the replication stream.
    pub fn drain_propagation(&mut self) {
        self.propagate_removals();
        if self.propagation.pending() == 0 {
            return;
        }
        let (stream, replicas) = self.propagation.take();
        crate::aof::append(self, &stream);
        crate::replication::feed_own(self, replicas.as_deref().unwrap_or(&stream));
    }

    /// Whether a start-up load runs (the snapshot's on its thread, or the AOF's replay):
    /// commands without the `loading` flag are refused with -LOADING.
    pub fn is_loading(&self) -> bool {
        self.loading.is_some() || self.aof.progress.is_some()
    }

    /// The cron's frequency: hz, doubled while more than 200 clients a round would be
    /// looked at (up to 500), when dynamic-hz is on (Redis's serverCron).
    pub fn hz(&self) -> u32 {
        const CLIENTS_PER_ROUND: usize = 200;
        const MAX_HZ: u32 = 500;
        let mut hz = self.config.hz.max(1);
        if self.config.dynamic_hz {
            while self.clients.len() / hz as usize > CLIENTS_PER_ROUND && hz < MAX_HZ {
                hz = (hz * 2).min(MAX_HZ);
            }
        }
        hz
    }

    /// Whether a snapshot child runs: a BGSAVE's, or a diskless replication sync's.
    pub fn snapshot_child(&self) -> bool {
        self.rdb.child.is_some() || self.replication.has_child()
    }

    /// The running fork child (a BGSAVE's, an AOF rewrite's or a diskless sync's), if any.
    pub fn child(&self) -> Option<&crate::rdb::Child> {
        let children = [
            &self.rdb.child,
            &self.aof.rewrite.child,
            &self.replication.master.child,
        ];
        children.into_iter().find_map(Option::as_ref)
    }

    /// [`Server::child`], to read what it reported.
    pub fn child_mut(&mut self) -> Option<&mut crate::rdb::Child> {
        let children = [
            &mut self.rdb.child,
            &mut self.aof.rewrite.child,
            &mut self.replication.master.child,
        ];
        children.into_iter().find_map(Option::as_mut)
    }

    /// Propagates the keys expiry and eviction removed outside commands, each deletion on
    /// its own (as Redis's active expiry and eviction do).
    pub fn propagate_removals(&mut self) {
        for removal in self.keyspace.take_removed() {
            self.propagate_removal(removal);
            self.propagation.end_unit(false);
        }
    }

    /// Adds one removal by expiry or eviction to the propagation unit: an UNLINK when its
    /// lazyfree-lazy-expire / lazyfree-lazy-eviction is on, else a DEL (Redis's
    /// propagateDeletion).
    pub fn propagate_removal(&mut self, removal: crate::keyspace::Removal) {
        if let Some(field) = &removal.field {
            // An expired hash field replays as HDEL (Redis's propagateHashFieldDeletion).
            let argv: [&[u8]; 3] = [b"HDEL", &removal.key, field];
            let rewrite = crate::propagate::Rewrite::default();
            return self.propagation.command(removal.db, &argv, true, rewrite);
        }
        let lazy = self.keyspace.removal_is_lazy(removal.cause);
        self.propagation.deletion(removal.db, removal.key, lazy);
    }

    /// The snapshot machinery on this server's keyspace (SAVE, BGSAVE, cron, shutdown).
    pub fn snapshots(&mut self) -> crate::rdb::Snapshots<'_> {
        let repl = crate::replication::persist::save_info(self);
        let loading = self.is_loading();
        crate::rdb::Snapshots {
            repl,
            replica: self.replication.is_replica(),
            state: &mut self.rdb,
            config: &self.config,
            keyspace: &mut self.keyspace,
            loading,
            functions: &mut self.scripting.functions,
            other_child: self.aof.rewriting() || self.replication.has_child(),
        }
    }
}
