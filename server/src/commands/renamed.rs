//! `rename-command OLD NEW` of the configuration file (Redis's file-only directive): the
//! command answers to NEW instead of OLD for clients; an empty NEW removes it. Internal
//! callers (propagation, the AOF, replication) keep the command's own name.

use super::{lookup, Command};
use std::borrow::Cow;

/// The renames in the order the file gives them: (old name, new name), both lowercase.
pub type Renames = Vec<(Vec<u8>, Vec<u8>)>;

/// The command a client's `name` runs under `renames`: walking the renames back from the
/// last, a rename to the name gives the name it had before, and a rename from it (with no
/// later one back to it) means it is gone.
pub fn lookup_renamed(renames: &Renames, name: &[u8]) -> Option<&'static Command> {
    // Compared without case, so a client's name is not copied on each command.
    let mut current = name;
    for (old, new) in renames.iter().rev() {
        if new.eq_ignore_ascii_case(current) {
            current = old;
        } else if old.eq_ignore_ascii_case(current) {
            return None;
        }
    }
    lookup(current)
}

/// Whether the command named `name` in the table (a top-level command) still answers to some
/// name under `renames`: false once it was renamed to "" (COMMAND, COMMAND COUNT and COMMAND
/// LIST leave it out, as they walk Redis's renamed command table).
pub fn is_present(renames: &Renames, name: &str) -> bool {
    let mut current = name.as_bytes();
    for (old, new) in renames {
        if old.eq_ignore_ascii_case(current) {
            current = new;
        }
    }
    !current.is_empty()
}

/// The table's name of what a client calls `name` (a command or "container|sub") under
/// `renames`, as COMMAND INFO and DOCS look a name up: the container under its new name,
/// the subcommand as it is.
pub fn own_name<'a>(renames: &Renames, name: &'a [u8]) -> Option<Cow<'a, [u8]>> {
    if renames.is_empty() {
        return Some(Cow::Borrowed(name));
    }
    let bar = name.iter().position(|&c| c == b'|').unwrap_or(name.len());
    let cmd = lookup_renamed(renames, &name[..bar])?;
    let mut own = cmd.name.as_bytes().to_vec();
    own.extend_from_slice(&name[bar..]);
    Some(Cow::Owned(own))
}

/// Which part of a request names nothing.
pub enum Unknown {
    /// Its first argument under the renames.
    Command,
    /// Its second argument, among the subcommands of this container.
    Subcommand(&'static Command),
}

/// The command (or subcommand) a client's request `args` runs under `renames`, as Redis's
/// lookupCommand: the first argument's command and, for a container given a second
/// argument, its subcommand. The dispatcher and the pause of a master's stream read it.
pub fn find_request(renames: &Renames, args: &[&[u8]]) -> Result<&'static Command, Unknown> {
    let found = match renames.is_empty() {
        true => lookup(args[0]),
        false => lookup_renamed(renames, args[0]),
    };
    let cmd = found.ok_or(Unknown::Command)?;
    match args.get(1) {
        Some(sub) if !cmd.subcommands.is_empty() => {
            cmd.subcommand(sub).ok_or(Unknown::Subcommand(cmd))
        }
        _ => Ok(cmd),
    }
}

/// Adds `rename-command old new`, with Redis's errors: OLD must be a command clients can
/// call now, NEW (unless empty) a name none answers to.
pub fn add(renames: &mut Renames, old: &[u8], new: &[u8]) -> Result<(), &'static str> {
    let (old, new) = (old.to_ascii_lowercase(), new.to_ascii_lowercase());
    if lookup_renamed(renames, &old).is_none() {
        return Err("No such command in rename-command");
    }
    if !new.is_empty() && lookup_renamed(renames, &new).is_some() {
        return Err("Target command name already exists");
    }
    renames.push((old, new));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(c: Option<&'static Command>) -> Option<&'static str> {
        c.map(|c| c.name)
    }

    #[test]
    fn renamed_and_removed_commands() {
        let mut r = Renames::new();
        add(&mut r, b"FLUSHDB", b"badger").unwrap();
        add(&mut r, b"config", b"").unwrap();
        assert_eq!(name(lookup_renamed(&r, b"BADGER")), Some("flushdb"));
        assert_eq!(name(lookup_renamed(&r, b"flushdb")), None);
        assert_eq!(name(lookup_renamed(&r, b"config")), None);
        assert_eq!(name(lookup_renamed(&r, b"get")), Some("get"));
        assert_eq!(
            add(&mut r, b"flushdb", b"x"),
            Err("No such command in rename-command")
        );
        assert_eq!(
            add(&mut r, b"nosuch", b"x"),
            Err("No such command in rename-command")
        );
        assert_eq!(
            add(&mut r, b"get", b"set"),
            Err("Target command name already exists")
        );
        assert_eq!(
            add(&mut r, b"get", b"badger"),
            Err("Target command name already exists")
        );
        add(&mut r, b"badger", b"mole").unwrap();
        assert_eq!(name(lookup_renamed(&r, b"mole")), Some("flushdb"));
        assert_eq!(name(lookup_renamed(&r, b"badger")), None);
        add(&mut r, b"get", b"flushdb").unwrap();
        assert_eq!(name(lookup_renamed(&r, b"flushdb")), Some("get"));
    }

    #[test]
    fn introspection_names_under_the_renames() {
        let mut r = Renames::new();
        assert!(is_present(&r, "get"));
        assert_eq!(own_name(&r, b"GET").as_deref(), Some(&b"GET"[..]));
        add(&mut r, b"set", b"foo").unwrap();
        add(&mut r, b"get", b"").unwrap();
        add(&mut r, b"config", b"settings").unwrap();
        assert!(is_present(&r, "set") && is_present(&r, "config"));
        assert!(!is_present(&r, "get"));
        assert_eq!(own_name(&r, b"FOO").as_deref(), Some(&b"set"[..]));
        assert_eq!(own_name(&r, b"set"), None);
        assert_eq!(own_name(&r, b"get"), None);
        assert_eq!(
            own_name(&r, b"settings|GET").as_deref(),
            Some(&b"config|GET"[..])
        );
        add(&mut r, b"foo", b"").unwrap();
        assert!(!is_present(&r, "set"));
    }

    #[test]
    fn a_request_names_its_subcommand_under_the_renames() {
        // Ok(name), or Err(the container whose subcommand is unknown, None: no command).
        let find = |r: &Renames, args: &[&[u8]]| match find_request(r, args) {
            Ok(c) => Ok(c.name),
            Err(Unknown::Subcommand(c)) => Err(Some(c.name)),
            Err(Unknown::Command) => Err(None),
        };
        let mut r = Renames::new();
        assert_eq!(find(&r, &[b"CLIENT", b"Pause", b"10"]), Ok("client|pause"));
        assert_eq!(find(&r, &[b"client"]), Ok("client"));
        assert_eq!(find(&r, &[b"get", b"k"]), Ok("get"));
        assert_eq!(find(&r, &[b"nosuch"]), Err(None));
        assert_eq!(find(&r, &[b"client", b"nosuch"]), Err(Some("client")));
        add(&mut r, b"client", b"customer").unwrap();
        assert_eq!(find(&r, &[b"client", b"pause"]), Err(None));
        assert_eq!(find(&r, &[b"customer", b"PAUSE"]), Ok("client|pause"));
    }
}
