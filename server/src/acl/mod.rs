//! Access control lists, as Redis 7.2 has them: users with passwords (stored as SHA-256
//! hex), command / category / key / channel rules in selectors, the permission check the
//! dispatcher runs before a command, the log of refusals, and the ACL file's text.
//!
//! - [`catalog`]: the categories and each command's id and categories (from COMMAND INFO's
//!   metadata).
//! - [`selector`]: one selector's rules and checks; [`user`]: a user's flags, passwords and
//!   selectors; [`check`]: the permission check; [`log`]: ACL LOG; [`file`]: ACL files and
//!   `user` directives.
//!
//! No I/O here: commands/acl_cmd.rs reads and writes the files and replies.

pub mod catalog;
pub mod check;
pub mod file;
pub mod log;
pub mod selector;
pub mod user;

pub use check::{check, may_read_any_key, Denial};
pub use user::User;

use crate::commands::Command;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Why a rule was refused (Redis's errno values of ACLSetUser), with its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleError {
    /// Not a rule, or a pattern with spaces (EINVAL).
    Syntax,
    /// No such command or category (ENOENT).
    Unknown,
    /// A key pattern after `allkeys` (EEXIST).
    KeysAfterAll,
    /// A channel pattern after `allchannels` (EISDIR).
    ChannelsAfterAll,
    /// `<pass` / `!hash` of a password the user does not have (ENODEV).
    NoSuchPassword,
    /// `#hash` / `!hash` that is not 64 lowercase hex digits (EBADMSG).
    BadHash,
    /// A user defined twice in the configuration (EALREADY).
    Duplicate,
    /// `+cmd|sub|arg` (ECHILD).
    FirstArgOfSubcommand,
}

impl RuleError {
    /// Redis's text (ACLSetUserStringError).
    pub fn message(self) -> &'static str {
        match self {
            RuleError::Unknown => "Unknown command or category name in ACL",
            RuleError::Syntax => "Syntax error",
            RuleError::KeysAfterAll => "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
            RuleError::ChannelsAfterAll => "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels",
            RuleError::NoSuchPassword => "The password you are trying to remove from the user does not exist",
            RuleError::BadHash => "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters",
            RuleError::Duplicate => "Duplicate user found. A user can only be defined once in config files",
            RuleError::FirstArgOfSubcommand => "Allowing first-arg of a subcommand is not supported",
        }
    }
}

/// The user a connection runs as, with the dispatcher's cached answer to "may it run
/// anything" (valid while the ACL's epoch has not moved).
#[derive(Debug, Clone)]
pub struct ClientUser {
    /// The user's name.
    pub name: Arc<[u8]>,
    epoch: u64,
    unrestricted: bool,
}

impl ClientUser {
    /// The default user.
    pub fn default_user() -> ClientUser {
        thread_local! {
            static DEFAULT: Arc<[u8]> = Arc::from(&b"default"[..]);
        }
        ClientUser {
            name: DEFAULT.with(Arc::clone),
            epoch: u64::MAX,
            unrestricted: false,
        }
    }

    /// The user called `name`.
    pub fn named(name: &[u8]) -> ClientUser {
        ClientUser {
            name: Arc::from(name),
            epoch: u64::MAX,
            unrestricted: false,
        }
    }
}

/// The users and the log.
#[derive(Debug)]
pub struct Acl {
    users: BTreeMap<Vec<u8>, User>,
    /// Moves at every change of any user: the connections' cached answers expire.
    epoch: u64,
    /// ACL LOG.
    pub log: log::Log,
    /// acl-pubsub-default allchannels (new users and selectors may use every channel).
    pub pubsub_default_all: bool,
}

impl Default for Acl {
    fn default() -> Acl {
        let mut users = BTreeMap::new();
        users.insert(b"default".to_vec(), User::new_default());
        Acl {
            users,
            epoch: 0,
            log: Default::default(),
            pubsub_default_all: false,
        }
    }
}

impl Acl {
    /// The user called `name`.
    pub fn user(&self, name: &[u8]) -> Option<&User> {
        self.users.get(name)
    }

    /// The default user.
    pub fn default_user(&self) -> &User {
        &self.users[&b"default"[..]]
    }

    /// Every user, by name.
    pub fn users(&self) -> impl ExactSizeIterator<Item = &User> {
        self.users.values()
    }

    /// Whether a connection that has not authenticated must (the default user has a
    /// password or is off).
    pub fn auth_required(&self) -> bool {
        let d = self.default_user();
        !d.nopass || !d.enabled
    }

    /// Whether a new connection starts authenticated (as the default user).
    pub fn starts_authenticated(&self) -> bool {
        !self.auth_required()
    }

    /// Whether `who` may run anything: the dispatcher's fast path. Cheap when nothing
    /// changed since the last call for this connection.
    #[inline]
    pub fn unrestricted(&self, who: &mut ClientUser) -> bool {
        if who.epoch != self.epoch {
            who.unrestricted = self.user(&who.name).is_some_and(User::unrestricted);
            who.epoch = self.epoch;
        }
        who.unrestricted
    }

    /// Whether `who` may run `cmd` with `args` (a connection whose user was deleted, and
    /// is being closed, may run nothing).
    pub fn check(&self, who: &ClientUser, cmd: &Command, args: &[&[u8]]) -> Result<(), Denial> {
        match self.user(&who.name) {
            Some(user) => check(user, cmd, args),
            None => Err(Denial::Command),
        }
    }

    /// [`may_read_any_key`] for the user of `who` (false when it was deleted).
    pub fn may_read_any_key(&self, who: &ClientUser, cmd: &Command, args: &[&[u8]]) -> bool {
        self.user(&who.name)
            .is_some_and(|user| may_read_any_key(user, cmd, args))
    }

    /// ACL SETUSER: applies `rules` to the user `name` (created if missing), all or none;
    /// the error is Redis's reply text (without `ERR `).
    pub fn set_user(&mut self, name: &[u8], rules: &[&[u8]]) -> Result<(), String> {
        let merged = user::merge_selector_args(rules).map_err(|at| {
            format!(
                "Unmatched parenthesis in acl selector starting at '{}'.",
                String::from_utf8_lossy(crate::errors::until_nul(rules[at]))
            )
        })?;
        let mut staged = match self.users.get(name) {
            Some(u) => u.clone(),
            None => User::new(name, self.pubsub_default_all),
        };
        for op in &merged {
            staged.apply(op, self.pubsub_default_all).map_err(|e| {
                format!(
                    "Error in ACL SETUSER modifier '{}': {}",
                    String::from_utf8_lossy(crate::errors::until_nul(op)),
                    e.message()
                )
            })?;
        }
        self.users.insert(name.to_vec(), staged);
        self.epoch += 1;
        Ok(())
    }

    /// Removes a user (never the default one); whether it existed.
    pub fn remove_user(&mut self, name: &[u8]) -> bool {
        if name == b"default" {
            return false;
        }
        self.epoch += 1;
        self.users.remove(name).is_some()
    }

    /// Replaces every user (ACL LOAD, start-up): the default user stays if `users` lacks
    /// one.
    pub fn replace_users(&mut self, mut users: BTreeMap<Vec<u8>, User>) {
        users
            .entry(b"default".to_vec())
            .or_insert_with(User::new_default);
        self.users = users;
        self.epoch += 1;
    }

    /// requirepass: the default user's only password, or nopass when `None`.
    pub fn set_default_password(&mut self, password: Option<&[u8]>) {
        let default = self.users.get_mut(&b"default"[..]).expect("default user");
        default.apply(b"resetpass", false).expect("valid rule");
        match password {
            Some(p) => {
                let mut op = b">".to_vec();
                op.extend_from_slice(p);
                default.apply(&op, false).expect("valid rule");
            }
            None => default.apply(b"nopass", false).expect("valid rule"),
        }
        self.epoch += 1;
    }
}

/// The NOPERM text of a refusal at the top level, as Redis 7.2 words it (without the
/// `NOPERM ` code).
pub fn denial_message(user: &[u8], cmd_name: &str, denial: Denial) -> String {
    match denial {
        Denial::Command => format!(
            "User {} has no permissions to run the '{cmd_name}' command",
            String::from_utf8_lossy(user)
        ),
        Denial::Key(_) => "No permissions to access a key".to_owned(),
        Denial::Channel(_) => "No permissions to access a channel".to_owned(),
    }
}

/// The verbose text ACL DRYRUN answers, naming the key or channel.
pub fn denial_message_verbose(user: &[u8], cmd_name: &str, denial: Denial, arg: &[u8]) -> String {
    let user = String::from_utf8_lossy(user);
    let arg = String::from_utf8_lossy(arg);
    match denial {
        Denial::Command => {
            format!("User {user} has no permissions to run the '{cmd_name}' command")
        }
        Denial::Key(_) => format!("User {user} has no permissions to access the '{arg}' key"),
        Denial::Channel(_) => {
            format!("User {user} has no permissions to access the '{arg}' channel")
        }
    }
}

#[cfg(test)]
mod tests;
