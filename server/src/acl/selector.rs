//! A selector: the commands, keys and channels a set of rules allows (Redis's aclSelector).
//! Every user has a root selector; `(...)` rules add more, and a command runs when one of
//! them allows it whole.

use super::catalog::{catalog, category, FUTURE};
use super::RuleError;
use crate::commands::Command;
use crate::errors::until_nul;
use crate::glob::glob_match;

/// A key pattern with the access it grants (`~p` both, `%R~p` reads, `%W~p` writes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPattern {
    /// The glob pattern.
    pub pattern: Vec<u8>,
    /// Reads allowed.
    pub read: bool,
    /// Writes allowed.
    pub write: bool,
}

impl KeyPattern {
    /// The rule that adds this pattern (`~p`, `%R~p` or `%W~p`).
    pub fn rule(&self) -> Vec<u8> {
        let mut out = match (self.read, self.write) {
            (true, false) => b"%R~".to_vec(),
            (false, true) => b"%W~".to_vec(),
            _ => b"~".to_vec(),
        };
        out.extend_from_slice(&self.pattern);
        out
    }
}

/// What a key argument of a command does to its key, for the key patterns' check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KeyAccess {
    /// The command reads the key's value (key spec flag `access`).
    pub read: bool,
    /// The command inserts, deletes or updates (key spec flags `insert`, `delete`, `update`).
    pub write: bool,
}

/// One selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    /// The user's root selector (rules outside parentheses).
    pub root: bool,
    /// `allkeys` / `~*`.
    pub all_keys: bool,
    /// `allchannels` / `&*`.
    pub all_channels: bool,
    /// `allcommands` / `+@all`, with no command taken away since.
    pub all_commands: bool,
    allowed: [u64; 8],
    /// Command id -> the first arguments allowed of an otherwise refused command.
    first_args: Vec<(usize, Vec<Vec<u8>>)>,
    /// Key patterns, in the order added.
    pub keys: Vec<KeyPattern>,
    /// Channel patterns, in the order added.
    pub channels: Vec<Vec<u8>>,
    /// The command and category rules in effect, in order, each with its sign (Redis 7.2's
    /// command_rules): what GETUSER and ACL LIST show after `+@all` or `-@all`.
    rules: Vec<Vec<u8>>,
}

impl Selector {
    /// An empty selector: no commands, keys or channels (`all_channels` as
    /// acl-pubsub-default says).
    pub fn new(root: bool, all_channels: bool) -> Selector {
        Selector {
            root,
            all_keys: false,
            all_channels,
            all_commands: false,
            allowed: [0; 8],
            first_args: Vec::new(),
            keys: Vec::new(),
            channels: Vec::new(),
            rules: Vec::new(),
        }
    }

    fn bit(&self, id: usize) -> bool {
        self.allowed[id / 64] & (1 << (id % 64)) != 0
    }

    fn set_bit(&mut self, id: usize, on: bool) {
        if on {
            self.allowed[id / 64] |= 1 << (id % 64);
        } else {
            self.allowed[id / 64] &= !(1 << (id % 64));
            self.all_commands = false;
        }
    }

    /// Allows or refuses a command, and with a container every subcommand.
    fn change(&mut self, id: usize, on: bool) {
        self.set_bit(id, on);
        self.first_args.retain(|(i, _)| *i != id);
        for &sub in &catalog().entries[id].subs {
            self.set_bit(sub, on);
        }
    }

    fn set_category(&mut self, bit: u32, on: bool) {
        let catalog = catalog();
        for &id in &catalog.top {
            if catalog.entries[id].categories & bit != 0 {
                self.change(id, on);
            }
            for &sub in &catalog.entries[id].subs {
                if catalog.entries[sub].categories & bit != 0 {
                    self.change(sub, on);
                }
            }
        }
    }

    /// Records a command or category rule (without its sign, any case): drops the earlier
    /// rules it overrides (the same name, or that command's subcommands) and appends it.
    fn record(&mut self, name: &[u8], allow: bool) {
        let name = name.to_ascii_lowercase();
        self.rules.retain(|r| {
            let existing = &r[1..];
            !(existing == name.as_slice()
                || (existing.len() > name.len()
                    && existing.starts_with(&name)
                    && existing[name.len()] == b'|'))
        });
        let mut rule = vec![if allow { b'+' } else { b'-' }];
        rule.extend_from_slice(&name);
        self.rules.push(rule);
    }

    /// Applies one selector rule (Redis's ACLSetSelector).
    pub fn apply(&mut self, op: &[u8]) -> Result<(), RuleError> {
        let is = |word: &str| op.eq_ignore_ascii_case(word.as_bytes());
        if op.is_empty() {
            return Err(RuleError::Syntax);
        }
        if is("allkeys") || op == b"~*" {
            self.all_keys = true;
            self.keys.clear();
        } else if is("resetkeys") {
            self.all_keys = false;
            self.keys.clear();
        } else if is("allchannels") || op == b"&*" {
            self.all_channels = true;
            self.channels.clear();
        } else if is("resetchannels") {
            self.all_channels = false;
            self.channels.clear();
        } else if is("allcommands") || is("+@all") {
            self.allowed = [u64::MAX; 8];
            self.all_commands = true;
            self.rules.clear();
            self.first_args.clear();
        } else if is("nocommands") || is("-@all") {
            self.allowed = [0; 8];
            self.all_commands = false;
            self.rules.clear();
            self.first_args.clear();
        } else if op[0] == b'~' || op[0] == b'%' {
            self.add_key_pattern(op)?;
        } else if op[0] == b'&' {
            if self.all_channels {
                return Err(RuleError::ChannelsAfterAll);
            }
            let pattern = &op[1..];
            if has_spaces(pattern) {
                return Err(RuleError::Syntax);
            }
            if !self.channels.iter().any(|c| c == pattern) {
                self.channels.push(pattern.to_vec());
            }
            self.all_channels = false;
        } else if op[0] == b'+' && op.get(1) != Some(&b'@') {
            self.allow_command(&op[1..])?;
        } else if op[0] == b'-' && op.get(1) != Some(&b'@') {
            let id = catalog()
                .lookup(until_nul(&op[1..]))
                .ok_or(RuleError::Unknown)?;
            self.change(id, false);
            self.record(catalog().entries[id].cmd.name.as_bytes(), false);
        } else if (op[0] == b'+' || op[0] == b'-') && op.get(1) == Some(&b'@') {
            let bit = category(&op[2..]).ok_or(RuleError::Unknown)?;
            let allow = op[0] == b'+';
            self.record(&op[1..], allow);
            self.set_category(bit, allow);
        } else {
            return Err(RuleError::Syntax);
        }
        Ok(())
    }

    fn add_key_pattern(&mut self, op: &[u8]) -> Result<(), RuleError> {
        if self.all_keys {
            return Err(RuleError::KeysAfterAll);
        }
        let (mut read, mut write) = (false, false);
        let mut offset = 1;
        if op[0] == b'%' {
            let mut ok = true;
            while offset < op.len() {
                match op[offset].to_ascii_uppercase() {
                    b'R' if !read => read = true,
                    b'W' if !write => write = true,
                    b'~' => {
                        offset += 1;
                        break;
                    }
                    _ => {
                        ok = false;
                        break;
                    }
                }
                offset += 1;
            }
            if !(read || write) || !ok {
                return Err(RuleError::Syntax);
            }
        } else {
            (read, write) = (true, true);
        }
        let pattern = &op[offset..];
        if has_spaces(pattern) {
            return Err(RuleError::Syntax);
        }
        match self.keys.iter_mut().find(|k| k.pattern == pattern) {
            Some(existing) => {
                existing.read |= read;
                existing.write |= write;
            }
            None => self.keys.push(KeyPattern {
                pattern: pattern.to_vec(),
                read,
                write,
            }),
        }
        self.all_keys = false;
        Ok(())
    }

    /// `+cmd`, `+cmd|sub`, or `+cmd|first-arg` for a command without subcommands.
    fn allow_command(&mut self, name: &[u8]) -> Result<(), RuleError> {
        let name = until_nul(name);
        let catalog = catalog();
        let Some(bar) = name.iter().rposition(|&b| b == b'|') else {
            let id = catalog.lookup(name).ok_or(RuleError::Unknown)?;
            self.change(id, true);
            self.record(catalog.entries[id].cmd.name.as_bytes(), true);
            return Ok(());
        };
        let (base, sub) = (&name[..bar], &name[bar + 1..]);
        let id = catalog.lookup(base).ok_or(RuleError::Unknown)?;
        if catalog.entries[id].is_sub {
            return Err(RuleError::FirstArgOfSubcommand);
        }
        if sub.is_empty() {
            return Err(RuleError::Syntax);
        }
        if !catalog.entries[id].subs.is_empty() {
            let sid = catalog.lookup(name).ok_or(RuleError::Unknown)?;
            self.change(sid, true);
        } else {
            crate::warning!(
                "Deprecation warning: Allowing a first arg of an otherwise blocked command is a misuse of ACL and may get disabled in the future (offender: +{})",
                String::from_utf8_lossy(name)
            );
            match self.first_args.iter_mut().find(|(i, _)| *i == id) {
                Some((_, args)) => {
                    if !args.iter().any(|a| a.eq_ignore_ascii_case(sub)) {
                        args.push(sub.to_vec());
                    }
                }
                None => self.first_args.push((id, vec![sub.to_vec()])),
            }
        }
        self.record(name, true);
        Ok(())
    }

    /// The command rules as GETUSER's `commands` shows them: `+@all` or `-@all`, then the
    /// rules in effect.
    pub fn describe_commands(&self) -> Vec<u8> {
        let mut out = if self.bit(FUTURE) {
            b"+@all".to_vec()
        } else {
            b"-@all".to_vec()
        };
        for rule in &self.rules {
            out.push(b' ');
            out.extend_from_slice(rule);
        }
        out
    }

    /// The selector as ACL LIST shows it: keys, channels, commands.
    pub fn describe(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.all_keys {
            out.extend_from_slice(b"~* ");
        } else {
            for k in &self.keys {
                out.extend_from_slice(&k.rule());
                out.push(b' ');
            }
        }
        if self.all_channels {
            out.extend_from_slice(b"&* ");
        } else {
            out.extend_from_slice(b"resetchannels ");
            for c in &self.channels {
                out.push(b'&');
                out.extend_from_slice(c);
                out.push(b' ');
            }
        }
        out.extend_from_slice(&self.describe_commands());
        out
    }

    /// Whether the selector lets `cmd` (id `id`) run with `args`, not looking at keys and
    /// channels.
    pub fn allows_command(&self, id: usize, cmd: &Command, args: &[&[u8]]) -> bool {
        if self.all_commands || cmd.flags.contains(crate::commands::Flags::NO_AUTH) {
            return true;
        }
        if self.bit(id) {
            return true;
        }
        let idx = if catalog().entries[id].is_sub { 2 } else { 1 };
        match (
            self.first_args.iter().find(|(i, _)| *i == id),
            args.get(idx),
        ) {
            (Some((_, allowed)), Some(arg)) if args.len() >= 2 => {
                let arg = until_nul(arg);
                allowed.iter().any(|a| a.eq_ignore_ascii_case(arg))
            }
            _ => false,
        }
    }

    /// Whether the selector lets a command use `key` as `access` says.
    pub fn allows_key(&self, key: &[u8], access: KeyAccess) -> bool {
        self.all_keys
            || self.keys.iter().any(|p| {
                (p.read || !access.read)
                    && (p.write || !access.write)
                    && glob_match(&p.pattern, key, false)
            })
    }

    /// Whether the selector lets a command publish or subscribe to `channel` (a pattern
    /// subscription, `is_pattern`, must be one of the patterns as written).
    pub fn allows_channel(&self, channel: &[u8], is_pattern: bool) -> bool {
        self.all_channels
            || self.channels.iter().any(|p| {
                if is_pattern {
                    p.as_slice() == until_nul(channel)
                } else {
                    glob_match(p, channel, false)
                }
            })
    }
}

/// Whether `s` has whitespace or NUL (not allowed in user names and patterns).
pub fn has_spaces(s: &[u8]) -> bool {
    s.iter()
        .any(|&c| c == 0 || c == b' ' || (b'\t'..=b'\r').contains(&c))
}
