//! The command table: one readable list of name, arity, flags, key positions and handler.

use super::{
    blocking, client_cmd, connection, expire, info, introspection, keys, multi, server_cmds,
    Handler,
};
use std::collections::HashMap;
use std::sync::OnceLock;

/// Command flags, as COMMAND INFO reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flags(u32);

impl Flags {
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

    const NAMES: [(Flags, &'static str); 13] = [
        (Flags::WRITE, "write"),
        (Flags::READONLY, "readonly"),
        (Flags::DENYOOM, "denyoom"),
        (Flags::ADMIN, "admin"),
        (Flags::NOSCRIPT, "noscript"),
        (Flags::LOADING, "loading"),
        (Flags::STALE, "stale"),
        (Flags::SKIP_SLOWLOG, "skip_slowlog"),
        (Flags::FAST, "fast"),
        (Flags::NO_AUTH, "no_auth"),
        (Flags::BLOCKING, "blocking"),
        (Flags::NO_MULTI, "no_multi"),
        (Flags::ALLOW_BUSY, "allow_busy"),
    ];

    /// Whether every flag of `other` is set.
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// Union.
    pub const fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    /// The names COMMAND INFO lists.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Self::NAMES
            .into_iter()
            .filter(move |(f, _)| self.contains(*f))
            .map(|(_, n)| n)
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
    /// First key, last key (negative counts from the end), step; zeros when no keys.
    pub keys: (i32, i32, i32),
    /// The handler (containers dispatch to a subcommand before it would run).
    pub handler: Handler,
    /// Subcommands of a container command.
    pub subcommands: &'static [Command],
    /// The command group (COMMAND DOCS).
    pub group: &'static str,
}

impl Command {
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

macro_rules! cmd {
    ($name:literal, $arity:expr, $flags:expr, $keys:expr, $handler:expr, $group:literal) => {
        Command { name: $name, arity: $arity, flags: $flags, keys: $keys, handler: $handler, subcommands: &[], group: $group }
    };
    ($name:literal, $arity:expr, $flags:expr, $group:literal, subs: $subs:expr) => {
        cmd!($name, $arity, $flags, container, $group, subs: $subs)
    };
    ($name:literal, $arity:expr, $flags:expr, $handler:expr, $group:literal, subs: $subs:expr) => {
        Command { name: $name, arity: $arity, flags: $flags, keys: (0, 0, 0), handler: $handler, subcommands: $subs, group: $group }
    };
}

/// Containers never run themselves: the dispatcher picks a subcommand or refuses.
fn container(ctx: &mut super::Ctx, args: &[&[u8]]) {
    let name = String::from_utf8_lossy(args[0]).to_ascii_lowercase();
    ctx.error(&format!(
        "ERR wrong number of arguments for '{name}' command"
    ));
}

const NOKEYS: (i32, i32, i32) = (0, 0, 0);
const KEY1: (i32, i32, i32) = (1, 1, 1);
const KEYS_ALL: (i32, i32, i32) = (1, -1, 1);
const KEYS_12: (i32, i32, i32) = (1, 2, 1);

static CLIENT_SUBS: &[Command] = &[
    cmd!(
        "client|id",
        2,
        Flags::NOSCRIPT.with(LSF),
        NOKEYS,
        client_cmd::id,
        "connection"
    ),
    cmd!(
        "client|setname",
        3,
        Flags::NOSCRIPT.with(LSF),
        NOKEYS,
        client_cmd::setname,
        "connection"
    ),
    cmd!(
        "client|getname",
        2,
        Flags::NOSCRIPT.with(LSF),
        NOKEYS,
        client_cmd::getname,
        "connection"
    ),
    cmd!(
        "client|list",
        -2,
        ADMIN,
        NOKEYS,
        client_cmd::list,
        "connection"
    ),
    cmd!(
        "client|info",
        2,
        Flags::NOSCRIPT.with(LS),
        NOKEYS,
        client_cmd::info,
        "connection"
    ),
    cmd!(
        "client|kill",
        -3,
        ADMIN,
        NOKEYS,
        client_cmd::kill,
        "connection"
    ),
    cmd!(
        "client|setinfo",
        4,
        Flags::NOSCRIPT.with(LSF),
        NOKEYS,
        client_cmd::setinfo,
        "connection"
    ),
    cmd!(
        "client|reply",
        3,
        Flags::NOSCRIPT.with(LSF),
        NOKEYS,
        client_cmd::reply,
        "connection"
    ),
    cmd!(
        "client|no-evict",
        3,
        ADMIN,
        NOKEYS,
        client_cmd::no_evict,
        "connection"
    ),
    cmd!(
        "client|no-touch",
        3,
        Flags::NOSCRIPT.with(LSF),
        NOKEYS,
        client_cmd::no_touch,
        "connection"
    ),
    cmd!(
        "client|unblock",
        -3,
        ADMIN,
        NOKEYS,
        blocking::client_unblock,
        "connection"
    ),
    cmd!("client|help", 2, LS, NOKEYS, client_cmd::help, "connection"),
];

static CONFIG_SUBS: &[Command] = &[
    cmd!(
        "config|get",
        -3,
        ADMIN,
        NOKEYS,
        server_cmds::config_get,
        "server"
    ),
    cmd!(
        "config|set",
        -4,
        ADMIN,
        NOKEYS,
        server_cmds::config_set,
        "server"
    ),
    cmd!(
        "config|resetstat",
        2,
        ADMIN,
        NOKEYS,
        server_cmds::config_resetstat,
        "server"
    ),
    cmd!(
        "config|help",
        2,
        LS,
        NOKEYS,
        server_cmds::config_help,
        "server"
    ),
];

static COMMAND_SUBS: &[Command] = &[
    cmd!(
        "command|count",
        2,
        LS,
        NOKEYS,
        introspection::command_count,
        "server"
    ),
    cmd!(
        "command|info",
        -2,
        LS,
        NOKEYS,
        introspection::command_info,
        "server"
    ),
    cmd!(
        "command|docs",
        -2,
        LS,
        NOKEYS,
        introspection::command_docs,
        "server"
    ),
    cmd!(
        "command|list",
        -2,
        LS,
        NOKEYS,
        introspection::command_list,
        "server"
    ),
    cmd!(
        "command|help",
        2,
        LS,
        NOKEYS,
        introspection::command_help,
        "server"
    ),
];

static OBJECT_SUBS: &[Command] = &[
    cmd!(
        "object|encoding",
        3,
        R,
        (2, 2, 1),
        keys::object_encoding,
        "generic"
    ),
    cmd!(
        "object|refcount",
        3,
        R,
        (2, 2, 1),
        keys::object_refcount,
        "generic"
    ),
    cmd!(
        "object|idletime",
        3,
        R,
        (2, 2, 1),
        keys::object_idletime,
        "generic"
    ),
    cmd!("object|freq", 3, R, (2, 2, 1), keys::object_freq, "generic"),
    cmd!("object|help", 2, LS, NOKEYS, keys::object_help, "generic"),
];

static MEMORY_SUBS: &[Command] = &[
    cmd!(
        "memory|usage",
        -3,
        R,
        (2, 2, 1),
        keys::memory_usage,
        "server"
    ),
    cmd!("memory|help", 2, LS, NOKEYS, keys::memory_help, "server"),
];

static SLOWLOG_SUBS: &[Command] = &[
    cmd!(
        "slowlog|get",
        -2,
        ADMIN,
        NOKEYS,
        server_cmds::slowlog_get,
        "server"
    ),
    cmd!(
        "slowlog|len",
        2,
        ADMIN,
        NOKEYS,
        server_cmds::slowlog_len,
        "server"
    ),
    cmd!(
        "slowlog|reset",
        2,
        ADMIN,
        NOKEYS,
        server_cmds::slowlog_reset,
        "server"
    ),
    cmd!(
        "slowlog|help",
        2,
        LS,
        NOKEYS,
        server_cmds::slowlog_help,
        "server"
    ),
];

/// Every top-level command.
pub static COMMANDS: &[Command] = &[
    // connection
    cmd!("ping", -1, F, NOKEYS, connection::ping, "connection"),
    cmd!("echo", 2, F, NOKEYS, connection::echo, "connection"),
    cmd!(
        "quit",
        -1,
        Flags::ALLOW_BUSY
            .with(Flags::NOSCRIPT)
            .with(LSF)
            .with(Flags::NO_AUTH)
            .with(MC),
        NOKEYS,
        connection::quit,
        "connection"
    ),
    cmd!(
        "reset",
        1,
        Flags::NOSCRIPT.with(LSF).with(Flags::NO_AUTH).with(MC),
        NOKEYS,
        connection::reset,
        "connection"
    ),
    cmd!(
        "auth",
        -2,
        Flags::NOSCRIPT.with(LSF).with(Flags::NO_AUTH),
        NOKEYS,
        connection::auth,
        "connection"
    ),
    cmd!(
        "hello",
        -1,
        Flags::NOSCRIPT.with(LSF).with(Flags::NO_AUTH),
        NOKEYS,
        connection::hello,
        "connection"
    ),
    cmd!(
        "select",
        2,
        Flags::LOADING.with(Flags::STALE).with(F),
        NOKEYS,
        connection::select,
        "connection"
    ),
    cmd!("client", -2, Flags::NOSCRIPT.with(LS), "connection", subs: CLIENT_SUBS),
    // keyspace
    cmd!("del", -2, W, KEYS_ALL, keys::del, "generic"),
    cmd!("unlink", -2, WF, KEYS_ALL, keys::del, "generic"),
    cmd!("exists", -2, RF, KEYS_ALL, keys::exists, "generic"),
    cmd!("touch", -2, RF, KEYS_ALL, keys::exists, "generic"),
    cmd!("type", 2, RF, KEY1, keys::type_of, "generic"),
    cmd!("rename", 3, W, KEYS_12, keys::rename, "generic"),
    cmd!("renamenx", 3, WF, KEYS_12, keys::renamenx, "generic"),
    cmd!("copy", -3, WD, KEYS_12, keys::copy, "generic"),
    cmd!("move", 3, WF, KEY1, keys::move_key, "generic"),
    cmd!("keys", 2, R, NOKEYS, keys::keys, "generic"),
    cmd!("scan", -2, R, NOKEYS, keys::scan, "generic"),
    cmd!("randomkey", 1, R, NOKEYS, keys::randomkey, "generic"),
    cmd!("dbsize", 1, RF, NOKEYS, keys::dbsize, "server"),
    cmd!("flushdb", -1, W, NOKEYS, keys::flushdb, "server"),
    cmd!("flushall", -1, W, NOKEYS, keys::flushall, "server"),
    cmd!("swapdb", 3, WF, NOKEYS, keys::swapdb, "server"),
    cmd!("object", -2, NONE, "generic", subs: OBJECT_SUBS),
    cmd!("memory", -2, NONE, "server", subs: MEMORY_SUBS),
    // expiry
    cmd!("expire", -3, WF, KEY1, expire::expire, "generic"),
    cmd!("pexpire", -3, WF, KEY1, expire::pexpire, "generic"),
    cmd!("expireat", -3, WF, KEY1, expire::expireat, "generic"),
    cmd!("pexpireat", -3, WF, KEY1, expire::pexpireat, "generic"),
    cmd!("ttl", 2, RF, KEY1, expire::ttl, "generic"),
    cmd!("pttl", 2, RF, KEY1, expire::pttl, "generic"),
    cmd!("expiretime", 2, RF, KEY1, expire::expiretime, "generic"),
    cmd!("pexpiretime", 2, RF, KEY1, expire::pexpiretime, "generic"),
    cmd!("persist", 2, WF, KEY1, expire::persist, "generic"),
    // transactions
    cmd!(
        "multi",
        1,
        Flags::NOSCRIPT.with(LSF).with(Flags::ALLOW_BUSY).with(MC),
        NOKEYS,
        multi::multi,
        "transactions"
    ),
    cmd!(
        "exec",
        1,
        Flags::NOSCRIPT
            .with(Flags::LOADING)
            .with(Flags::STALE)
            .with(Flags::SKIP_SLOWLOG)
            .with(MC),
        NOKEYS,
        multi::exec,
        "transactions"
    ),
    cmd!(
        "discard",
        1,
        Flags::NOSCRIPT.with(LSF).with(Flags::ALLOW_BUSY).with(MC),
        NOKEYS,
        multi::discard,
        "transactions"
    ),
    cmd!(
        "watch",
        -2,
        Flags::NOSCRIPT.with(LSF).with(Flags::ALLOW_BUSY).with(MC),
        KEYS_ALL,
        multi::watch,
        "transactions"
    ),
    cmd!(
        "unwatch",
        1,
        Flags::NOSCRIPT.with(LSF).with(Flags::ALLOW_BUSY),
        NOKEYS,
        multi::unwatch,
        "transactions"
    ),
    // server
    cmd!(
        "info",
        -1,
        Flags::LOADING.with(Flags::STALE),
        NOKEYS,
        info::info,
        "server"
    ),
    cmd!("config", -2, NONE, "server", subs: CONFIG_SUBS),
    cmd!("command", -1, LS, introspection::command, "server", subs: COMMAND_SUBS),
    cmd!("time", 1, LSF, NOKEYS, server_cmds::time, "server"),
    cmd!("lastsave", 1, LSF, NOKEYS, server_cmds::lastsave, "server"),
    cmd!(
        "shutdown",
        -1,
        ADMIN.with(Flags::NO_MULTI).with(Flags::ALLOW_BUSY),
        NOKEYS,
        server_cmds::shutdown,
        "server"
    ),
    cmd!("debug", -2, ADMIN, NOKEYS, server_cmds::debug, "server"),
    cmd!("slowlog", -2, NONE, "server", subs: SLOWLOG_SUBS),
];

/// Finds a command by name, ignoring ASCII case.
pub fn lookup(name: &[u8]) -> Option<&'static Command> {
    static INDEX: OnceLock<HashMap<Vec<u8>, &'static Command>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        COMMANDS
            .iter()
            .chain(crate::zset_commands::COMMANDS)
            .map(|c| (c.name.as_bytes().to_vec(), c))
            .collect()
    });
    if name.len() > 32 {
        return None;
    }
    let mut lower = [0u8; 32];
    for (dst, src) in lower.iter_mut().zip(name) {
        *dst = src.to_ascii_lowercase();
    }
    index.get(&lower[..name.len()]).copied()
}

/// Every top-level command, Goblin's sorted-set commands included.
pub fn all() -> impl Iterator<Item = &'static Command> {
    COMMANDS.iter().chain(crate::zset_commands::COMMANDS)
}
