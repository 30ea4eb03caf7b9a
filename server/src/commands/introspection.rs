//! COMMAND and its subcommands. The metadata (arity, flags, key specs, ACL categories,
//! summaries, arguments) is Redis's own for the commands Goblin shares with it, taken from
//! Redis 7.0 and brought to 7.2 by scripts/gen_command_meta.py, plus Goblin's GOBLIN.*
//! commands; it lives in meta/*.resp3 and is served as stored.

use super::keyspecs;
use super::renamed::{self, Renames};
use super::table::all;
use super::Ctx;
use crate::glob::glob_match;
use crate::resp::value::Value;
use std::sync::OnceLock;

/// COMMAND INFO entries and COMMAND DOCS entries, by command name, in table order.
struct Meta {
    info: Vec<(Vec<u8>, Value)>,
    docs: Vec<(Vec<u8>, Value)>,
}

fn load(bytes: &[u8]) -> Vec<(Vec<u8>, Value)> {
    match Value::parse(bytes)
        .expect("the shipped command metadata is valid RESP3")
        .0
    {
        Value::Map(pairs) => pairs
            .into_iter()
            .map(|(k, v)| (k.as_bytes().expect("names are strings").to_vec(), v))
            .collect(),
        _ => panic!("the shipped command metadata is a map"),
    }
}

/// Parses the shipped metadata now rather than at its first use.
pub(super) fn load_now() {
    meta();
}

fn meta() -> &'static Meta {
    static META: OnceLock<Meta> = OnceLock::new();
    META.get_or_init(|| Meta {
        info: load(include_bytes!("meta/info.resp3")),
        docs: load(include_bytes!("meta/docs.resp3")),
    })
}

fn find(entries: &'static [(Vec<u8>, Value)], name: &[u8]) -> Option<&'static Value> {
    entries
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
}

/// The COMMAND INFO entry of a command or "container|sub".
pub(crate) fn info_of(name: &[u8]) -> Option<&'static Value> {
    let lower = name.to_ascii_lowercase();
    match lower.iter().position(|&c| c == b'|') {
        None => find(&meta().info, &lower),
        Some(bar) => match find(&meta().info, &lower[..bar])? {
            Value::Array(fields) => match fields.get(9)? {
                Value::Array(subs) => subs.iter().find(|s| matches!(s, Value::Array(f) if f.first().and_then(Value::as_bytes) == Some(&lower[..]))),
                _ => None,
            },
            _ => None,
        },
    }
}

/// The COMMAND DOCS entry of a command or "container|sub" (from its container's
/// subcommands map), with the name it is listed under.
fn docs_of(name: &[u8]) -> Option<(&'static [u8], &'static Value)> {
    let lower = name.to_ascii_lowercase();
    let Some(bar) = lower.iter().position(|&c| c == b'|') else {
        let (key, docs) = meta().docs.iter().find(|(n, _)| *n == lower)?;
        return Some((key, docs));
    };
    let Value::Map(fields) = find(&meta().docs, &lower[..bar])? else {
        return None;
    };
    let (_, Value::Map(subs)) = fields
        .iter()
        .find(|(k, _)| k.as_bytes() == Some(&b"subcommands"[..]))?
    else {
        return None;
    };
    subs.iter()
        .find(|(k, _)| k.as_bytes() == Some(&lower[..]))
        .and_then(|(k, docs)| Some((k.as_bytes()?, docs)))
}

/// COMMAND GETKEYS command [arg ...]
pub fn command_getkeys(ctx: &mut Ctx, args: &[&[u8]]) {
    getkeys(ctx, &args[2..], false);
}

/// COMMAND GETKEYSANDFLAGS command [arg ...]
pub fn command_getkeysandflags(ctx: &mut Ctx, args: &[&[u8]]) {
    getkeys(ctx, &args[2..], true);
}

/// The keys of the command `target` (name first), with their flags when asked, or Redis's
/// error for a command it cannot take apart.
fn getkeys(ctx: &mut Ctx, target: &[&[u8]], with_flags: bool) {
    let Ok(cmd) = renamed::find_request(&ctx.server.config.renamed_commands, target) else {
        return ctx.error("ERR Invalid command specified");
    };
    if !keyspecs::has_keys(cmd) {
        return ctx.error("ERR The command has no key arguments");
    }
    if !cmd.arity_ok(target.len()) {
        return ctx.error("ERR Invalid number of arguments specified for command");
    }
    let keys = keyspecs::keys(cmd, target).unwrap_or_default();
    if keys.is_empty() && !keyspecs::no_mandatory_keys(cmd) {
        return ctx.error("ERR Invalid arguments specified for command");
    }
    ctx.out.array(keys.len());
    for key in keys {
        if with_flags {
            ctx.out.array(2);
        }
        ctx.out.bulk(target[key.pos]);
        if with_flags {
            let names: Vec<&str> = key.flags.names().collect();
            ctx.out.set(names.len());
            names.iter().for_each(|n| ctx.out.simple(n));
        }
    }
}

/// The COMMAND INFO entries of the commands clients can call (none renamed to "").
fn present(renames: &Renames) -> impl Iterator<Item = &'static Value> + '_ {
    meta().info.iter().filter_map(move |(name, v)| {
        let name = std::str::from_utf8(name).ok()?;
        (renames.is_empty() || renamed::is_present(renames, name)).then_some(v)
    })
}

/// COMMAND: every command's info.
pub fn command(ctx: &mut Ctx, _args: &[&[u8]]) {
    let entries: Vec<&Value> = present(&ctx.server.config.renamed_commands).collect();
    ctx.out.array(entries.len());
    for v in entries {
        v.write(&mut ctx.out);
    }
}

/// COMMAND COUNT: the number of entries COMMAND returns.
pub fn command_count(ctx: &mut Ctx, _args: &[&[u8]]) {
    let count = present(&ctx.server.config.renamed_commands).count();
    ctx.out.int(count as i64);
}

/// COMMAND INFO [name ...]
pub fn command_info(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() == 2 {
        return command(ctx, args);
    }
    ctx.out.array(args.len() - 2);
    let renames = &ctx.server.config.renamed_commands;
    for name in &args[2..] {
        match renamed::own_name(renames, name).and_then(|n| info_of(&n)) {
            Some(v) => v.write(&mut ctx.out),
            None => ctx.out.null_array(),
        }
    }
}

/// COMMAND DOCS [name ...]
pub fn command_docs(ctx: &mut Ctx, args: &[&[u8]]) {
    let chosen: Vec<(&[u8], &Value)> = if args.len() == 2 {
        meta().docs.iter().map(|(k, v)| (&k[..], v)).collect()
    } else {
        let renames = &ctx.server.config.renamed_commands;
        args[2..]
            .iter()
            .filter_map(|n| docs_of(&renamed::own_name(renames, n)?))
            .collect()
    };
    ctx.out.map(chosen.len());
    for (name, v) in chosen {
        ctx.out.bulk(name);
        v.write(&mut ctx.out);
    }
}

/// Whether a command's ACL categories (COMMAND INFO field 7) include `category`.
fn in_category(name: &str, category: &[u8]) -> bool {
    let Some(Value::Array(fields)) = info_of(name.as_bytes()) else {
        return false;
    };
    let Some(Value::Set(cats)) = fields.get(6) else {
        return false;
    };
    cats.iter().any(|c| {
        c.as_bytes().is_some_and(|c| {
            c.strip_prefix(b"@")
                .is_some_and(|c| c.eq_ignore_ascii_case(category))
        })
    })
}

/// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]
pub fn command_list(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut names: Vec<&str> = Vec::new();
    let renames = &ctx.server.config.renamed_commands;
    for cmd in all().filter(|cmd| renamed::is_present(renames, cmd.name)) {
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
                b"ACLCAT" => names
                    .into_iter()
                    .filter(|n| in_category(n, value))
                    .collect(),
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
            "GETKEYS <full-command>",
            "    Return the keys from a full Redis command.",
            "GETKEYSANDFLAGS <full-command>",
            "    Return the keys and the access flags from a full Redis command.",
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::{Command, Flags};

    /// Every command in the table is described, with the arity the dispatcher enforces and
    /// the stale and no_async_loading flags admission checks.
    #[test]
    fn metadata_matches_the_table() {
        let check = |cmd: &Command| {
            let Some(Value::Array(fields)) = info_of(cmd.name.as_bytes()) else {
                panic!("no COMMAND INFO for {}", cmd.name)
            };
            assert_eq!(
                fields[1],
                Value::Int(cmd.arity as i64),
                "arity of {}",
                cmd.name
            );
            let Value::Set(flags) = &fields[2] else {
                panic!("no flags for {}", cmd.name)
            };
            if !cmd.subcommands.is_empty() {
                // A container's own flags are Goblin's (Redis describes none).
                return;
            }
            for (name, flag) in [
                ("no_async_loading", Flags::NO_ASYNC_LOADING),
                ("stale", Flags::STALE),
            ] {
                let described = flags.iter().any(|f| f.as_bytes() == Some(name.as_bytes()));
                assert_eq!(
                    described,
                    cmd.flags.contains(flag),
                    "{name} of {}",
                    cmd.name
                );
            }
        };
        for cmd in all() {
            check(cmd);
            cmd.subcommands.iter().for_each(check);
            assert!(
                find(&meta().docs, cmd.name.as_bytes()).is_some(),
                "no COMMAND DOCS for {}",
                cmd.name
            );
        }
        assert_eq!(meta().info.len(), all().count());
    }
}
