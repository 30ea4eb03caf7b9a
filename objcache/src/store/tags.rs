//! The tag index of one shard: which entries carry which tags, so that one purge reaches
//! every object carrying a tag. Tags are 64-bit hashes the front chooses (surrogate keys,
//! path prefixes); the store gives them no meaning.
//!
//! Two maps under the shard's lock: tag -> set of entry ids, and entry id -> its tags. The
//! shard forgets an entry's tags whenever it unlinks the entry (eviction, expiry, delete,
//! replacement), so the index never names an entry that is gone and never outlives what it
//! indexes; with at most [`MAX_TAGS`] tags per entry its size is bounded by the shard's
//! entries.

use hashbrown::{HashMap, HashSet};

/// Most tags one entry carries; further tags are ignored.
pub const MAX_TAGS: usize = 32;

/// The tag index of one shard.
#[derive(Default)]
pub struct TagIndex {
    by_tag: HashMap<u64, HashSet<u32>>,
    by_id: HashMap<u32, Box<[u64]>>,
}

impl TagIndex {
    /// Sets the tags of entry `id` (replacing any it had), at most [`MAX_TAGS`] of them.
    pub fn set(&mut self, id: u32, tags: &[u64]) {
        self.forget(id);
        let mut mine: Vec<u64> = Vec::with_capacity(tags.len().min(MAX_TAGS));
        for &t in tags {
            if mine.len() == MAX_TAGS {
                break;
            }
            if !mine.contains(&t) {
                mine.push(t);
                self.by_tag.entry(t).or_default().insert(id);
            }
        }
        if !mine.is_empty() {
            self.by_id.insert(id, mine.into_boxed_slice());
        }
    }

    /// Drops entry `id` from the index (it is being unlinked).
    pub fn forget(&mut self, id: u32) {
        let Some(tags) = self.by_id.remove(&id) else {
            return;
        };
        for t in tags.iter() {
            if let Some(ids) = self.by_tag.get_mut(t) {
                ids.remove(&id);
                if ids.is_empty() {
                    self.by_tag.remove(t);
                }
            }
        }
    }

    /// The entries carrying any of `tags`, each once.
    pub fn carrying(&self, tags: &[u64]) -> Vec<u32> {
        let mut ids: HashSet<u32> = HashSet::new();
        for t in tags {
            if let Some(set) = self.by_tag.get(t) {
                ids.extend(set.iter().copied());
            }
        }
        ids.into_iter().collect()
    }

    /// Drops everything (flush_all).
    pub fn clear(&mut self) {
        self.by_tag.clear();
        self.by_id.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(mut v: Vec<u32>) -> Vec<u32> {
        v.sort_unstable();
        v
    }

    #[test]
    fn set_carrying_forget() {
        let mut t = TagIndex::default();
        t.set(1, &[10, 20]);
        t.set(2, &[20, 20, 30]);
        t.set(3, &[]);
        assert_eq!(sorted(t.carrying(&[20])), vec![1, 2]);
        assert_eq!(sorted(t.carrying(&[10, 30])), vec![1, 2]);
        assert_eq!(t.carrying(&[99]), Vec::<u32>::new());
        assert_eq!(t.by_id.len(), 2);
        t.forget(1);
        assert_eq!(t.carrying(&[20]), vec![2]);
        assert!(t.carrying(&[10]).is_empty());
        assert!(!t.by_tag.contains_key(&10), "an empty tag leaves the index");
        // Setting again replaces.
        t.set(2, &[40]);
        assert!(t.carrying(&[20, 30]).is_empty());
        assert_eq!(t.carrying(&[40]), vec![2]);
        t.forget(7);
        t.clear();
        assert!(t.by_id.is_empty() && t.by_tag.is_empty());
    }

    #[test]
    fn bounded_per_entry() {
        let mut t = TagIndex::default();
        let many: Vec<u64> = (0..100).collect();
        t.set(5, &many);
        assert_eq!(t.by_id[&5].len(), MAX_TAGS);
        assert_eq!(t.by_tag.len(), MAX_TAGS);
        assert!(t.carrying(&[99]).is_empty());
        t.forget(5);
        assert!(t.by_tag.is_empty());
    }
}
