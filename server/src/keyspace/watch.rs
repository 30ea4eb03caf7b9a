//! WATCH bookkeeping: which clients watch which keys, and which of them saw a watched key
//! change (their EXEC will fail).

use hashbrown::{HashMap, HashSet};

/// Watchers by key, and the clients whose watched keys changed.
#[derive(Default)]
pub(super) struct Watches {
    /// (db, key) -> ids of the clients watching it.
    watchers: HashMap<(usize, Vec<u8>), Vec<u64>>,
    /// Clients whose WATCHed keys changed.
    dirty: HashSet<u64>,
}

impl Watches {
    /// Records that `client_id` watches `key` of `db`.
    pub(super) fn add(&mut self, db: usize, key: &[u8], client_id: u64) {
        self.watchers
            .entry((db, key.to_vec()))
            .or_default()
            .push(client_id);
    }

    /// `key` of `db` changed: its watchers become dirty.
    #[inline]
    pub(super) fn touch(&mut self, db: usize, key: &[u8]) {
        if self.watchers.is_empty() {
            return;
        }
        if let Some(ids) = self.watchers.get(&(db, key.to_vec())) {
            self.dirty.extend(ids.iter().copied());
        }
    }

    /// Every key of `db` for which `exists` holds changed (a flush or a swap).
    pub(super) fn touch_db(&mut self, db: usize, exists: impl Fn(&[u8]) -> bool) {
        let dirty: Vec<u64> = self
            .watchers
            .iter()
            .filter(|((d, k), _)| *d == db && exists(k))
            .flat_map(|(_, ids)| ids.iter().copied())
            .collect();
        self.dirty.extend(dirty);
    }

    /// Forgets `client_id`'s watches (drained from `watched`) and its dirty mark.
    pub(super) fn remove_client(
        &mut self,
        client_id: u64,
        watched: &mut Vec<(usize, Vec<u8>, bool)>,
    ) {
        for (db, key, _) in watched.drain(..) {
            if let hashbrown::hash_map::Entry::Occupied(mut o) = self.watchers.entry((db, key)) {
                o.get_mut().retain(|&id| id != client_id);
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
