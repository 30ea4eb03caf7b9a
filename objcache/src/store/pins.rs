//! Pins of lent storage: while something outside the shard lock may still read a location
//! (a head slot spliced by reference, an SSD tail extent streamed chunk by chunk), the
//! location is pinned, and releasing it (its object deleted, replaced, evicted or flushed)
//! only marks it; it is released for real at its last unpin. Used by `heads` (key: slot)
//! and `tail::extents` (key: first page, value: the extent's length in pages).
//!
//! ```text
//! pins: key -> { count, released, value (kept from the first pin) }
//! pin(k, v):   count += 1 (v is kept when k was not pinned)
//! release(k):  pinned: released = true, false (deferred); else true (release now)
//! unpin(k):    count -= 1; at 0, forget k, and Some(value) if it was released (release now)
//! ```

use std::collections::HashMap;
use std::hash::Hash;

/// One pinned location.
struct Pin<V> {
    count: u32,
    /// Released while pinned: the owner releases it at the last unpin.
    released: bool,
    value: V,
}

/// Pinned locations of type `K`, each with a `V` kept from its first pin (what the owner
/// needs to release it later, such as an extent's length).
pub struct Pins<K, V = ()> {
    map: HashMap<K, Pin<V>>,
}

impl<K, V> Default for Pins<K, V> {
    fn default() -> Self {
        Pins {
            map: HashMap::new(),
        }
    }
}

impl<K: Copy + Eq + Hash, V> Pins<K, V> {
    /// Adds a pin of `key`; `value` is kept if `key` was not pinned yet (else dropped).
    pub fn pin(&mut self, key: K, value: V) {
        self.map
            .entry(key)
            .or_insert(Pin {
                count: 0,
                released: false,
                value,
            })
            .count += 1;
    }

    /// Drops one pin of `key` (nothing if it is not pinned). At its last pin, returns the
    /// kept value if `key` was released while pinned: the caller releases it now.
    pub fn unpin(&mut self, key: K) -> Option<V> {
        let p = self.map.get_mut(&key)?;
        p.count -= 1;
        if p.count > 0 {
            return None;
        }
        self.map
            .remove(&key)
            .and_then(|p| p.released.then_some(p.value))
    }

    /// Asks to release `key`: true when it is not pinned (the caller releases it now); when
    /// pinned, marks it and returns false (released at its last unpin).
    pub fn release(&mut self, key: K) -> bool {
        match self.map.get_mut(&key) {
            Some(p) => {
                p.released = true;
                false
            }
            None => true,
        }
    }

    /// Marks every pinned key released (each is released at its last unpin).
    pub fn release_all(&mut self) {
        self.map.values_mut().for_each(|p| p.released = true);
    }

    /// True while `key` has a pin.
    pub fn is_pinned(&self, key: K) -> bool {
        self.map.contains_key(&key)
    }

    /// Pinned keys.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// The pinned keys with their kept values, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (K, &V)> {
        self.map.iter().map(|(&k, p)| (k, &p.value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_of_an_unpinned_key_is_immediate() {
        let mut p: Pins<u32> = Pins::default();
        assert!(p.release(3));
        assert!(!p.is_pinned(3));
        assert_eq!(p.unpin(3), None, "unpinning an unpinned key does nothing");
        assert_eq!(p.len(), 0);
    }

    #[test]
    fn release_while_pinned_is_deferred_to_the_last_unpin() {
        let mut p: Pins<u32, u32> = Pins::default();
        p.pin(7, 4);
        p.pin(7, 99);
        assert!(p.is_pinned(7));
        assert!(!p.release(7));
        assert!(!p.release(7), "releasing twice still defers");
        assert_eq!(p.unpin(7), None, "one pin left");
        assert!(p.is_pinned(7));
        assert_eq!(p.unpin(7), Some(4), "the value of the first pin");
        assert!(!p.is_pinned(7));
        assert_eq!(p.unpin(7), None);
    }

    #[test]
    fn unpinning_an_unreleased_key_forgets_it() {
        let mut p: Pins<u32> = Pins::default();
        p.pin(1, ());
        assert_eq!(p.unpin(1), None);
        assert!(!p.is_pinned(1));
        assert!(p.release(1));
    }

    #[test]
    fn release_all_marks_every_pinned_key() {
        let mut p: Pins<u32, u32> = Pins::default();
        p.pin(1, 10);
        p.pin(2, 20);
        p.pin(2, 20);
        assert_eq!(p.len(), 2);
        let mut keys: Vec<(u32, u32)> = p.iter().map(|(k, &v)| (k, v)).collect();
        keys.sort_unstable();
        assert_eq!(keys, [(1, 10), (2, 20)]);
        p.release_all();
        assert_eq!(p.unpin(1), Some(10));
        assert_eq!(p.unpin(2), None);
        assert_eq!(p.unpin(2), Some(20));
        assert_eq!(p.len(), 0);
        assert!(
            p.release(1) && p.release(2),
            "nothing pinned after a release_all"
        );
    }
}
