//! The command table: one readable list of name, arity, flags and handler. What COMMAND
//! INFO and COMMAND DOCS describe (key specs, ACL categories, arguments) is data, in meta/.

use super::{
    acl_cmd, blocking, client_cmd, cluster_cmd, connection, debug_cmd, dump, expire, info,
    introspection, keys, latency, lolwut, memory, migrate, module_cmd, monitor, multi, pause,
    persistence, pubsub, server_cmds, tracking, Handler,
};
use hashbrown::HashMap;
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Command flags, as COMMAND INFO reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flags(u32);

impl Flags {
    /// No flag (a container command).
    pub const NONE: Flags = Flags(0);
    /// Changes data.
    pub const WRITE: Flags = Flags(1);
    /// Only reads data.
    pub const READONLY: Flags = Flags(1 << 1);
    /// May grow memory.
    pub const DENYOOM: Flags = Flags(1 << 2);
    /// Administrative.
    pub const ADMIN: Flags = Flags(1 << 3);
    /// Not allowed in scripts.
    pub const NOSCRIPT: Flags = Flags(1 << 4);
    /// Allowed while loading.
    pub const LOADING: Flags = Flags(1 << 5);
    /// Allowed on a stale replica.
    pub const STALE: Flags = Flags(1 << 6);
    /// O(1) or O(log n).
    pub const FAST: Flags = Flags(1 << 7);
    /// Allowed before AUTH.
    pub const NO_AUTH: Flags = Flags(1 << 8);
    /// May block the client.
    pub const BLOCKING: Flags = Flags(1 << 9);
    /// Runs inside MULTI instead of being queued (MULTI, EXEC, DISCARD, WATCH, ...).
    pub const MULTI_CONTROL: Flags = Flags(1 << 10);
    /// Not allowed inside MULTI (COMMAND INFO "no_multi").
    pub const NO_MULTI: Flags = Flags(1 << 11);
    /// Allowed while the server is busy.
    pub const ALLOW_BUSY: Flags = Flags(1 << 12);
    /// Kept out of the slowlog (EXEC logs its own commands).
    pub const SKIP_SLOWLOG: Flags = Flags(1 << 13);
    /// Allowed to a RESP2 client in subscribed mode (the subscribe family, PING, QUIT, RESET).
    pub const SUBSCRIBED_CONTEXT: Flags = Flags(1 << 14);
    /// Shown to MONITOR before it runs, not after (EVAL and its kin: their script's commands
    /// follow them).
    pub const MONITOR_BEFORE: Flags = Flags(1 << 15);
    /// Runs only as its enable-*-command parameter allows (DEBUG, MODULE LOAD/UNLOAD).
    pub const PROTECTED: Flags = Flags(1 << 16);
    /// Refused while a replica loads its master's snapshot with the old data serving
    /// (Redis's no-async-loading): it would save, rewrite, resync or change the role or
    /// the cluster's slots meanwhile.
    pub const NO_ASYNC_LOADING: Flags = Flags(1 << 17);

    /// Whether every flag of `other` is set.
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// Union.
    pub const fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    /// These flags but those of `other`.
    pub const fn without(self, other: Flags) -> Flags {
        Flags(self.0 & !other.0)
    }
}

/// One command or subcommand.
pub struct Command {
    /// Lowercase name; "container|sub" for subcommands.
    pub name: &'static str,
    /// Redis arity: exact count when positive, minimum count when negative (name included).
    pub arity: i32,
    /// Flags.
    pub flags: Flags,
    /// The handler (containers dispatch to a subcommand before it would run).
    pub handler: Handler,
    /// Subcommands of a container command.
    pub subcommands: &'static [Command],
    /// Where the command's counters live in [`crate::stats::Stats`].
    pub slot: StatSlot,
}

impl Default for StatSlot {
    fn default() -> StatSlot {
        StatSlot::new()
    }
}

/// A command's index into the per-command counters, given out on first use, so counting a
/// call is an array access instead of a lookup by name.
pub struct StatSlot(AtomicUsize);

impl StatSlot {
    /// An unassigned slot.
    pub const fn new() -> StatSlot {
        StatSlot(AtomicUsize::new(0))
    }

    /// The slot's index (the same for the life of the process).
    #[inline]
    pub fn get(&self) -> usize {
        static NEXT: AtomicUsize = AtomicUsize::new(1);
        let v = self.0.load(Ordering::Relaxed);
        if v != 0 {
            return v - 1;
        }
        let fresh = NEXT.fetch_add(1, Ordering::Relaxed);
        match self
            .0
            .compare_exchange(0, fresh, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => fresh - 1,
            Err(won) => won - 1,
        }
    }
}

impl Command {
    /// A command without subcommands (the tables of the type modules are lists of these).
    pub const fn simple(name: &'static str, arity: i32, flags: Flags, handler: Handler) -> Command {
        Command {
            name,
            arity,
            flags,
            handler,
            subcommands: &[],
            slot: StatSlot::new(),
        }
    }

    /// The subcommand called `name` (ASCII case ignored).
    pub fn subcommand(&self, name: &[u8]) -> Option<&'static Command> {
        self.subcommands.iter().find(|s| {
            s.name
                .split('|')
                .nth(1)
                .is_some_and(|n| n.as_bytes().eq_ignore_ascii_case(name))
        })
    }

    /// Whether `argc` arguments (name included) satisfy the arity.
    pub fn arity_ok(&self, argc: usize) -> bool {
        let argc = argc as i32;
        if self.arity >= 0 {
            argc == self.arity
        } else {
            argc >= -self.arity
        }
    }
}

const W: Flags = Flags::WRITE;
const R: Flags = Flags::READONLY;
const WD: Flags = Flags::WRITE.with(Flags::DENYOOM);
const WF: Flags = Flags::WRITE.with(Flags::FAST);
const RF: Flags = Flags::READONLY.with(Flags::FAST);
const F: Flags = Flags::FAST;
const NONE: Flags = Flags(0);
const LSF: Flags = Flags::LOADING.with(Flags::STALE).with(Flags::FAST);
const LS: Flags = Flags::LOADING.with(Flags::STALE);
const ADMIN: Flags = Flags::ADMIN
    .with(Flags::NOSCRIPT)
    .with(Flags::LOADING)
    .with(Flags::STALE);
const MC: Flags = Flags::MULTI_CONTROL;
/// Administrative, refused during the start-up load, a replica's async load and on a
/// stale replica (SAVE, BGSAVE, BGREWRITEAOF).
const ADMIN_NOT_LOADING: Flags = Flags::ADMIN
    .with(Flags::NOSCRIPT)
    .with(Flags::NO_ASYNC_LOADING);
/// Administrative, refused during a replica's async load (CLUSTER's slot and membership
/// changes).
const ADMIN_NO_ASYNC: Flags = ADMIN.with(Flags::NO_ASYNC_LOADING);

macro_rules! cmd {
    ($name:literal, $arity:expr, $flags:expr, subs: $subs:expr) => {
        cmd!($name, $arity, $flags, container, subs: $subs)
    };
    ($name:literal, $arity:expr, $flags:expr, $handler:expr, subs: $subs:expr) => {
        Command { name: $name, arity: $arity, flags: $flags, handler: $handler, subcommands: $subs, slot: StatSlot::new() }
    };
    ($name:literal, $arity:expr, $flags:expr, $handler:expr) => {
        Command { name: $name, arity: $arity, flags: $flags, handler: $handler, subcommands: &[], slot: StatSlot::new() }
    };
}

/// Containers never run themselves: the dispatcher picks a subcommand or refuses.
pub fn container(ctx: &mut super::Ctx, args: &[&[u8]]) {
    let name = String::from_utf8_lossy(args[0]).to_ascii_lowercase();
    ctx.error(&crate::errors::wrong_arity(&name));
}

static CLIENT_SUBS: [Command; 18] = [
    cmd!(
        "client|tracking",
        -3,
        Flags::NOSCRIPT.with(LS),
        tracking::tracking
    ),
    cmd!(
        "client|caching",
        3,
        Flags::NOSCRIPT.with(LS),
        tracking::caching
    ),
    cmd!(
        "client|getredir",
        2,
        Flags::NOSCRIPT.with(LS),
        tracking::getredir
    ),
    cmd!(
        "client|trackinginfo",
        2,
        Flags::NOSCRIPT.with(LS),
        tracking::trackinginfo
    ),
    cmd!("client|id", 2, Flags::NOSCRIPT.with(LSF), client_cmd::id),
    cmd!(
        "client|setname",
        3,
        Flags::NOSCRIPT.with(LSF),
        client_cmd::setname
    ),
    cmd!(
        "client|getname",
        2,
        Flags::NOSCRIPT.with(LSF),
        client_cmd::getname
    ),
    cmd!("client|list", -2, ADMIN, client_cmd::list),
    cmd!("client|info", 2, Flags::NOSCRIPT.with(LS), client_cmd::info),
    cmd!("client|kill", -3, ADMIN, client_cmd::kill),
    cmd!(
        "client|setinfo",
        4,
        Flags::NOSCRIPT.with(LSF),
        client_cmd::setinfo
    ),
    cmd!(
        "client|reply",
        3,
        Flags::NOSCRIPT.with(LSF),
        client_cmd::reply
    ),
    cmd!("client|no-evict", 3, ADMIN, client_cmd::no_evict),
    cmd!(
        "client|no-touch",
        3,
        Flags::NOSCRIPT.with(LSF),
        client_cmd::no_touch
    ),
    cmd!("client|unblock", -3, ADMIN, blocking::client_unblock),
    cmd!("client|pause", -3, ADMIN, pause::client_pause),
    cmd!("client|unpause", 2, ADMIN, pause::client_unpause),
    cmd!("client|help", 2, LS, client_cmd::help),
];

/// CLUSTER's subcommands (cluster mode; see `cluster_cmd`).
static CLUSTER_SUBS: [Command; 28] = [
    cmd!(
        "cluster|addslots",
        -3,
        ADMIN_NO_ASYNC,
        cluster_cmd::addslots
    ),
    cmd!(
        "cluster|addslotsrange",
        -4,
        ADMIN_NO_ASYNC,
        cluster_cmd::addslotsrange
    ),
    cmd!(
        "cluster|bumpepoch",
        2,
        ADMIN_NO_ASYNC,
        cluster_cmd::bumpepoch
    ),
    cmd!(
        "cluster|count-failure-reports",
        3,
        ADMIN,
        cluster_cmd::count_failure_reports
    ),
    cmd!(
        "cluster|countkeysinslot",
        3,
        Flags::STALE,
        cluster_cmd::countkeysinslot
    ),
    cmd!(
        "cluster|delslots",
        -3,
        ADMIN_NO_ASYNC,
        cluster_cmd::delslots
    ),
    cmd!(
        "cluster|delslotsrange",
        -4,
        ADMIN_NO_ASYNC,
        cluster_cmd::delslotsrange
    ),
    cmd!(
        "cluster|failover",
        -2,
        ADMIN_NO_ASYNC,
        cluster_cmd::failover
    ),
    cmd!(
        "cluster|flushslots",
        2,
        ADMIN_NO_ASYNC,
        cluster_cmd::flushslots
    ),
    cmd!("cluster|forget", 3, ADMIN_NO_ASYNC, cluster_cmd::forget),
    cmd!(
        "cluster|getkeysinslot",
        4,
        Flags::STALE,
        cluster_cmd::getkeysinslot
    ),
    cmd!("cluster|help", 2, LS, cluster_cmd::help),
    cmd!("cluster|info", 2, Flags::STALE, cluster_cmd::info),
    cmd!("cluster|keyslot", 3, Flags::STALE, cluster_cmd::keyslot),
    cmd!("cluster|links", 2, Flags::STALE, cluster_cmd::links),
    cmd!("cluster|meet", -4, ADMIN_NO_ASYNC, cluster_cmd::meet),
    cmd!("cluster|myid", 2, Flags::STALE, cluster_cmd::myid),
    cmd!("cluster|myshardid", 2, Flags::STALE, cluster_cmd::myshardid),
    cmd!("cluster|nodes", 2, Flags::STALE, cluster_cmd::nodes),
    cmd!("cluster|replicas", 3, ADMIN, cluster_cmd::replicas),
    cmd!(
        "cluster|replicate",
        3,
        ADMIN_NO_ASYNC,
        cluster_cmd::replicate
    ),
    cmd!("cluster|reset", -2, ADMIN, cluster_cmd::reset),
    cmd!(
        "cluster|saveconfig",
        2,
        ADMIN_NO_ASYNC,
        cluster_cmd::saveconfig
    ),
    cmd!(
        "cluster|set-config-epoch",
        3,
        ADMIN_NO_ASYNC,
        cluster_cmd::set_config_epoch
    ),
    cmd!("cluster|setslot", -4, ADMIN_NO_ASYNC, cluster_cmd::setslot),
    cmd!("cluster|shards", 2, Flags::STALE, cluster_cmd::shards),
    cmd!("cluster|slaves", 3, ADMIN, cluster_cmd::replicas),
    cmd!("cluster|slots", 2, LS, cluster_cmd::slots),
];

static CONFIG_SUBS: [Command; 5] = [
    cmd!("config|get", -3, ADMIN, server_cmds::config_get),
    cmd!("config|set", -4, ADMIN, server_cmds::config_set),
    cmd!("config|resetstat", 2, ADMIN, server_cmds::config_resetstat),
    cmd!("config|rewrite", 2, ADMIN, server_cmds::config_rewrite),
    cmd!("config|help", 2, LS, server_cmds::config_help),
];

static COMMAND_SUBS: [Command; 7] = [
    cmd!("command|count", 2, LS, introspection::command_count),
    cmd!("command|getkeys", -4, LS, introspection::command_getkeys),
    cmd!(
        "command|getkeysandflags",
        -4,
        LS,
        introspection::command_getkeysandflags
    ),
    cmd!("command|info", -2, LS, introspection::command_info),
    cmd!("command|docs", -2, LS, introspection::command_docs),
    cmd!("command|list", -2, LS, introspection::command_list),
    cmd!("command|help", 2, LS, introspection::command_help),
];

static OBJECT_SUBS: [Command; 5] = [
    cmd!("object|encoding", 3, R, keys::object_encoding),
    cmd!("object|refcount", 3, R, keys::object_refcount),
    cmd!("object|idletime", 3, R, keys::object_idletime),
    cmd!("object|freq", 3, R, keys::object_freq),
    cmd!("object|help", 2, LS, keys::object_help),
];

static MEMORY_SUBS: [Command; 6] = [
    cmd!("memory|doctor", 2, NONE, memory::doctor),
    cmd!("memory|malloc-stats", 2, NONE, memory::malloc_stats),
    cmd!("memory|purge", 2, NONE, memory::purge),
    cmd!("memory|stats", 2, NONE, memory::stats),
    cmd!("memory|usage", -3, R, keys::memory_usage),
    cmd!("memory|help", 2, LS, memory::help),
];

/// Administrative, run only as enable-module-command allows.
const MODULE_LOADING: Flags = Flags::ADMIN
    .with(Flags::NOSCRIPT)
    .with(Flags::PROTECTED)
    .with(Flags::NO_ASYNC_LOADING);

static MODULE_SUBS: [Command; 5] = [
    cmd!(
        "module|list",
        2,
        Flags::ADMIN.with(Flags::NOSCRIPT),
        module_cmd::list
    ),
    cmd!("module|load", -3, MODULE_LOADING, module_cmd::load),
    cmd!("module|loadex", -3, MODULE_LOADING, module_cmd::load),
    cmd!("module|unload", 3, MODULE_LOADING, module_cmd::unload),
    cmd!("module|help", 2, LS, module_cmd::help),
];

static LATENCY_SUBS: [Command; 7] = [
    cmd!("latency|doctor", 2, ADMIN, latency::doctor),
    cmd!("latency|graph", 3, ADMIN, latency::graph),
    cmd!("latency|history", 3, ADMIN, latency::history),
    cmd!("latency|latest", 2, ADMIN, latency::latest),
    cmd!("latency|reset", -2, ADMIN, latency::reset),
    cmd!("latency|histogram", -2, ADMIN, latency::histogram),
    cmd!("latency|help", 2, LS, latency::help),
];

static SLOWLOG_SUBS: [Command; 4] = [
    cmd!("slowlog|get", -2, ADMIN, server_cmds::slowlog_get),
    cmd!("slowlog|len", 2, ADMIN, server_cmds::slowlog_len),
    cmd!("slowlog|reset", 2, ADMIN, server_cmds::slowlog_reset),
    cmd!("slowlog|help", 2, LS, server_cmds::slowlog_help),
];

static ACL_SUBS: [Command; 13] = [
    cmd!("acl|cat", -2, Flags::NOSCRIPT.with(LS), acl_cmd::cat),
    cmd!("acl|deluser", -3, ADMIN, acl_cmd::deluser),
    cmd!("acl|dryrun", -4, ADMIN, acl_cmd::dryrun),
    cmd!(
        "acl|genpass",
        -2,
        Flags::NOSCRIPT.with(LS),
        acl_cmd::genpass
    ),
    cmd!("acl|getuser", 3, ADMIN, acl_cmd::getuser),
    cmd!("acl|list", 2, ADMIN, acl_cmd::list),
    cmd!("acl|load", 2, ADMIN, acl_cmd::load),
    cmd!("acl|log", -2, ADMIN, acl_cmd::log),
    cmd!("acl|save", 2, ADMIN, acl_cmd::save),
    cmd!("acl|setuser", -3, ADMIN, acl_cmd::setuser),
    cmd!("acl|users", 2, ADMIN, acl_cmd::users),
    cmd!("acl|whoami", 2, Flags::NOSCRIPT.with(LS), acl_cmd::whoami),
    cmd!("acl|help", 2, LS, acl_cmd::help),
];

/// Every top-level command.
pub static COMMANDS: [Command; 64] = [
    // connection
    cmd!(
        "ping",
        -1,
        F.with(Flags::SUBSCRIBED_CONTEXT),
        connection::ping
    ),
    cmd!("echo", 2, LSF, connection::echo),
    cmd!(
        "quit",
        -1,
        Flags::ALLOW_BUSY
            .with(Flags::NOSCRIPT)
            .with(LSF)
            .with(Flags::NO_AUTH)
            .with(MC)
            .with(Flags::SUBSCRIBED_CONTEXT),
        connection::quit
    ),
    cmd!(
        "reset",
        1,
        Flags::NOSCRIPT
            .with(LSF)
            .with(Flags::ALLOW_BUSY)
            .with(Flags::NO_AUTH)
            .with(MC)
            .with(Flags::SUBSCRIBED_CONTEXT),
        connection::reset
    ),
    cmd!(
        "auth",
        -2,
        Flags::NOSCRIPT
            .with(LSF)
            .with(Flags::NO_AUTH)
            .with(Flags::ALLOW_BUSY),
        connection::auth
    ),
    cmd!(
        "hello",
        -1,
        Flags::NOSCRIPT
            .with(LSF)
            .with(Flags::NO_AUTH)
            .with(Flags::ALLOW_BUSY),
        connection::hello
    ),
    cmd!(
        "select",
        2,
        Flags::LOADING.with(Flags::STALE).with(F),
        connection::select
    ),
    cmd!("client", -2, Flags::NOSCRIPT.with(LS), subs: &CLIENT_SUBS),
    cmd!("cluster", -2, NONE, subs: &CLUSTER_SUBS),
    cmd!("asking", 1, F, cluster_cmd::asking),
    cmd!("readonly", 1, LSF, cluster_cmd::readonly),
    cmd!("readwrite", 1, LSF, cluster_cmd::readwrite),
    // keyspace
    cmd!("del", -2, W, keys::del),
    cmd!("unlink", -2, WF, keys::del),
    cmd!("exists", -2, RF, keys::exists),
    cmd!("touch", -2, RF, keys::exists),
    cmd!("type", 2, RF, keys::type_of),
    cmd!("rename", 3, W, keys::rename),
    cmd!("renamenx", 3, WF, keys::renamenx),
    cmd!("copy", -3, WD, keys::copy),
    cmd!("move", 3, WF, keys::move_key),
    cmd!("dump", 2, R, dump::dump),
    cmd!("restore", -4, WD, dump::restore),
    cmd!("restore-asking", -4, WD, dump::restore),
    cmd!("migrate", -6, W, migrate::migrate),
    cmd!("keys", 2, R, keys::keys),
    cmd!("scan", -2, R, keys::scan),
    cmd!("randomkey", 1, R, keys::randomkey),
    cmd!("dbsize", 1, RF, keys::dbsize),
    cmd!("flushdb", -1, W, keys::flushdb),
    cmd!("flushall", -1, W, keys::flushall),
    cmd!("swapdb", 3, WF, keys::swapdb),
    cmd!("object", -2, NONE, subs: &OBJECT_SUBS),
    cmd!("memory", -2, NONE, subs: &MEMORY_SUBS),
    // expiry
    cmd!("expire", -3, WF, expire::expire),
    cmd!("pexpire", -3, WF, expire::pexpire),
    cmd!("expireat", -3, WF, expire::expireat),
    cmd!("pexpireat", -3, WF, expire::pexpireat),
    cmd!("ttl", 2, RF, expire::ttl),
    cmd!("pttl", 2, RF, expire::pttl),
    cmd!("expiretime", 2, RF, expire::expiretime),
    cmd!("pexpiretime", 2, RF, expire::pexpiretime),
    cmd!("persist", 2, WF, expire::persist),
    // transactions
    cmd!(
        "multi",
        1,
        Flags::NOSCRIPT.with(LSF).with(Flags::ALLOW_BUSY).with(MC),
        multi::multi
    ),
    cmd!(
        "exec",
        1,
        Flags::NOSCRIPT
            .with(Flags::LOADING)
            .with(Flags::STALE)
            .with(Flags::SKIP_SLOWLOG)
            .with(MC),
        multi::exec
    ),
    cmd!(
        "discard",
        1,
        Flags::NOSCRIPT.with(LSF).with(Flags::ALLOW_BUSY).with(MC),
        multi::discard
    ),
    cmd!(
        "watch",
        -2,
        Flags::NOSCRIPT.with(LSF).with(Flags::ALLOW_BUSY).with(MC),
        multi::watch
    ),
    cmd!(
        "unwatch",
        1,
        Flags::NOSCRIPT.with(LSF).with(Flags::ALLOW_BUSY),
        multi::unwatch
    ),
    // server
    cmd!("info", -1, Flags::LOADING.with(Flags::STALE), info::info),
    cmd!("config", -2, NONE, subs: &CONFIG_SUBS),
    cmd!("command", -1, LS, introspection::command, subs: &COMMAND_SUBS),
    cmd!("time", 1, LSF, server_cmds::time),
    cmd!("lastsave", 1, LSF, persistence::lastsave),
    cmd!(
        "save",
        1,
        ADMIN_NOT_LOADING.with(Flags::NO_MULTI),
        persistence::save
    ),
    cmd!("bgsave", -1, ADMIN_NOT_LOADING, persistence::bgsave),
    cmd!(
        "bgrewriteaof",
        1,
        ADMIN_NOT_LOADING,
        persistence::bgrewriteaof
    ),
    cmd!(
        "shutdown",
        -1,
        ADMIN.with(Flags::NO_MULTI).with(Flags::ALLOW_BUSY),
        server_cmds::shutdown
    ),
    cmd!("debug", -2, ADMIN.with(Flags::PROTECTED), debug_cmd::debug),
    cmd!("slowlog", -2, NONE, subs: &SLOWLOG_SUBS),
    cmd!("acl", -2, NONE, subs: &ACL_SUBS),
    cmd!("monitor", 1, ADMIN, monitor::monitor),
    cmd!("latency", -2, NONE, subs: &LATENCY_SUBS),
    cmd!("module", -2, NONE, subs: &MODULE_SUBS),
    cmd!("lolwut", -1, RF, lolwut::lolwut),
];

/// The command table's name index.
struct NameIndex {
    /// Each command's place in `commands`, by its lower-case name.
    by_name: HashMap<Vec<u8>, usize>,
    commands: Vec<&'static Command>,
}

/// The longest name [`lookup`]'s last-found cache keeps as sent.
const CACHED_NAME: usize = 16;

thread_local! {
    /// The command found last, and its name as the client sent it (length and bytes).
    static LAST: Cell<(Option<&'static Command>, usize, [u8; CACHED_NAME])> =
        const { Cell::new((None, 0, [0; CACHED_NAME])) };
}

/// Finds a command by name, ignoring ASCII case. The command found last is tried first (a
/// pipeline mostly repeats one command, spelled one way): its name as it was sent is
/// compared byte for byte, inline, with no case folding and no hash lookup.
#[inline]
pub fn lookup(name: &[u8]) -> Option<&'static Command> {
    match LAST.get() {
        (Some(cmd), len, sent) if len == name.len() && same_bytes(&sent[..len], name) => Some(cmd),
        _ => lookup_by_name(name),
    }
}

/// Whether `a` and `b`, of one length of at most 16, hold the same bytes: two overlapping
/// loads of 8, 4 or 1 bytes from each end cover any such length (no call to memcmp).
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
        s[at..at + N].try_into().expect("N bytes")
    }
    let n = a.len();
    debug_assert!(n == b.len() && n <= 16);
    match n {
        8.. => {
            u64::from_ne_bytes(word(a, 0)) == u64::from_ne_bytes(word(b, 0))
                && u64::from_ne_bytes(word(a, n - 8)) == u64::from_ne_bytes(word(b, n - 8))
        }
        4.. => {
            u32::from_ne_bytes(word(a, 0)) == u32::from_ne_bytes(word(b, 0))
                && u32::from_ne_bytes(word(a, n - 4)) == u32::from_ne_bytes(word(b, n - 4))
        }
        1.. => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        0 => true,
    }
}

/// [`lookup`] through the name index (lower-cased), remembering what it finds.
#[inline(never)]
fn lookup_by_name(name: &[u8]) -> Option<&'static Command> {
    static INDEX: OnceLock<NameIndex> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let commands: Vec<&'static Command> = all().collect();
        let by_name = commands
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.as_bytes().to_vec(), i))
            .collect();
        NameIndex { by_name, commands }
    });
    if name.len() > 32 {
        return None;
    }
    let mut lower = [0u8; 32];
    for (dst, src) in lower.iter_mut().zip(name) {
        *dst = src.to_ascii_lowercase();
    }
    let &i = index.by_name.get(&lower[..name.len()])?;
    let cmd = index.commands[i];
    if name.len() <= CACHED_NAME {
        let mut sent = [0u8; CACHED_NAME];
        sent[..name.len()].copy_from_slice(name);
        LAST.set((Some(cmd), name.len(), sent));
    }
    Some(cmd)
}

/// Every top-level command, the sorted-set, string and set commands included.
pub fn all() -> impl Iterator<Item = &'static Command> {
    COMMANDS
        .iter()
        .chain(&crate::zset_commands::COMMANDS)
        .chain(&crate::string_commands::COMMANDS)
        .chain(&crate::set_commands::COMMANDS)
        .chain(&crate::hash_commands::COMMANDS)
        .chain(&crate::geo_commands::COMMANDS)
        .chain(&crate::hll_commands::COMMANDS)
        .chain(&crate::sort_commands::COMMANDS)
        .chain(&crate::list_commands::COMMANDS)
        .chain(&crate::stream_commands::COMMANDS)
        .chain(&pubsub::COMMANDS)
        .chain(&crate::scripting::COMMANDS)
        .chain(&crate::scripting::FUNCTION_COMMANDS)
        .chain(&super::replication::COMMANDS)
        .chain(&crate::hotkeys::COMMANDS)
}

#[cfg(test)]
mod tests {
    use super::{lookup, same_bytes};

    #[test]
    fn lookup_finds_each_name_in_any_case_whatever_came_before() {
        let names: [&[u8]; 7] = [b"get", b"GET", b"zadd", b"ZaDd", b"get", b"nosuch", b"get"];
        for name in names.into_iter().chain(names.into_iter().rev()) {
            let found = lookup(name).map(|c| c.name);
            let expected = std::str::from_utf8(name)
                .expect("ascii")
                .to_ascii_lowercase();
            match found {
                Some(n) => assert_eq!(n, expected),
                None => assert_eq!(expected, "nosuch"),
            }
        }
        assert!(lookup(b"ge").is_none() && lookup(b"gett").is_none());
    }

    #[test]
    fn same_bytes_compares_every_byte_of_every_short_length() {
        for n in 0..=16 {
            let a: Vec<u8> = (0..n as u8).collect();
            assert!(same_bytes(&a, &a.clone()), "{n}");
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 0x20;
                assert!(!same_bytes(&a, &b), "{n} {i}");
            }
        }
    }
}
