//! WATCH bookkeeping: which clients watch which keys, and which of them saw a watched key
//! change (their EXEC will fail).

use hashbrown::{HashMap, HashSet};

/// Watchers by key, and the clients whose watched keys changed.
#[derive(Default)]
pub(super) struct Watches {
    /// (db, key) -> the clients watching it, in the order they started.
    watchers: HashMap<(usize, Vec<u8>), Vec<Watcher>>,
    /// Clients whose WATCHed keys changed.
    dirty: HashSet<u64>,
}

/// One client's watch of a key.
struct Watcher {
    id: u64,
    /// The key existed but had expired when the WATCH came (Redis's watchedKey.expired):
    /// its deletion is no change, until the flag clears.
    expired: bool,
}

impl Watches {
    /// Records that `client_id` watches `key` of `db`, which was there but `expired`.
    pub(super) fn add(&mut self, db: usize, key: &[u8], client_id: u64, expired: bool) {
        self.watchers
            .entry((db, key.to_vec()))
            .or_default()
            .push(Watcher {
                id: client_id,
                expired,
            });
    }

    /// `key` of `db` changed and now `exists` or not: its watchers become dirty, as
    /// Redis's touchWatchedKey. A watcher that saw the key expired sees its deletion as no
    /// change (and forgets it saw it expired); when the key is there again, Redis stops
    /// at that watcher and the ones after it stay clean.
    #[inline]
    pub(super) fn touch(&mut self, db: usize, key: &[u8], exists: impl FnOnce() -> bool) {
        if self.watchers.is_empty() {
            return;
        }
        let Some(watchers) = self.watchers.get_mut(&(db, key.to_vec())) else {
            return;
        };
        let exists = exists();
        for w in watchers.iter_mut() {
            // Redis drops a dirty client's watches: it no longer takes part.
            if self.dirty.contains(&w.id) {
                continue;
            }
            if w.expired {
                if exists {
                    break;
                }
                w.expired = false;
                continue;
            }
            self.dirty.insert(w.id);
        }
    }

    /// Database `db` is emptied (`emptied` says whether a key was in it) and, for SWAPDB,
    /// filled with another's keys (`replacement`: None when the key is not there, else
    /// whether it has expired): the watchers of the keys that change become dirty, as
    /// Redis's touchAllWatchedKeysInDb (an expired key that goes, or stays expired, or a
    /// missing key that comes back expired, is no change).
    pub(super) fn touch_db(
        &mut self,
        db: usize,
        emptied: impl Fn(&[u8]) -> bool,
        replacement: impl Fn(&[u8]) -> Option<bool>,
    ) {
        for ((d, key), watchers) in &mut self.watchers {
            if *d != db {
                continue;
            }
            let was_there = emptied(key);
            let comes = replacement(key);
            if !was_there && comes.is_none() {
                continue;
            }
            for w in watchers.iter_mut() {
                if w.expired {
                    match comes {
                        None => {
                            w.expired = false;
                            continue;
                        }
                        Some(true) => continue,
                        Some(false) => {}
                    }
                } else if !was_there && comes == Some(true) {
                    w.expired = true;
                    continue;
                }
                self.dirty.insert(w.id);
            }
        }
    }

    /// Forgets `client_id`'s watches (drained from `watched`) and its dirty mark.
    pub(super) fn remove_client(
        &mut self,
        client_id: u64,
        watched: &mut Vec<(usize, Vec<u8>, bool)>,
    ) {
        for (db, key, _) in watched.drain(..) {
            if let hashbrown::hash_map::Entry::Occupied(mut o) = self.watchers.entry((db, key)) {
                o.get_mut().retain(|w| w.id != client_id);
                if o.get().is_empty() {
                    o.remove();
                }
            }
        }
        self.dirty.remove(&client_id);
    }

    /// Whether a key `client_id` watches changed.
    pub(super) fn is_dirty(&self, client_id: u64) -> bool {
        self.dirty.contains(&client_id)
    }
}
