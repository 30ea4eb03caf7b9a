//! SIEVE eviction (Zhang et al., NSDI 2024): one FIFO queue, a visited bit per object and a
//! hand that walks from the oldest object toward the newest. A hit only sets the bit, so
//! reads never reorder the queue; the hand clears bits as it passes and evicts the first
//! object whose bit is clear. It beats LRU on skewed traffic because a burst of one-hit
//! objects is evicted before objects that were hit again.
//!
//! The policy only sees ids; the caller removes the victim's bytes (pingora's
//! `EvictionManager` works the same way).

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Node {
    /// Toward the newest object.
    newer: u32,
    /// Toward the oldest object.
    older: u32,
    visited: bool,
    linked: bool,
}

const UNLINKED: Node = Node {
    newer: NIL,
    older: NIL,
    visited: false,
    linked: false,
};

/// A SIEVE queue over dense `u32` ids.
pub struct Sieve {
    nodes: Vec<Node>,
    newest: u32,
    oldest: u32,
    hand: u32,
    len: usize,
}

impl Default for Sieve {
    fn default() -> Self {
        Sieve {
            nodes: Vec::new(),
            newest: NIL,
            oldest: NIL,
            hand: NIL,
            len: 0,
        }
    }
}

impl Sieve {
    /// Adds `id` as the newest object, not visited.
    pub fn insert(&mut self, id: u32) {
        let i = id as usize;
        if self.nodes.len() <= i {
            self.nodes.resize(i + 1, UNLINKED);
        }
        debug_assert!(!self.nodes[i].linked, "id {id} inserted twice");
        self.nodes[i] = Node {
            newer: NIL,
            older: self.newest,
            visited: false,
            linked: true,
        };
        if self.newest != NIL {
            self.nodes[self.newest as usize].newer = id;
        }
        self.newest = id;
        if self.oldest == NIL {
            self.oldest = id;
        }
        self.len += 1;
    }

    /// Records a hit on `id`.
    pub fn touch(&mut self, id: u32) {
        if let Some(n) = self.nodes.get_mut(id as usize) {
            n.visited = true;
        }
    }

    /// Forgets `id` (deleted or replaced); a no-op if it is not queued.
    pub fn remove(&mut self, id: u32) {
        let Some(&n) = self.nodes.get(id as usize) else {
            return;
        };
        if !n.linked {
            return;
        }
        if self.hand == id {
            self.hand = n.newer;
        }
        if n.newer != NIL {
            self.nodes[n.newer as usize].older = n.older;
        } else {
            self.newest = n.older;
        }
        if n.older != NIL {
            self.nodes[n.older as usize].newer = n.newer;
        } else {
            self.oldest = n.newer;
        }
        self.nodes[id as usize] = UNLINKED;
        self.len -= 1;
    }

    /// Chooses, unlinks and returns the next victim, or `None` when empty.
    pub fn evict(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        let mut at = if self.hand == NIL {
            self.oldest
        } else {
            self.hand
        };
        while self.nodes[at as usize].visited {
            self.nodes[at as usize].visited = false;
            at = self.nodes[at as usize].newer;
            if at == NIL {
                at = self.oldest;
            }
        }
        self.hand = self.nodes[at as usize].newer;
        self.remove(at);
        Some(at)
    }

    /// Number of queued ids.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no id is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Empties the queue.
    pub fn clear(&mut self) {
        *self = Sieve::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unvisited_are_evicted_in_fifo_order() {
        let mut s = Sieve::default();
        for i in 0..5 {
            s.insert(i);
        }
        assert_eq!(s.evict(), Some(0));
        assert_eq!(s.evict(), Some(1));
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn visited_survive_one_pass() {
        let mut s = Sieve::default();
        for i in 0..4 {
            s.insert(i);
        }
        s.touch(0);
        s.touch(2);
        assert_eq!(s.evict(), Some(1));
        assert_eq!(s.evict(), Some(3));
        // The hand wrapped and cleared 0 and 2 on its way.
        assert_eq!(s.evict(), Some(0));
        assert_eq!(s.evict(), Some(2));
        assert_eq!(s.evict(), None);
        assert!(s.is_empty());
    }

    #[test]
    fn remove_under_the_hand() {
        let mut s = Sieve::default();
        for i in 0..4 {
            s.insert(i);
        }
        s.touch(0);
        assert_eq!(s.evict(), Some(1));
        s.remove(2); // the hand points at 2 now
        s.remove(7); // unknown id is a no-op
        assert_eq!(s.evict(), Some(3));
        assert_eq!(s.evict(), Some(0));
        s.insert(9);
        s.clear();
        assert_eq!(s.evict(), None);
    }

    #[test]
    fn matches_a_simple_model() {
        // Model: a Vec in FIFO order with visited flags and a hand index.
        let mut s = Sieve::default();
        let mut model: Vec<(u32, bool)> = Vec::new();
        let mut hand: Option<u32> = None;
        let mut rng = 12345u64;
        let mut next_id = 0u32;
        for _ in 0..5000 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            match rng % 4 {
                0 | 1 => {
                    s.insert(next_id);
                    model.push((next_id, false));
                    next_id += 1;
                }
                2 if !model.is_empty() => {
                    let k = (rng >> 8) as usize % model.len();
                    model[k].1 = true;
                    s.touch(model[k].0);
                }
                _ => {
                    let mut at = hand
                        .and_then(|h| model.iter().position(|e| e.0 == h))
                        .unwrap_or(0);
                    if model.is_empty() {
                        assert_eq!(s.evict(), None);
                        continue;
                    }
                    while model[at].1 {
                        model[at].1 = false;
                        at = (at + 1) % model.len();
                    }
                    let victim = model.remove(at).0;
                    hand = model.get(at).map(|e| e.0);
                    assert_eq!(s.evict(), Some(victim));
                }
            }
        }
    }
}
