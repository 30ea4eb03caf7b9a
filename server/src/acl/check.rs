//! The permission check of a command about to run (Redis's ACLCheckAllUserCommandPerm):
//! one of the user's selectors must allow the command, every key it names (through the
//! key specs, with their read / write flags) and every channel it publishes or subscribes
//! to.

use super::catalog::catalog;
use super::selector::{KeyAccess, Selector};
use super::User;
use crate::commands::keyspecs::{self, KeyRef};
use crate::commands::Command;

/// Why a command was refused, with the argument at fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denial {
    /// The command (or subcommand) is not allowed.
    Command,
    /// The key at this argument index is not allowed.
    Key(usize),
    /// The channel at this argument index is not allowed.
    Channel(usize),
}

impl Denial {
    /// Redis's order of ACL_DENIED_* (a later kind is the more relevant refusal).
    fn rank(self) -> u8 {
        match self {
            Denial::Command => 1,
            Denial::Key(_) => 2,
            Denial::Channel(_) => 4,
        }
    }

    fn pos(self) -> usize {
        match self {
            Denial::Command => 0,
            Denial::Key(p) | Denial::Channel(p) => p,
        }
    }
}

/// A channel argument: position and whether it is a subscription pattern.
struct ChannelRef {
    pos: usize,
    pattern: bool,
}

/// The channels `cmd` publishes or subscribes to (Redis's getChannelsFromCommand, the
/// publish and subscribe ones: unsubscribing needs no permission).
fn channels(cmd: &Command, args: &[&[u8]]) -> Vec<ChannelRef> {
    let all = |pattern| {
        (1..args.len())
            .map(|pos| ChannelRef { pos, pattern })
            .collect()
    };
    match cmd.name {
        "publish" | "spublish" if args.len() > 1 => vec![ChannelRef {
            pos: 1,
            pattern: false,
        }],
        "subscribe" | "ssubscribe" => all(false),
        "psubscribe" => all(true),
        _ => Vec::new(),
    }
}

fn access(key: &KeyRef) -> KeyAccess {
    KeyAccess {
        read: key.flags.reads_value(),
        write: key.flags.changes_key(),
    }
}

fn check_selector(
    s: &Selector,
    id: usize,
    cmd: &Command,
    args: &[&[u8]],
    keys: &mut Option<Vec<KeyRef>>,
) -> Result<(), Denial> {
    if !s.allows_command(id, cmd, args) {
        return Err(Denial::Command);
    }
    if !s.all_keys && keyspecs::has_keys(cmd) {
        let keys = keys.get_or_insert_with(|| keyspecs::keys(cmd, args).unwrap_or_default());
        for key in keys.iter() {
            if !s.allows_key(args[key.pos], access(key)) {
                return Err(Denial::Key(key.pos));
            }
        }
    }
    if !s.all_channels {
        for ch in channels(cmd, args) {
            if !s.allows_channel(args[ch.pos], ch.pattern) {
                return Err(Denial::Channel(ch.pos));
            }
        }
    }
    Ok(())
}

/// Whether `user` may run `cmd` with `args` (the whole command, name first); the refusal
/// Redis would report when no selector allows it.
pub fn check(user: &User, cmd: &Command, args: &[&[u8]]) -> Result<(), Denial> {
    let id = catalog().id(cmd);
    let mut keys = None;
    let mut relevant = Denial::Command;
    for s in &user.selectors {
        match check_selector(s, id, cmd, args, &mut keys) {
            Ok(()) => return Ok(()),
            Err(d) => {
                if d.rank() > relevant.rank()
                    || (d.rank() == relevant.rank() && d.pos() > relevant.pos())
                {
                    relevant = d;
                }
            }
        }
    }
    Err(relevant)
}

/// Whether `user` may run `cmd` with `args` through a selector that may also read every key
/// (Redis's ACLUserCheckCmdWithUnrestrictedKeyAccess with CMD_KEY_ACCESS): SORT's BY and
/// GET read keys no key spec names, so they need it.
pub fn may_read_any_key(user: &User, cmd: &Command, args: &[&[u8]]) -> bool {
    let id = catalog().id(cmd);
    let mut keys = None;
    user.selectors.iter().any(|s| {
        check_selector(s, id, cmd, args, &mut keys).is_ok()
            && (s.all_keys || s.keys.iter().any(|k| k.read && k.pattern == b"*"))
    })
}
