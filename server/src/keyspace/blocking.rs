//! The keys blocked clients wait on: the waiting clients of each key in arrival order, and
//! the keys that became non-empty while someone waits (served after the command).
//!
//! Only client ids live here; their connections are the server's.

use hashbrown::HashMap;
use std::collections::VecDeque;

/// Waiting clients by key, and the keys ready to serve them.
#[derive(Default)]
pub(super) struct BlockedKeys {
    /// (db, key) -> ids of the clients waiting on it, in arrival order.
    waiting: HashMap<(usize, Vec<u8>), VecDeque<u64>>,
    /// Keys that became non-empty while clients wait on them.
    ready: Vec<(usize, Vec<u8>)>,
}

impl BlockedKeys {
    /// Queues `client_id` on `key` of `db` (once).
    pub(super) fn add(&mut self, db: usize, key: &[u8], client_id: u64) {
        let queue = self.waiting.entry((db, key.to_vec())).or_default();
        if !queue.contains(&client_id) {
            queue.push_back(client_id);
        }
    }

    /// Takes `client_id` off the queue of `key` of `db`.
    pub(super) fn remove(&mut self, db: usize, key: Vec<u8>, client_id: u64) {
        let k = (db, key);
        if let Some(queue) = self.waiting.get_mut(&k) {
            queue.retain(|&id| id != client_id);
            if queue.is_empty() {
                self.waiting.remove(&k);
            }
        }
    }

    /// The clients waiting on `key` of `db`, in arrival order.
    pub(super) fn waiters(&self, db: usize, key: &[u8]) -> Vec<u64> {
        self.waiting
            .get(&(db, key.to_vec()))
            .map(|q| q.iter().copied().collect())
            .unwrap_or_default()
    }

    /// `key` of `db` may have become non-empty: queues it when someone waits on it.
    #[inline]
    pub(super) fn mark_ready(&mut self, db: usize, key: &[u8]) {
        if self.waiting.is_empty() {
            return;
        }
        if self.waiting.contains_key(&(db, key.to_vec()))
            && !self.ready.iter().any(|(d, k)| *d == db && k == key)
        {
            self.ready.push((db, key.to_vec()));
        }
    }

    /// The waited-on keys of `db`.
    pub(super) fn keys_of(&self, db: usize) -> Vec<Vec<u8>> {
        self.waiting
            .keys()
            .filter(|(d, _)| *d == db)
            .map(|(_, k)| k.clone())
            .collect()
    }

    /// Takes the ready keys, in the order they became ready.
    pub(super) fn take_ready(&mut self) -> Vec<(usize, Vec<u8>)> {
        std::mem::take(&mut self.ready)
    }

    /// Whether keys are ready.
    pub(super) fn any_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Number of keys someone waits on (INFO total_blocking_keys).
    pub(super) fn key_count(&self) -> usize {
        self.waiting.len()
    }
}
