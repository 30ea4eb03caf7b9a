//! ACL LOG: the recent refusals (commands, keys, channels, failed logins), similar ones
//! within a minute grouped into one entry with a count, as Redis 7.2 keeps them.

use std::collections::VecDeque;

/// Why an entry was logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// A command was refused.
    Command,
    /// A key was refused.
    Key,
    /// A channel was refused.
    Channel,
    /// AUTH or HELLO AUTH failed.
    Auth,
}

impl Reason {
    /// The `reason` field's text.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Command => "command",
            Reason::Key => "key",
            Reason::Channel => "channel",
            Reason::Auth => "auth",
        }
    }
}

/// Where the refused command ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Sent by the client.
    Toplevel,
    /// Queued in or run by MULTI/EXEC.
    Multi,
    /// Called by a script.
    Lua,
}

impl Context {
    /// The `context` field's text.
    pub fn name(self) -> &'static str {
        match self {
            Context::Toplevel => "toplevel",
            Context::Multi => "multi",
            Context::Lua => "lua",
        }
    }
}

/// One entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// How many refusals it groups.
    pub count: u64,
    /// Why.
    pub reason: Reason,
    /// Where.
    pub context: Context,
    /// The command, key, channel or (for logins) the command name as sent.
    pub object: Vec<u8>,
    /// The user refused (for logins, the name tried).
    pub username: Vec<u8>,
    /// The client's CLIENT LIST line at the last refusal.
    pub client_info: String,
    /// Unique id (a counter of the entries created).
    pub entry_id: u64,
    /// Unix ms of the first refusal.
    pub created_ms: u64,
    /// Unix ms of the last refusal.
    pub updated_ms: u64,
}

/// Refusals within this many ms of an entry's last one join it.
const GROUPING_MS: u64 = 60_000;

/// The log, newest first.
#[derive(Debug, Default)]
pub struct Log {
    entries: VecDeque<Entry>,
    created: u64,
    /// Refused logins (INFO's acl_access_denied_auth).
    pub denied_auth: u64,
    /// Refused commands (acl_access_denied_cmd).
    pub denied_cmd: u64,
    /// Refused keys (acl_access_denied_key).
    pub denied_key: u64,
    /// Refused channels (acl_access_denied_channel).
    pub denied_channel: u64,
}

/// What is known of a refusal when it happens.
pub struct Refusal<'a> {
    /// Why.
    pub reason: Reason,
    /// Where.
    pub context: Context,
    /// The object (see [`Entry::object`]).
    pub object: &'a [u8],
    /// The user.
    pub username: &'a [u8],
    /// The client's CLIENT LIST line.
    pub client_info: String,
    /// Unix ms now.
    pub now_ms: u64,
}

impl Log {
    /// Records a refusal, keeping at most `max_len` entries (acllog-max-len).
    pub fn add(&mut self, r: Refusal, max_len: usize) {
        *match r.reason {
            Reason::Auth => &mut self.denied_auth,
            Reason::Command => &mut self.denied_cmd,
            Reason::Key => &mut self.denied_key,
            Reason::Channel => &mut self.denied_channel,
        } += 1;
        if max_len == 0 {
            self.entries.clear();
            return;
        }
        let similar = self.entries.iter().take(10).position(|e| {
            e.reason == r.reason
                && e.context == r.context
                && e.updated_ms.abs_diff(r.now_ms) <= GROUPING_MS
                && e.object == r.object
                && e.username == r.username
        });
        if let Some(at) = similar {
            let mut e = self.entries.remove(at).expect("found");
            e.client_info = r.client_info;
            e.updated_ms = r.now_ms;
            e.count += 1;
            self.entries.push_front(e);
            return;
        }
        self.entries.push_front(Entry {
            count: 1,
            reason: r.reason,
            context: r.context,
            object: r.object.to_vec(),
            username: r.username.to_vec(),
            client_info: r.client_info,
            entry_id: self.created,
            created_ms: r.now_ms,
            updated_ms: r.now_ms,
        });
        self.created += 1;
        self.entries.truncate(max_len);
    }

    /// ACL LOG RESET.
    pub fn reset(&mut self) {
        self.entries.clear();
    }

    /// The entries, newest first.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = &Entry> {
        self.entries.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(object: &[u8], now_ms: u64) -> Refusal<'_> {
        Refusal {
            reason: Reason::Key,
            context: Context::Toplevel,
            object,
            username: b"u",
            client_info: String::from("id=1"),
            now_ms,
        }
    }

    #[test]
    fn similar_refusals_group_and_the_log_is_bounded() {
        let mut log = Log::default();
        log.add(refusal(b"a", 1000), 2);
        log.add(refusal(b"a", 2000), 2);
        assert_eq!(log.entries().len(), 1);
        let e = log.entries().next().unwrap();
        assert_eq!(
            (e.count, e.created_ms, e.updated_ms, e.entry_id),
            (2, 1000, 2000, 0)
        );
        log.add(refusal(b"a", 2000 + GROUPING_MS + 1), 2);
        log.add(refusal(b"b", 100_000), 2);
        let ids: Vec<u64> = log.entries().map(|e| e.entry_id).collect();
        assert_eq!(ids, [2, 1]);
        assert_eq!(log.denied_key, 4);
        log.add(refusal(b"c", 100_000), 0);
        assert_eq!(log.entries().len(), 0);
    }
}
