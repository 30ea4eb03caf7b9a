//! CLIENT and its subcommands.

use super::Ctx;
use crate::clients::{Buffers, Client, ReplRole, ReplyMode};
use crate::errors;
use crate::pubsub::Kind;
use crate::replication::replica_out;

/// Whether a client or library name is acceptable: printable ASCII without spaces.
pub fn valid_name(name: &[u8]) -> bool {
    name.iter().all(|&c| (b'!'..=b'~').contains(&c))
}

/// The running client's buffer sizes, with its share of the replication buffer when it
/// is a replica.
fn with_share(ctx: &Ctx, buffers: Buffers) -> Buffers {
    replica_out::with_share(ctx.server, ctx.client, buffers)
}

/// One CLIENT LIST line (without the newline).
pub(crate) fn describe(client: &Client, buffers: Buffers, now_cmd: Option<&str>) -> String {
    let name = |v: &Option<Vec<u8>>| {
        v.as_ref()
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .unwrap_or_default()
    };
    let Buffers {
        query: qbuf,
        input_capacity: qbuf_cap,
        pending_output: omem,
        argv,
        ..
    } = buffers;
    let multi = match (&client.multi, client.exec_queued) {
        (Some(queue), _) => queue.len() as i64,
        (None, Some(n)) => n as i64,
        (None, None) => -1,
    };
    format!(
        "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} multi={} qbuf={} qbuf-free={} argv-mem={} multi-mem={} rbs={} rbp={} obl=0 oll=0 omem={} tot-mem={} events=r cmd={} user={} redir={} resp={} lib-name={} lib-ver={}",
        client.id,
        client.addr,
        client.laddr,
        client.fd,
        name(&client.name),
        client.created.elapsed().as_secs(),
        client.last_interaction.elapsed().as_secs(),
        client.flags(),
        client.db,
        client.subscriptions.names(Kind::Channel).len(),
        client.subscriptions.names(Kind::Pattern).len(),
        client.subscriptions.names(Kind::Shard).len(),
        multi,
        qbuf,
        qbuf_cap.saturating_sub(qbuf),
        argv,
        crate::clients::memory::multi_bytes(client),
        client.reply_buffer.size,
        client.reply_buffer.peak,
        omem,
        crate::clients::memory::usage(client, buffers),
        match client.exec_queued {
            // Inside EXEC the command Redis shows is EXEC itself.
            Some(_) => "exec",
            None => now_cmd.unwrap_or(client.last_command),
        },
        String::from_utf8_lossy(&client.user.name),
        if client.tracking.on {
            client.tracking.redirect as i64
        } else {
            -1
        },
        if client.resp3 { 3 } else { 2 },
        name(&client.lib_name),
        name(&client.lib_ver),
    )
}

/// CLIENT ID
pub fn id(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.out.int(ctx.client.id as i64);
}

/// CLIENT SETNAME name
pub fn setname(ctx: &mut Ctx, args: &[&[u8]]) {
    if !valid_name(args[2]) {
        return ctx.error(errors::BAD_CLIENT_NAME);
    }
    ctx.client.name = (!args[2].is_empty()).then(|| args[2].to_vec());
    ctx.out.ok();
}

/// CLIENT GETNAME
pub fn getname(ctx: &mut Ctx, _args: &[&[u8]]) {
    match &ctx.client.name {
        Some(n) => {
            let n = n.clone();
            ctx.out.bulk(&n)
        }
        None => ctx.out.null(),
    }
}

/// The client classes CLIENT LIST and CLIENT KILL filter on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientType {
    Any,
    Normal,
    PubSub,
    Replica,
    Master,
}

impl ClientType {
    /// The class a TYPE argument names, or Redis's error for an unknown one.
    fn parse(name: &str) -> Result<ClientType, String> {
        match name.to_ascii_lowercase().as_str() {
            "normal" => Ok(ClientType::Normal),
            "pubsub" => Ok(ClientType::PubSub),
            "replica" | "slave" => Ok(ClientType::Replica),
            "master" => Ok(ClientType::Master),
            _ => Err(format!("ERR Unknown client type '{name}'")),
        }
    }

    /// Whether `client` is of this class (a client with a subscription is a pubsub client).
    fn matches(self, client: &Client) -> bool {
        match self {
            ClientType::Any => true,
            ClientType::Normal => {
                client.repl_role == ReplRole::Normal && !client.subscriptions.active()
            }
            ClientType::PubSub => client.subscriptions.active(),
            ClientType::Replica => client.repl_role == ReplRole::Replica,
            ClientType::Master => client.repl_role == ReplRole::Master,
        }
    }
}

/// CLIENT LIST [TYPE type] [ID id ...]
pub fn list(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut ids: Option<Vec<u64>> = None;
    let mut of_type = ClientType::Any;
    let mut i = 2;
    while i < args.len() {
        if args[i].eq_ignore_ascii_case(b"TYPE") && i + 1 < args.len() {
            match ClientType::parse(&String::from_utf8_lossy(args[i + 1])) {
                Ok(t) => of_type = t,
                Err(e) => return ctx.error(&e),
            }
            i += 2;
        } else if args[i].eq_ignore_ascii_case(b"ID") && i + 1 < args.len() {
            let mut wanted = Vec::new();
            for arg in &args[i + 1..] {
                // Any integer is accepted; one that is no client's id matches nothing.
                match crate::numbers::parse_i64(arg) {
                    Some(v) => wanted.push(v as u64),
                    None => return ctx.error("ERR Invalid client ID"),
                }
            }
            ids = Some(wanted);
            i = args.len();
        } else {
            return ctx.syntax_error();
        }
    }
    let mut text = String::new();
    let mut lines: Vec<(u64, String)> = Vec::new();
    if of_type.matches(ctx.client) {
        lines.push((
            ctx.client.id,
            describe(
                ctx.client,
                with_share(ctx, ctx.client.io),
                Some("client|list"),
            ),
        ));
    }
    for (c, buffers) in ctx.server.clients.iter() {
        if of_type.matches(c) {
            let buffers = replica_out::with_share(ctx.server, c, buffers);
            lines.push((c.id, describe(c, buffers, None)));
        }
    }
    // The master's client belongs to the link, not to the registry.
    let link = ctx.server.replication.link.as_ref();
    if let Some(c) = link.and_then(|l| l.master_client()) {
        if of_type.matches(c) {
            lines.push((c.id, describe(c, Buffers::default(), None)));
        }
    }
    lines.sort_by_key(|(id, _)| *id);
    for (id, line) in lines {
        if ids.as_ref().is_none_or(|w| w.contains(&id)) {
            text.push_str(&line);
            text.push('\n');
        }
    }
    ctx.out.verbatim(text.as_bytes());
}

/// CLIENT INFO
pub fn info(ctx: &mut Ctx, _args: &[&[u8]]) {
    let mut line = describe(
        ctx.client,
        with_share(ctx, ctx.client.io),
        Some("client|info"),
    );
    line.push('\n');
    ctx.out.verbatim(line.as_bytes());
}

/// CLIENT KILL addr | CLIENT KILL [ID id] [ADDR addr] [LADDR addr] [TYPE t] [USER u] [SKIPME yes|no] [MAXAGE s]
pub fn kill(ctx: &mut Ctx, args: &[&[u8]]) {
    let legacy = args.len() == 3;
    let mut id: Option<u64> = None;
    let mut addr: Option<String> = None;
    let mut laddr: Option<String> = None;
    let mut skipme = true;
    let mut maxage: Option<u64> = None;
    let mut of_type = ClientType::Any;
    let mut user: Option<Vec<u8>> = None;
    if legacy {
        addr = Some(String::from_utf8_lossy(args[2]).into_owned());
        skipme = false;
    } else {
        if !args.len().is_multiple_of(2) {
            return ctx.syntax_error();
        }
        for pair in args[2..].chunks(2) {
            let value = String::from_utf8_lossy(pair[1]).into_owned();
            match pair[0].to_ascii_lowercase().as_slice() {
                b"id" => match crate::numbers::parse_i64(pair[1]) {
                    Some(v) if v > 0 => id = Some(v as u64),
                    _ => return ctx.error("ERR client-id should be greater than 0"),
                },
                b"addr" => addr = Some(value),
                b"laddr" => laddr = Some(value),
                b"type" => match ClientType::parse(&value) {
                    Ok(t) => of_type = t,
                    Err(e) => return ctx.error(&e),
                },
                b"user" => {
                    if ctx.server.acl.user(pair[1]).is_none() {
                        return ctx.error(&format!("ERR No such user '{value}'"));
                    }
                    user = Some(pair[1].to_vec());
                }
                b"skipme" => match value.to_ascii_lowercase().as_str() {
                    "yes" => skipme = true,
                    "no" => skipme = false,
                    _ => return ctx.syntax_error(),
                },
                b"maxage" => match crate::numbers::parse_i64(pair[1]) {
                    Some(v) if v >= 0 => maxage = Some(v as u64),
                    _ => return ctx.syntax_error(),
                },
                _ => return ctx.syntax_error(),
            }
        }
    }
    let matches = |c: &Client| {
        of_type.matches(c)
            && id.is_none_or(|i| c.id == i)
            && addr.as_ref().is_none_or(|a| c.addr.to_string() == *a)
            && laddr.as_ref().is_none_or(|a| c.laddr.to_string() == *a)
            && maxage.is_none_or(|m| c.created.elapsed().as_secs() >= m)
            && user.as_ref().is_none_or(|u| *c.user.name == **u)
    };
    let mut killed = ctx.server.clients.kill(&matches) as i64;
    // The master's client is the link's, not the registry's: killing it drops the link.
    let link = ctx.server.replication.link.as_ref();
    if link.and_then(|l| l.master_client()).is_some_and(&matches) {
        killed += crate::replication::replica::kill_link(ctx.server) as i64;
    }
    if !skipme && matches(ctx.client) {
        ctx.client.close_after_reply = true;
        killed += 1;
    }
    if legacy {
        if killed == 0 {
            ctx.error("ERR No such client");
        } else {
            ctx.out.ok();
        }
    } else {
        ctx.out.int(killed);
    }
}

/// CLIENT SETINFO LIB-NAME|LIB-VER value
pub fn setinfo(ctx: &mut Ctx, args: &[&[u8]]) {
    let attr = args[2].to_ascii_lowercase();
    let field = match attr.as_slice() {
        b"lib-name" => &mut ctx.client.lib_name,
        b"lib-ver" => &mut ctx.client.lib_ver,
        _ => {
            return ctx.error(&format!(
                "ERR Unrecognized option '{}'",
                String::from_utf8_lossy(args[2])
            ))
        }
    };
    if !valid_name(args[3]) {
        let what = String::from_utf8_lossy(&attr).into_owned();
        return ctx.error(&format!(
            "ERR {what} cannot contain spaces, newlines or special characters."
        ));
    }
    *field = (!args[3].is_empty()).then(|| args[3].to_vec());
    ctx.out.ok();
}

/// CLIENT REPLY ON|OFF|SKIP
pub fn reply(ctx: &mut Ctx, args: &[&[u8]]) {
    match args[2].to_ascii_lowercase().as_slice() {
        b"on" => {
            ctx.client.reply_mode = ReplyMode::On;
            ctx.out.ok();
        }
        b"off" => ctx.client.reply_mode = ReplyMode::Off,
        b"skip" => {
            if ctx.client.reply_mode == ReplyMode::On {
                ctx.client.reply_mode = ReplyMode::SkipNext;
            }
        }
        _ => ctx.syntax_error(),
    }
}

fn on_off(ctx: &mut Ctx, arg: &[u8]) -> Option<bool> {
    match arg.to_ascii_lowercase().as_slice() {
        b"on" => Some(true),
        b"off" => Some(false),
        _ => {
            ctx.syntax_error();
            None
        }
    }
}

/// CLIENT NO-EVICT ON|OFF
pub fn no_evict(ctx: &mut Ctx, args: &[&[u8]]) {
    if let Some(v) = on_off(ctx, args[2]) {
        ctx.client.no_evict = v;
        ctx.out.ok();
    }
}

/// CLIENT NO-TOUCH ON|OFF
pub fn no_touch(ctx: &mut Ctx, args: &[&[u8]]) {
    if let Some(v) = on_off(ctx, args[2]) {
        ctx.client.no_touch = v;
        ctx.out.ok();
    }
}

/// CLIENT HELP
pub fn help(ctx: &mut Ctx, _args: &[&[u8]]) {
    super::server_cmds::help_reply(
        ctx,
        "CLIENT",
        &[
            "CACHING (YES|NO)",
            "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
            "GETREDIR",
            "    Return the client ID we are redirecting to when tracking is enabled.",
            "GETNAME",
            "    Return the name of the current connection.",
            "ID",
            "    Return the ID of the current connection.",
            "INFO",
            "    Return information about the current client connection.",
            "KILL <ip:port>",
            "    Kill connection made from <ip:port>.",
            "KILL <option> <value> [<option> <value> [...]]",
            "    Kill connections. Options are:",
            "    * ADDR (<ip:port>|<unixsocket>:0)",
            "      Kill connections made from the specified address",
            "    * LADDR (<ip:port>|<unixsocket>:0)",
            "      Kill connections made to specified local address",
            "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
            "      Kill connections by type.",
            "    * USER <username>",
            "      Kill connections authenticated by <username>.",
            "    * SKIPME (YES|NO)",
            "      Skip killing current connection (default: yes).",
            "    * ID <client-id>",
            "      Kill connections by client id.",
            "    * MAXAGE <maxage>",
            "      Kill connections older than the specified age.",
            "LIST [options ...]",
            "    Return information about client connections. Options:",
            "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
            "      Return clients of specified type.",
            "UNPAUSE",
            "    Stop the current client pause, resuming traffic.",
            "PAUSE <timeout> [WRITE|ALL]",
            "    Suspend all, or just write, clients for <timeout> milliseconds.",
            "UNBLOCK <clientid> [TIMEOUT|ERROR]",
            "    Unblock the specified blocked client.",
            "REPLY (ON|OFF|SKIP)",
            "    Control the replies sent to the current connection.",
            "SETNAME <name>",
            "    Assign the name <name> to the current connection.",
            "SETINFO <option> <value>",
            "    Set client meta attr. Options are:",
            "    * LIB-NAME: the client lib name.",
            "    * LIB-VER: the client lib version.",
            "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
            "         [OPTIN] [OPTOUT] [NOLOOP]",
            "    Control server assisted client side caching.",
            "TRACKINGINFO",
            "    Report tracking status for the current connection.",
            "NO-EVICT (ON|OFF)",
            "    Protect current client connection from eviction.",
            "NO-TOUCH (ON|OFF)",
            "    Will not touch LRU/LFU stats when this mode is on.",
        ],
    );
}
