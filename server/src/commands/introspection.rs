//! COMMAND and its subcommands: what clients and redis-cli learn about the command table.

use super::table::all;
use super::{lookup, Command, Ctx, Flags};
use crate::glob::glob_match;

/// ACL categories Redis would list for the command.
fn acl_categories(cmd: &Command) -> Vec<&'static str> {
    let mut cats = Vec::new();
    match cmd.group {
        "generic" => cats.push("@keyspace"),
        "sortedset" => cats.push("@sortedset"),
        "connection" => cats.push("@connection"),
        "transactions" => cats.push("@transaction"),
        _ => {}
    }
    if cmd.flags.contains(Flags::WRITE) {
        cats.push("@write");
    }
    if cmd.flags.contains(Flags::READONLY) {
        cats.push("@read");
    }
    if cmd.flags.contains(Flags::ADMIN) {
        cats.extend(["@admin", "@dangerous"]);
    }
    cats.push(if cmd.flags.contains(Flags::FAST) {
        "@fast"
    } else {
        "@slow"
    });
    if cmd.flags.contains(Flags::BLOCKING) {
        cats.push("@blocking");
    }
    cats
}

fn write_info(ctx: &mut Ctx, cmd: &Command) {
    ctx.out.array(10);
    ctx.out.bulk(cmd.name.as_bytes());
    ctx.out.int(cmd.arity as i64);
    let flags: Vec<&str> = cmd.flags.names().collect();
    ctx.out.set(flags.len());
    for f in flags {
        ctx.out.simple(f);
    }
    ctx.out.int(cmd.keys.0 as i64);
    ctx.out.int(cmd.keys.1 as i64);
    ctx.out.int(cmd.keys.2 as i64);
    let cats = acl_categories(cmd);
    ctx.out.set(cats.len());
    for c in cats {
        ctx.out.simple(c);
    }
    ctx.out.set(0);
    if cmd.keys.0 > 0 {
        // One key spec: keys from an index, over a range with a step, as Redis describes them.
        ctx.out.array(1);
        ctx.out.map(3);
        ctx.out.bulk(b"flags");
        let key_flags: &[&str] = if cmd.flags.contains(Flags::WRITE) {
            &["RW", "UPDATE"]
        } else {
            &["RO", "ACCESS"]
        };
        ctx.out.set(key_flags.len());
        for f in key_flags {
            ctx.out.simple(f);
        }
        ctx.out.bulk(b"begin_search");
        ctx.out.map(2);
        ctx.out.bulk(b"type");
        ctx.out.bulk(b"index");
        ctx.out.bulk(b"spec");
        ctx.out.map(1);
        ctx.out.bulk(b"index");
        ctx.out.int(cmd.keys.0 as i64);
        ctx.out.bulk(b"find_keys");
        ctx.out.map(2);
        ctx.out.bulk(b"type");
        ctx.out.bulk(b"range");
        ctx.out.bulk(b"spec");
        ctx.out.map(3);
        ctx.out.bulk(b"lastkey");
        ctx.out.int(if cmd.keys.1 < 0 {
            cmd.keys.1 as i64
        } else {
            (cmd.keys.1 - cmd.keys.0) as i64
        });
        ctx.out.bulk(b"keystep");
        ctx.out.int(cmd.keys.2 as i64);
        ctx.out.bulk(b"limit");
        ctx.out.int(0);
    } else {
        ctx.out.array(0);
    }
    ctx.out.array(cmd.subcommands.len());
    for sub in cmd.subcommands {
        write_info(ctx, sub);
    }
}

/// COMMAND: every command's info.
pub fn command(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 1 {
        let name = String::from_utf8_lossy(args[1]).into_owned();
        return ctx.error(&format!(
            "ERR unknown subcommand '{name}'. Try COMMAND HELP."
        ));
    }
    let cmds: Vec<&Command> = all().collect();
    ctx.out.array(cmds.len());
    for cmd in cmds {
        write_info(ctx, cmd);
    }
}

/// COMMAND COUNT
pub fn command_count(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.out.int(all().count() as i64);
}

/// Resolves "name" or "container|sub".
fn find(name: &[u8]) -> Option<&'static Command> {
    let text = String::from_utf8_lossy(name);
    match text.split_once('|') {
        Some((container, sub)) => lookup(container.as_bytes())?.subcommand(sub.as_bytes()),
        None => lookup(name),
    }
}

/// COMMAND INFO [name ...]
pub fn command_info(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() == 2 {
        return command(ctx, &args[..1]);
    }
    ctx.out.array(args.len() - 2);
    for name in &args[2..] {
        match find(name) {
            Some(cmd) => write_info(ctx, cmd),
            None => ctx.out.null_array(),
        }
    }
}

fn write_docs(ctx: &mut Ctx, cmd: &Command) {
    let has_subs = !cmd.subcommands.is_empty();
    ctx.out.map(if has_subs { 2 } else { 1 });
    ctx.out.bulk(b"group");
    ctx.out.bulk(cmd.group.as_bytes());
    if has_subs {
        ctx.out.bulk(b"subcommands");
        ctx.out.map(cmd.subcommands.len());
        for sub in cmd.subcommands {
            ctx.out.bulk(sub.name.as_bytes());
            write_docs(ctx, sub);
        }
    }
}

/// COMMAND DOCS [name ...]
pub fn command_docs(ctx: &mut Ctx, args: &[&[u8]]) {
    let cmds: Vec<&Command> = if args.len() == 2 {
        all().collect()
    } else {
        args[2..].iter().filter_map(|n| find(n)).collect()
    };
    ctx.out.map(cmds.len());
    for cmd in cmds {
        ctx.out.bulk(cmd.name.as_bytes());
        write_docs(ctx, cmd);
    }
}

/// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]
pub fn command_list(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut names: Vec<&str> = Vec::new();
    for cmd in all() {
        names.push(cmd.name);
        names.extend(cmd.subcommands.iter().map(|s| s.name));
    }
    let names: Vec<&str> = match args.len() {
        2 => names,
        5 if args[2].eq_ignore_ascii_case(b"FILTERBY") => {
            let value = args[4];
            match args[3].to_ascii_uppercase().as_slice() {
                b"MODULE" => Vec::new(),
                b"PATTERN" => names
                    .into_iter()
                    .filter(|n| glob_match(value, n.as_bytes(), true))
                    .collect(),
                b"ACLCAT" => {
                    let wanted =
                        format!("@{}", String::from_utf8_lossy(value).to_ascii_lowercase());
                    names
                        .into_iter()
                        .filter(|n| {
                            find(n.as_bytes())
                                .is_some_and(|c| acl_categories(c).contains(&wanted.as_str()))
                        })
                        .collect()
                }
                _ => return ctx.syntax_error(),
            }
        }
        _ => return ctx.syntax_error(),
    };
    ctx.out.array(names.len());
    for n in names {
        ctx.out.bulk(n.as_bytes());
    }
}

/// COMMAND HELP
pub fn command_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    super::server_cmds::help_reply(
        ctx,
        "COMMAND",
        &[
            "(no subcommand)",
            "    Return details about all Redis commands.",
            "COUNT",
            "    Return the total number of commands in this Redis server.",
            "LIST",
            "    Return a list of all commands in this Redis server.",
            "INFO [<command-name> ...]",
            "    Return details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "DOCS [<command-name> ...]",
            "    Return documentation details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
        ],
    );
}
