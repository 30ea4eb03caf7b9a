//! ACL and its subcommands, the permission check the dispatcher, EXEC and scripts run
//! (with its ACL LOG entry and NOPERM text), and the ACL file's I/O (ACL LOAD / SAVE,
//! start-up). The rules and checks themselves are in [`crate::acl`].

use super::{Command, Ctx};
use crate::acl::log::{Context, Reason, Refusal};
use crate::acl::{self, Denial};
use crate::clients::Client;
use crate::server::Server;

/// Records a refusal in ACL LOG, with the client's CLIENT LIST line (`cmd=` naming
/// `cmd_name`).
pub(super) fn log_refusal(
    ctx: &mut Ctx,
    reason: Reason,
    context: Context,
    object: &[u8],
    username: &[u8],
    cmd_name: &str,
) {
    let client_info = super::client_cmd::describe(ctx.client, ctx.client.io, Some(cmd_name));
    let max_len = ctx.server.config.acllog_max_len;
    ctx.server.acl.log.add(
        Refusal {
            reason,
            context,
            object,
            username,
            client_info,
            now_ms: ctx.now_ms,
        },
        max_len,
    );
}

fn reason_of(d: Denial) -> Reason {
    match d {
        Denial::Command => Reason::Command,
        Denial::Key(_) => Reason::Key,
        Denial::Channel(_) => Reason::Channel,
    }
}

/// Checks that `user` may run `cmd` with `args`; on a refusal, logs it (as `context`,
/// the client's line naming `running`) and returns the refusal.
pub(crate) fn check_and_log(
    ctx: &mut Ctx,
    user: &crate::acl::ClientUser,
    cmd: &'static Command,
    args: &[&[u8]],
    context: Context,
    running: &str,
) -> Result<(), Denial> {
    let denial = match ctx.server.acl.check(user, cmd, args) {
        Ok(()) => return Ok(()),
        Err(d) => d,
    };
    let object = match denial {
        Denial::Command => cmd.name.as_bytes(),
        Denial::Key(pos) | Denial::Channel(pos) => args[pos],
    };
    let name = user.name.clone();
    log_refusal(ctx, reason_of(denial), context, object, &name, running);
    Err(denial)
}

/// The dispatcher's check of a command about to run or be queued: the NOPERM error text
/// when refused.
pub(super) fn permit(ctx: &mut Ctx, cmd: &'static Command, args: &[&[u8]]) -> Result<(), String> {
    let context = if ctx.client.multi.is_some() {
        Context::Multi
    } else {
        Context::Toplevel
    };
    // Checked first: the allowed path clones nothing.
    if ctx.server.acl.check(&ctx.client.user, cmd, args).is_ok() {
        return Ok(());
    }
    let user = ctx.client.user.clone();
    check_and_log(ctx, &user, cmd, args, context, cmd.name)
        .map_err(|d| format!("NOPERM {}", acl::denial_message(&user.name, cmd.name, d)))
}

/// EXEC's check of a queued command (the rules may have changed since it was queued).
pub(super) fn permit_in_exec(
    ctx: &mut Ctx,
    cmd: &'static Command,
    args: &[&[u8]],
) -> Result<(), String> {
    let user = ctx.client.user.clone();
    check_and_log(ctx, &user, cmd, args, Context::Multi, "exec").map_err(|d| {
        let reason = match d {
            Denial::Command => "no permission to execute the command or subcommand",
            Denial::Key(_) => "no permission to touch the specified keys",
            Denial::Channel(_) => "no permission to access one of the channels used as arguments",
        };
        format!("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: {reason}")
    })
}

/// Logs in as `user` with `password` (AUTH, HELLO AUTH); a failure is logged in ACL LOG
/// (its object the command as the client typed it) and answered with WRONGPASS.
pub(super) fn authenticate(
    ctx: &mut Ctx,
    user: &[u8],
    password: &[u8],
    typed: &[u8],
    running: &str,
) -> bool {
    if ctx
        .server
        .acl
        .user(user)
        .is_some_and(|u| u.password_ok(password))
    {
        ctx.client.authenticated = true;
        ctx.client.user = acl::ClientUser::named(user);
        return true;
    }
    // Queued or running inside EXEC, as Redis's CLIENT_MULTI.
    let context = if ctx.client.multi.is_some() || ctx.client.exec_queued.is_some() {
        Context::Multi
    } else {
        Context::Toplevel
    };
    log_refusal(ctx, Reason::Auth, context, typed, user, running);
    ctx.error("WRONGPASS invalid username-password pair or user is disabled.");
    false
}

/// ACL SETUSER username [rule ...]
pub fn setuser(ctx: &mut Ctx, args: &[&[u8]]) {
    let name = args[2];
    if !acl::user::valid_name(name) {
        return ctx.error("ERR Usernames can't contain spaces or null characters");
    }
    let old = ctx.server.acl.user(name).cloned();
    match ctx.server.acl.set_user(name, &args[3..]) {
        Ok(()) => {
            if let Some(old) = old {
                let new = ctx.server.acl.user(name).expect("just set").clone();
                if let Some(upcoming) = acl::user::narrowed_channels(&new, &old) {
                    close_subscribers_beyond(ctx.server, ctx.client, name, &upcoming);
                }
            }
            ctx.out.ok()
        }
        Err(e) => ctx.error(&format!("ERR {e}")),
    }
}

/// Whether `client` is subscribed to something `upcoming` no longer allows.
fn subscribed_beyond(client: &Client, upcoming: &[Vec<u8>]) -> bool {
    use crate::pubsub::Kind;
    let subs = &client.subscriptions;
    subs.active()
        && [
            (Kind::Pattern, true),
            (Kind::Channel, false),
            (Kind::Shard, false),
        ]
        .iter()
        .any(|&(kind, is_pattern)| {
            subs.names(kind)
                .iter()
                .any(|n| !acl::user::subscription_allowed(upcoming, n, is_pattern))
        })
}

/// Closes the connections of user `name` subscribed to channels its new rules no longer
/// allow (Redis 7.2's ACLKillPubsubClientsIfNeeded).
fn close_subscribers_beyond(
    server: &mut Server,
    client: &mut Client,
    name: &[u8],
    upcoming: &[Vec<u8>],
) {
    let doomed = |c: &Client| *c.user.name == *name && subscribed_beyond(c, upcoming);
    server.clients.kill(doomed);
    if doomed(client) {
        client.user = acl::ClientUser::default_user();
        client.authenticated = false;
        client.close_after_reply = true;
    }
}

/// Closes the connections of the users `gone` (deleted, or missing after ACL LOAD): the
/// running one after its reply, as Redis's deauthenticateAndCloseClient.
fn close_clients_of(server: &mut Server, client: &mut Client, gone: impl Fn(&[u8]) -> bool) {
    server.clients.kill(|c| gone(&c.user.name));
    if gone(&client.user.name) {
        client.user = acl::ClientUser::default_user();
        client.authenticated = false;
        client.close_after_reply = true;
    }
}

/// ACL DELUSER username [username ...]
pub fn deluser(ctx: &mut Ctx, args: &[&[u8]]) {
    if args[2..].iter().any(|n| *n == b"default") {
        return ctx.error("ERR The 'default' user cannot be removed");
    }
    let mut deleted = Vec::new();
    for name in &args[2..] {
        if ctx.server.acl.remove_user(name) {
            deleted.push(name.to_vec());
        }
    }
    close_clients_of(ctx.server, ctx.client, |n| deleted.iter().any(|d| d == n));
    ctx.out.int(deleted.len() as i64);
}

/// Writes one selector's `commands`, `keys` and `channels` fields.
fn selector_fields(ctx: &mut Ctx, s: &acl::selector::Selector) {
    ctx.out.bulk(b"commands");
    ctx.out.bulk(&s.describe_commands());
    ctx.out.bulk(b"keys");
    if s.all_keys {
        ctx.out.bulk(b"~*");
    } else {
        let rules: Vec<Vec<u8>> = s.keys.iter().map(|k| k.rule()).collect();
        ctx.out.bulk(&rules.join(&b' '));
    }
    ctx.out.bulk(b"channels");
    if s.all_channels {
        ctx.out.bulk(b"&*");
    } else {
        let rules: Vec<Vec<u8>> = s.channels.iter().map(|c| [&b"&"[..], c].concat()).collect();
        ctx.out.bulk(&rules.join(&b' '));
    }
}

/// ACL GETUSER username
pub fn getuser(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(user) = ctx.server.acl.user(args[2]).cloned() else {
        return ctx.out.null();
    };
    ctx.out.map(6);
    ctx.out.bulk(b"flags");
    let flags = user.flag_names();
    ctx.out.set(flags.len());
    for f in flags {
        ctx.out.bulk(f.as_bytes());
    }
    ctx.out.bulk(b"passwords");
    ctx.out.array(user.passwords.len());
    for p in &user.passwords {
        ctx.out.bulk(p);
    }
    selector_fields(ctx, user.root());
    ctx.out.bulk(b"selectors");
    ctx.out.array(user.selectors.len() - 1);
    for s in &user.selectors[1..] {
        ctx.out.map(3);
        selector_fields(ctx, s);
    }
}

/// ACL LIST
pub fn list(ctx: &mut Ctx, _args: &[&[u8]]) {
    let lines: Vec<Vec<u8>> = ctx
        .server
        .acl
        .users()
        .map(|u| [&b"user "[..], &u.name, b" ", &u.describe()].concat())
        .collect();
    ctx.out.array(lines.len());
    for l in lines {
        ctx.out.bulk(&l);
    }
}

/// ACL USERS
pub fn users(ctx: &mut Ctx, _args: &[&[u8]]) {
    let names: Vec<Vec<u8>> = ctx.server.acl.users().map(|u| u.name.clone()).collect();
    ctx.out.array(names.len());
    for n in names {
        ctx.out.bulk(&n);
    }
}

/// ACL WHOAMI
pub fn whoami(ctx: &mut Ctx, _args: &[&[u8]]) {
    let name = ctx.client.user.name.clone();
    ctx.out.bulk(&name);
}

/// ACL CAT [category]
pub fn cat(ctx: &mut Ctx, args: &[&[u8]]) {
    match args {
        [_, _] => {
            ctx.out.array(acl::catalog::CATEGORIES.len());
            for c in acl::catalog::CATEGORIES {
                ctx.out.bulk(c.as_bytes());
            }
        }
        [_, _, name] => {
            let Some(bit) = acl::catalog::category(crate::errors::until_nul(name)) else {
                let name = crate::errors::shown_128(name);
                return ctx.error(&format!("ERR Unknown category '{name}'"));
            };
            let names: Vec<&str> = acl::catalog::catalog()
                .entries
                .iter()
                .filter(|e| e.categories & bit != 0)
                .map(|e| e.cmd.name)
                .collect();
            ctx.out.array(names.len());
            for n in names {
                ctx.out.bulk(n.as_bytes());
            }
        }
        _ => super::server_cmds::subcommand_syntax_error(ctx, args),
    }
}

/// ACL GENPASS [bits]
pub fn genpass(ctx: &mut Ctx, args: &[&[u8]]) {
    const MAX_BITS: i64 = 4096;
    if args.len() > 3 {
        return super::server_cmds::subcommand_syntax_error(ctx, args);
    }
    let bits = match args.get(2) {
        None => 256,
        Some(arg) => match ctx.int_arg(arg) {
            Some(b) => b,
            None => return,
        },
    };
    if bits <= 0 || bits > MAX_BITS {
        return ctx.error(&format!("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to {MAX_BITS}"));
    }
    let chars = ((bits + 3) / 4) as usize;
    let mut raw = vec![0u8; chars.div_ceil(2)];
    fill_random(&mut raw);
    let mut hex = Vec::with_capacity(raw.len() * 2);
    for b in raw {
        hex.push(b"0123456789abcdef"[(b >> 4) as usize]);
        hex.push(b"0123456789abcdef"[(b & 15) as usize]);
    }
    ctx.out.bulk(&hex[..chars]);
}

/// Fills `buf` from the kernel's random source.
fn fill_random(buf: &mut [u8]) {
    let mut filled = 0;
    while filled < buf.len() {
        // SAFETY: the pointer and length describe the unfilled part of `buf`.
        let n =
            unsafe { libc::getrandom(buf[filled..].as_mut_ptr().cast(), buf.len() - filled, 0) };
        if n > 0 {
            filled += n as usize;
        }
    }
}

/// ACL LOG [count | RESET]
pub fn log(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut count = 10i64;
    if args.len() > 3 {
        return super::server_cmds::subcommand_syntax_error(ctx, args);
    }
    match args.get(2) {
        None => {}
        Some(arg) if arg.eq_ignore_ascii_case(b"reset") => {
            ctx.server.acl.log.reset();
            return ctx.out.ok();
        }
        Some(arg) => match ctx.int_arg(arg) {
            Some(n) => count = n.max(0),
            None => return,
        },
    }
    let now = ctx.now_ms;
    let entries: Vec<acl::log::Entry> = ctx
        .server
        .acl
        .log
        .entries()
        .take(count as usize)
        .cloned()
        .collect();
    ctx.out.array(entries.len());
    for e in entries {
        ctx.out.map(10);
        ctx.out.bulk(b"count");
        ctx.out.int(e.count as i64);
        ctx.out.bulk(b"reason");
        ctx.out.bulk(e.reason.name().as_bytes());
        ctx.out.bulk(b"context");
        ctx.out.bulk(e.context.name().as_bytes());
        ctx.out.bulk(b"object");
        ctx.out.bulk(&e.object);
        ctx.out.bulk(b"username");
        ctx.out.bulk(&e.username);
        ctx.out.bulk(b"age-seconds");
        ctx.out
            .double(now.saturating_sub(e.updated_ms) as f64 / 1000.0);
        ctx.out.bulk(b"client-info");
        ctx.out.bulk(e.client_info.as_bytes());
        ctx.out.bulk(b"entry-id");
        ctx.out.int(e.entry_id as i64);
        ctx.out.bulk(b"timestamp-created");
        ctx.out.int(e.created_ms as i64);
        ctx.out.bulk(b"timestamp-last-updated");
        ctx.out.int(e.updated_ms as i64);
    }
}

/// ACL DRYRUN username command [arg ...]
pub fn dryrun(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(user) = ctx.server.acl.user(args[2]) else {
        let name = String::from_utf8_lossy(crate::errors::until_nul(args[2])).into_owned();
        return ctx.error(&format!("ERR User '{name}' not found"));
    };
    let target = &args[3..];
    let cmd = super::lookup(target[0]).and_then(|c| match (c.subcommands, target.get(1)) {
        ([], _) | (_, None) => Some(c),
        (_, Some(sub)) => c.subcommand(sub),
    });
    let Some(cmd) = cmd else {
        let name = String::from_utf8_lossy(crate::errors::until_nul(target[0])).into_owned();
        return ctx.error(&format!("ERR Command '{name}' not found"));
    };
    if !cmd.arity_ok(target.len()) {
        return ctx.error(&format!(
            "ERR wrong number of arguments for '{}' command",
            cmd.name
        ));
    }
    match acl::check(user, cmd, target) {
        Ok(()) => ctx.out.ok(),
        Err(d) => {
            let arg = match d {
                Denial::Command => target[0],
                Denial::Key(p) | Denial::Channel(p) => target[p],
            };
            let text = acl::denial_message_verbose(&user.name, cmd.name, d, arg);
            ctx.out.bulk(text.as_bytes());
        }
    }
}

const NO_ACL_FILE: &str = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.";

/// Where the ACL file is: a relative `aclfile` is in `dir`, as in Redis (which works from
/// there).
fn acl_path(server: &Server) -> std::path::PathBuf {
    server.config.dir.join(&server.config.aclfile)
}

/// Reads and parses the ACL file; the error is Redis's one line.
fn read_acl_file(
    server: &Server,
) -> Result<std::collections::BTreeMap<Vec<u8>, acl::User>, String> {
    let name = &server.config.aclfile;
    let text = std::fs::read(acl_path(server)).map_err(|e| {
        format!(
            "Error loading ACLs, opening file '{name}': {}",
            crate::errors::os_error_text(&e)
        )
    })?;
    acl::file::parse(&text, name, server.config.acl_pubsub_default_all)
}

/// Installs `users` (ACL LOAD), closing the connections of every user but the default one.
fn install_users(
    server: &mut Server,
    client: &mut Client,
    users: std::collections::BTreeMap<Vec<u8>, acl::User>,
) {
    server.acl.replace_users(users);
    // As Redis 7.2's ACLLoadFromFile: every old user but the default one (updated in
    // place) is freed with its clients, whether or not the file changed its rules.
    close_clients_of(server, client, |n| n != b"default");
}

/// ACL LOAD
pub fn load(ctx: &mut Ctx, _args: &[&[u8]]) {
    if ctx.server.config.aclfile.is_empty() {
        return ctx.error(NO_ACL_FILE);
    }
    match read_acl_file(ctx.server) {
        Ok(users) => {
            install_users(ctx.server, ctx.client, users);
            ctx.out.ok()
        }
        Err(e) => ctx.error(&format!("ERR {e}")),
    }
}

/// ACL SAVE: the users, written to a temporary file, synced and renamed over the ACL file.
pub fn save(ctx: &mut Ctx, _args: &[&[u8]]) {
    if ctx.server.config.aclfile.is_empty() {
        return ctx.error(NO_ACL_FILE);
    }
    let text = acl::file::render(ctx.server.acl.users());
    let path = acl_path(ctx.server);
    let mut tmp = path.clone().into_os_string();
    tmp.push(format!(".tmp-{}-{}", std::process::id(), ctx.now_ms));
    let written = (|| -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&text)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)?;
        // As Redis: the rename itself is synced too.
        if let Some(dir) = path.parent() {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    })();
    match written {
        Ok(()) => ctx.out.ok(),
        Err(e) => {
            crate::warning!("Writing ACL file for ACL SAVE: {e}");
            let _ = std::fs::remove_file(&tmp);
            ctx.error("ERR There was an error trying to save the ACLs. Please check the server logs for more information");
        }
    }
}

/// ACL HELP
pub fn help(ctx: &mut Ctx, _args: &[&[u8]]) {
    super::help_reply(
        ctx,
        "ACL",
        &[
            "CAT [<category>]",
            "    List all commands that belong to <category>, or all command categories",
            "    when no category is specified.",
            "DELUSER <username> [<username> ...]",
            "    Delete a list of users.",
            "DRYRUN <username> <command> [<arg> ...]",
            "    Returns whether the user can execute the given command without executing the command.",
            "GETUSER <username>",
            "    Get the user's details.",
            "GENPASS [<bits>]",
            "    Generate a secure 256-bit user password. The optional `bits` argument can",
            "    be used to specify a different size.",
            "LIST",
            "    Show users details in config file format.",
            "LOAD",
            "    Reload users from the ACL file.",
            "LOG [<count> | RESET]",
            "    Show the ACL log entries.",
            "SAVE",
            "    Save the current config to the ACL file.",
            "SETUSER <username> <attribute> [<attribute> ...]",
            "    Create or modify a user with the specified attributes.",
            "USERS",
            "    List all the registered usernames.",
            "WHOAMI",
            "    Return the current connection username.",
        ],
    );
}

/// Loads the users of the configuration (`user` directives, or the ACL file) before the
/// server starts; both at once is refused, as Redis refuses it.
pub fn load_at_start(server: &mut Server) -> anyhow::Result<()> {
    let fail = |text: String| {
        crate::warning!("{text}");
        anyhow::anyhow!(text)
    };
    server.acl.pubsub_default_all = server.config.acl_pubsub_default_all;
    if !server.config.aclfile.is_empty() && !server.config.acl_users.is_empty() {
        return Err(fail("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.".into()));
    }
    if !server.config.acl_users.is_empty() {
        let mut users = acl::file::from_directives(
            &server.config.acl_users,
            server.config.acl_pubsub_default_all,
        )
        .map_err(|e| fail(format!("{e}\nCritical error while loading ACLs. Exiting.")))?;
        if !users.contains_key(&b"default"[..]) {
            users.insert(b"default".to_vec(), server.acl.default_user().clone());
        }
        server.acl.replace_users(users);
    }
    if !server.config.aclfile.is_empty() {
        let users = read_acl_file(server)
            .map_err(|e| fail(format!("Aborting Redis startup because of ACL errors: {e}")))?;
        server.acl.replace_users(users);
    }
    Ok(())
}

/// Whether a new connection starts authenticated (the default user is on with nopass).
pub fn starts_authenticated(server: &Server) -> bool {
    server.acl.starts_authenticated()
}
