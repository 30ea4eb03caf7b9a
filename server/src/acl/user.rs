//! A user: on/off, passwords (SHA-256 hex, as Redis stores them) and selectors, changed by
//! the rules of ACL SETUSER, `user` directives and ACL files (Redis's ACLSetUser).

use super::selector::{has_spaces, Selector};
use super::RuleError;
use sha2::{Digest, Sha256};

/// The length of a password hash in hex.
pub const HASH_LEN: usize = 64;

/// One user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// Its name.
    pub name: Vec<u8>,
    /// `on` (else `off`: nobody can log in as it).
    pub enabled: bool,
    /// `nopass`: any password is accepted.
    pub nopass: bool,
    /// `sanitize-payload` (true, what a new user has, as Redis 7.2 creates it) or
    /// `skip-sanitize-payload` (false).
    pub sanitize_payload: bool,
    /// Password hashes (lowercase hex), in the order added.
    pub passwords: Vec<Vec<u8>>,
    /// The root selector first, then the `(...)` ones.
    pub selectors: Vec<Selector>,
}

/// The SHA-256 of `password` in lowercase hex, as Redis stores passwords.
pub fn hash_password(password: &[u8]) -> Vec<u8> {
    let digest = Sha256::digest(password);
    let mut hex = Vec::with_capacity(HASH_LEN);
    for b in digest {
        hex.push(b"0123456789abcdef"[(b >> 4) as usize]);
        hex.push(b"0123456789abcdef"[(b & 15) as usize]);
    }
    hex
}

fn valid_hash(hash: &[u8]) -> bool {
    hash.len() == HASH_LEN && hash.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

impl User {
    /// A new user as Redis 7.2 creates one: off, no passwords, no permissions, payloads
    /// sanitized.
    pub fn new(name: &[u8], all_channels: bool) -> User {
        User {
            name: name.to_vec(),
            enabled: false,
            nopass: false,
            sanitize_payload: true,
            passwords: Vec::new(),
            selectors: vec![Selector::new(true, all_channels)],
        }
    }

    /// The default user as Redis creates it: on, nopass, every key, channel and command.
    pub fn new_default() -> User {
        let mut u = User::new(b"default", false);
        for op in ["+@all", "~*", "&*", "on", "nopass"] {
            u.apply(op.as_bytes(), false)
                .expect("the default user's rules are valid");
        }
        u
    }

    /// The root selector.
    pub fn root(&self) -> &Selector {
        &self.selectors[0]
    }

    /// Whether the user may run anything on any key and channel (the dispatcher's fast
    /// path skips the checks for it).
    pub fn unrestricted(&self) -> bool {
        let r = self.root();
        r.all_commands && r.all_keys && r.all_channels
    }

    /// Applies one rule; `all_channels` is acl-pubsub-default (for `reset` and new
    /// selectors).
    pub fn apply(&mut self, op: &[u8], all_channels: bool) -> Result<(), RuleError> {
        if op.is_empty() {
            return Ok(());
        }
        let is = |word: &str| op.eq_ignore_ascii_case(word.as_bytes());
        if is("on") {
            self.enabled = true;
        } else if is("off") {
            self.enabled = false;
        } else if is("skip-sanitize-payload") {
            self.sanitize_payload = false;
        } else if is("sanitize-payload") {
            self.sanitize_payload = true;
        } else if is("nopass") {
            self.nopass = true;
            self.passwords.clear();
        } else if is("resetpass") {
            self.nopass = false;
            self.passwords.clear();
        } else if op[0] == b'>' || op[0] == b'#' {
            let hash = if op[0] == b'>' {
                hash_password(&op[1..])
            } else if valid_hash(&op[1..]) {
                op[1..].to_vec()
            } else {
                return Err(RuleError::BadHash);
            };
            if !self.passwords.contains(&hash) {
                self.passwords.push(hash);
            }
            self.nopass = false;
        } else if op[0] == b'<' || op[0] == b'!' {
            let hash = if op[0] == b'<' {
                hash_password(&op[1..])
            } else if valid_hash(&op[1..]) {
                op[1..].to_vec()
            } else {
                return Err(RuleError::BadHash);
            };
            let at = self
                .passwords
                .iter()
                .position(|p| *p == hash)
                .ok_or(RuleError::NoSuchPassword)?;
            self.passwords.remove(at);
        } else if op[0] == b'(' && op[op.len() - 1] == b')' {
            let mut selector = Selector::new(false, all_channels);
            // As Redis: the inside is split like a command line; unbalanced quotes leave
            // an empty selector.
            let inside = &op[1..op.len() - 1];
            for arg in crate::resp::parse::split_args(inside).unwrap_or_default() {
                selector.apply(&arg)?;
            }
            self.selectors.push(selector);
        } else if is("clearselectors") {
            self.selectors.truncate(1);
        } else if is("reset") {
            for op in ["resetpass", "resetkeys", "resetchannels"] {
                self.apply(op.as_bytes(), all_channels)?;
            }
            if all_channels {
                self.apply(b"allchannels", all_channels)?;
            }
            for op in ["off", "sanitize-payload", "clearselectors", "-@all"] {
                self.apply(op.as_bytes(), all_channels)?;
            }
        } else {
            self.selectors[0].apply(op)?;
        }
        Ok(())
    }

    /// The rules that make this user, as ACL LIST shows them after `user <name> `.
    pub fn describe(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for name in self.flag_names() {
            out.extend_from_slice(name.as_bytes());
            out.push(b' ');
        }
        for p in &self.passwords {
            out.push(b'#');
            out.extend_from_slice(p);
            out.push(b' ');
        }
        for s in &self.selectors {
            if s.root {
                out.extend_from_slice(&s.describe());
            } else {
                out.extend_from_slice(b" (");
                out.extend_from_slice(&s.describe());
                out.push(b')');
            }
        }
        out
    }

    /// The flags GETUSER lists and ACL LIST starts with, in Redis's order.
    pub fn flag_names(&self) -> Vec<&'static str> {
        let flags = [
            (self.enabled, "on"),
            (!self.enabled, "off"),
            (self.nopass, "nopass"),
            (!self.sanitize_payload, "skip-sanitize-payload"),
            (self.sanitize_payload, "sanitize-payload"),
        ];
        flags.iter().filter(|(s, _)| *s).map(|(_, n)| *n).collect()
    }

    /// Whether `password` logs in as this user (on, and nopass or a matching hash).
    pub fn password_ok(&self, password: &[u8]) -> bool {
        if !self.enabled {
            return false;
        }
        if self.nopass {
            return true;
        }
        let hashed = hash_password(password);
        // Compared in full whatever matches, as Redis's time_independent_strcmp.
        self.passwords.iter().fold(false, |found, p| {
            let diff = p.iter().zip(&hashed).fold(0u8, |d, (a, b)| d | (a ^ b));
            found | (diff == 0)
        })
    }
}

/// Joins selector rules spread over several arguments (`(~a*` `+get)`) into one, as Redis's
/// ACLMergeSelectorArguments; an unclosed `(` is an error naming the index of the argument
/// it opened in.
pub fn merge_selector_args(args: &[&[u8]]) -> Result<Vec<Vec<u8>>, usize> {
    let mut out = Vec::new();
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (j, op) in args.iter().enumerate() {
        let closes = op.last() == Some(&b')');
        match &mut open {
            None if op.first() == Some(&b'(') && !closes => open = Some((j, op.to_vec())),
            None => out.push(op.to_vec()),
            Some((_, selector)) => {
                selector.push(b' ');
                selector.extend_from_slice(crate::errors::until_nul(op));
                if closes {
                    out.push(open.take().expect("open").1);
                }
            }
        }
    }
    match open {
        Some((j, _)) => Err(j),
        None => Ok(out),
    }
}

/// Whether a user name is acceptable (no spaces or NUL).
pub fn valid_name(name: &[u8]) -> bool {
    !has_spaces(name)
}

/// The channel patterns `new` allows, when it may not allow every channel `old` allowed
/// (Redis's getUpcomingChannelList): `None` when nothing was taken away.
pub fn narrowed_channels(new: &User, old: &User) -> Option<Vec<Vec<u8>>> {
    if new.selectors.iter().any(|s| s.all_channels) {
        return None;
    }
    let upcoming: Vec<Vec<u8>> = new
        .selectors
        .iter()
        .flat_map(|s| s.channels.iter().cloned())
        .collect();
    let kept = old
        .selectors
        .iter()
        .all(|s| !s.all_channels && s.channels.iter().all(|c| upcoming.contains(c)));
    (!kept).then_some(upcoming)
}

/// Whether a subscription (a channel, or with `is_pattern` a pattern as subscribed) is
/// still allowed by the `upcoming` channel patterns.
pub fn subscription_allowed(upcoming: &[Vec<u8>], name: &[u8], is_pattern: bool) -> bool {
    upcoming.iter().any(|p| {
        if is_pattern {
            p.as_slice() == name
        } else {
            crate::glob::glob_match(p, name, false)
        }
    })
}
