//! Server-assisted client-side caching (CLIENT TRACKING), as Redis's tracking.c keeps it.
//!
//! Two tables, both by key name alone (databases are not told apart, as in Redis):
//!
//! ```text
//! keys      key    -> ids of the clients that read it (default mode); a change of the key
//!                     sends each an invalidation and forgets the entry
//! prefixes  prefix -> ids of the BCAST clients on it, and the keys changed under it since
//!                     the last broadcast (with the first client that changed each, for
//!                     NOLOOP); sent once per event-loop round, then emptied
//! ```
//!
//! The keyspace collects the keys written while any client tracks
//! ([`crate::keyspace::Keyspace::take_modified`]); `commands::tracking` settles them (takes
//! their readers out of the table) before any later read of the same command, transaction or
//! script is remembered, and sends the messages before a command's reply for the keys
//! eviction removed to make room for it, after its reply for the rest, and in the loop's round.

pub mod frame;

use std::collections::{BTreeMap, HashMap};

/// A client's tracking mode (CLIENT TRACKING and CLIENT CACHING).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientTracking {
    /// Tracking is on.
    pub on: bool,
    /// BCAST: told about every key under its prefixes, whatever it read.
    pub bcast: bool,
    /// OPTIN: only the keys of a command after CLIENT CACHING YES are remembered.
    pub optin: bool,
    /// OPTOUT: the keys of a command after CLIENT CACHING NO are not remembered.
    pub optout: bool,
    /// NOLOOP: not told about its own changes.
    pub noloop: bool,
    /// The client that receives the invalidations (0: this one).
    pub redirect: u64,
    /// The client redirected to is gone.
    pub broken_redirect: bool,
    /// CLIENT CACHING was given for the next command (or transaction).
    pub caching: bool,
    /// BCAST prefixes, sorted.
    pub prefixes: Vec<Vec<u8>>,
}

impl ClientTracking {
    /// Whether the keys of the command running now are remembered (OPTIN and OPTOUT rules).
    pub fn remembers_reads(&self) -> bool {
        let opted_out = (self.optin && !self.caching) || (self.optout && self.caching);
        self.on && !self.bcast && !opted_out
    }
}

/// The keys changed under one BCAST prefix, and who listens.
#[derive(Debug, Default)]
struct Prefix {
    clients: Vec<u64>,
    /// Changed keys, sorted, with the first client that changed each (0: the server).
    changed: BTreeMap<Vec<u8>, u64>,
}

/// The server's tracking tables and counters.
#[derive(Debug, Default)]
pub struct Tracking {
    keys: HashMap<Vec<u8>, Vec<u64>>,
    /// (key, client) pairs in `keys` (INFO tracking_total_items).
    items: usize,
    prefixes: BTreeMap<Vec<u8>, Prefix>,
    /// Clients with tracking on (INFO tracking_clients).
    clients: usize,
    /// Changes already taken out of the table whose readers are not told yet: a flush, and
    /// each key with its readers. Settled when the change is seen, before a later read can
    /// put the key back (as Redis decides who to tell when the key changes).
    pending: Pending,
}

/// Invalidations decided and not yet sent.
#[derive(Debug, Default)]
pub struct Pending {
    /// A flush: every tracking client is told with a null key list.
    pub flush: bool,
    /// Keys changed, with the clients that had read them.
    pub keys: Vec<(Vec<u8>, Vec<u64>)>,
}

impl Tracking {
    /// Clients with tracking on.
    pub fn clients(&self) -> usize {
        self.clients
    }

    /// Whether the tables need the keyspace's changes: a client tracks, or keys read while
    /// one did are still in the table (as Redis, which empties its table on a flush and
    /// drops a key when it changes whether or not anyone tracks now).
    pub fn active(&self) -> bool {
        self.clients > 0 || !self.keys.is_empty()
    }

    /// Keys in the table (INFO tracking_total_keys).
    pub fn keys(&self) -> usize {
        self.keys.len()
    }

    /// (key, client) pairs in the table (INFO tracking_total_items).
    pub fn items(&self) -> usize {
        self.items
    }

    /// BCAST prefixes (INFO tracking_total_prefixes).
    pub fn prefixes(&self) -> usize {
        self.prefixes.len()
    }

    /// Turns tracking on for client `id` with `mode` (whose `prefixes` are added to the ones
    /// it had, as a second CLIENT TRACKING ON does).
    pub fn enable(&mut self, id: u64, state: &mut ClientTracking, mode: ClientTracking) {
        if !state.on {
            self.clients += 1;
        }
        let mut prefixes = std::mem::take(&mut state.prefixes);
        if mode.bcast {
            let added = if mode.prefixes.is_empty() {
                vec![Vec::new()]
            } else {
                mode.prefixes.clone()
            };
            for prefix in added {
                let entry = self.prefixes.entry(prefix.clone()).or_default();
                if !entry.clients.contains(&id) {
                    entry.clients.push(id);
                }
                if !prefixes.contains(&prefix) {
                    prefixes.push(prefix);
                }
            }
            prefixes.sort();
        }
        *state = ClientTracking {
            on: true,
            prefixes,
            ..mode
        };
    }

    /// Turns tracking off for client `id` (CLIENT TRACKING OFF, RESET, a closed
    /// connection). Its entries in the key table go when their keys change.
    pub fn disable(&mut self, id: u64, state: &mut ClientTracking) {
        for prefix in &state.prefixes {
            if let Some(entry) = self.prefixes.get_mut(prefix) {
                entry.clients.retain(|&c| c != id);
                if entry.clients.is_empty() {
                    self.prefixes.remove(prefix);
                }
            }
        }
        if state.on {
            self.clients -= 1;
        }
        *state = ClientTracking::default();
    }

    /// Client `id` read `key`.
    pub fn remember(&mut self, id: u64, key: &[u8]) {
        let ids = self.keys.entry(key.to_vec()).or_default();
        if !ids.contains(&id) {
            ids.push(id);
            self.items += 1;
        }
    }

    /// `key` changed (by client `origin`, 0 for the server itself): the clients that read
    /// it, who must be told, and the BCAST prefixes it falls under note it.
    fn changed(&mut self, key: &[u8], origin: u64) -> Vec<u64> {
        for (prefix, entry) in self.prefixes.iter_mut() {
            if key.starts_with(prefix) {
                entry.changed.entry(key.to_vec()).or_insert(origin);
            }
        }
        let readers = self.keys.remove(key).unwrap_or_default();
        self.items -= readers.len();
        readers
    }

    /// The keyspace's changes (`keys`, and `flushed` for a flush) made by client `origin`
    /// (0: the server): their readers are taken out of the table now and kept until
    /// [`Tracking::take_pending`]. A flush empties the key table.
    pub fn settle(&mut self, keys: Vec<Vec<u8>>, flushed: bool, origin: u64) {
        if flushed {
            self.keys.clear();
            self.items = 0;
            self.pending.flush = true;
        }
        for key in keys {
            let readers = self.changed(&key, origin);
            if !readers.is_empty() {
                self.pending.keys.push((key, readers));
            }
        }
    }

    /// The invalidations settled and not sent yet, emptied.
    pub fn take_pending(&mut self) -> Pending {
        std::mem::take(&mut self.pending)
    }

    /// Keys beyond `max` (tracking-table-max-keys, 0 for no limit), taken out of the table
    /// with their readers, for them to be told.
    pub fn over_limit(&mut self, max: usize) -> Vec<(Vec<u8>, Vec<u64>)> {
        if max == 0 || self.keys.len() <= max {
            return Vec::new();
        }
        let extra: Vec<Vec<u8>> = self
            .keys
            .keys()
            .take(self.keys.len() - max)
            .cloned()
            .collect();
        extra
            .into_iter()
            .map(|key| {
                let readers = self.keys.remove(&key).unwrap_or_default();
                self.items -= readers.len();
                (key, readers)
            })
            .collect()
    }

    /// The BCAST messages of this round: for each listening client, the keys changed
    /// under its prefix (without its own changes when `noloop(client)`), emptied after.
    pub fn broadcast(&mut self, noloop: impl Fn(u64) -> bool) -> Vec<(u64, Vec<Vec<u8>>)> {
        let mut messages = Vec::new();
        for entry in self.prefixes.values_mut() {
            if entry.changed.is_empty() {
                continue;
            }
            let changed = std::mem::take(&mut entry.changed);
            for &id in &entry.clients {
                let keys: Vec<Vec<u8>> = changed
                    .iter()
                    .filter(|(_, &by)| !(noloop(id) && by == id))
                    .map(|(k, _)| k.clone())
                    .collect();
                if !keys.is_empty() {
                    messages.push((id, keys));
                }
            }
        }
        messages
    }
}

/// Whether two prefixes overlap (one starts the other), which one client may not have.
pub fn overlap(a: &[u8], b: &[u8]) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bcast(prefixes: &[&str], noloop: bool) -> ClientTracking {
        ClientTracking {
            bcast: true,
            noloop,
            prefixes: prefixes.iter().map(|p| p.as_bytes().to_vec()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn readers_are_told_once() {
        let mut t = Tracking::default();
        let mut state = ClientTracking::default();
        t.enable(7, &mut state, ClientTracking::default());
        t.remember(7, b"k");
        t.remember(7, b"k");
        assert_eq!((t.keys(), t.items(), t.clients()), (1, 1, 1));
        assert_eq!(t.changed(b"k", 0), vec![7]);
        assert!(t.changed(b"k", 0).is_empty());
        t.disable(7, &mut state);
        assert_eq!(t.clients(), 0);
    }

    #[test]
    fn a_settled_change_keeps_its_readers_when_the_key_is_read_again() {
        let mut t = Tracking::default();
        let mut state = ClientTracking::default();
        t.enable(7, &mut state, ClientTracking::default());
        t.remember(7, b"k");
        t.settle(vec![b"k".to_vec(), b"unread".to_vec()], false, 7);
        t.remember(7, b"k");
        let pending = t.take_pending();
        assert!(!pending.flush);
        assert_eq!(pending.keys, vec![(b"k".to_vec(), vec![7])]);
        assert_eq!((t.keys(), t.items()), (1, 1), "the new read stays tracked");
        t.settle(Vec::new(), true, 0);
        assert!(t.take_pending().flush);
        assert_eq!(t.keys(), 0);
        assert!(!t.take_pending().flush, "taken once");
    }

    #[test]
    fn broadcast_groups_changes_by_prefix_and_skips_own_under_noloop() {
        let mut t = Tracking::default();
        let (mut a, mut b) = (ClientTracking::default(), ClientTracking::default());
        t.enable(1, &mut a, bcast(&["user:"], false));
        t.enable(2, &mut b, bcast(&["user:"], true));
        t.changed(b"user:2", 2);
        t.changed(b"user:1", 1);
        t.changed(b"other", 1);
        let noloop = |id| id == 2;
        let mut messages = t.broadcast(noloop);
        messages.sort();
        assert_eq!(
            messages,
            vec![
                (1, vec![b"user:1".to_vec(), b"user:2".to_vec()]),
                (2, vec![b"user:1".to_vec()]),
            ]
        );
        assert!(t.broadcast(noloop).is_empty(), "sent once");
        t.disable(1, &mut a);
        t.disable(2, &mut b);
        assert_eq!(t.prefixes(), 0);
    }

    #[test]
    fn over_limit_takes_out_the_extra_keys() {
        let mut t = Tracking::default();
        for k in 0..5u8 {
            t.remember(1, &[k]);
        }
        assert_eq!(t.over_limit(3).len(), 2);
        assert_eq!((t.keys(), t.items()), (3, 3));
        assert!(t.over_limit(0).is_empty());
    }

    #[test]
    fn optin_and_optout_decide_with_caching() {
        let on = |optin, optout, caching| ClientTracking {
            on: true,
            optin,
            optout,
            caching,
            ..Default::default()
        };
        assert!(on(false, false, false).remembers_reads());
        assert!(!on(true, false, false).remembers_reads());
        assert!(on(true, false, true).remembers_reads());
        assert!(on(false, true, false).remembers_reads());
        assert!(!on(false, true, true).remembers_reads());
    }
}
