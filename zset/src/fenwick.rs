//! A Fenwick (binary indexed) tree over block sizes: prefix counts and
//! select-by-rank in O(log blocks), so rank queries never walk the blocks.

/// Prefix sums over a sequence of block sizes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Fenwick {
    /// `tree[i]` holds the sum of sizes `(i & (i + 1))..=i`.
    tree: Vec<u32>,
}

impl Fenwick {
    /// The tree over `sizes`, built in O(n) with exactly the room it needs.
    pub(crate) fn over(sizes: impl ExactSizeIterator<Item = usize>) -> Fenwick {
        let mut tree = Vec::with_capacity(sizes.len());
        tree.extend(sizes.map(|s| s as u32));
        let n = tree.len();
        for i in 0..n {
            let parent = i | (i + 1);
            if parent < n {
                tree[parent] += tree[i];
            }
        }
        Fenwick { tree }
    }

    /// Adds `delta` to size `i`.
    pub(crate) fn add(&mut self, mut i: usize, delta: i32) {
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add_signed(delta);
            i |= i + 1;
        }
    }

    /// Sum of sizes `0..i`.
    pub(crate) fn prefix(&self, mut i: usize) -> usize {
        let mut sum = 0;
        while i > 0 {
            sum += self.tree[i - 1] as usize;
            i &= i - 1;
        }
        sum
    }

    /// The block holding position `rank` and the offset inside it: the
    /// largest `b` with `prefix(b) <= rank`, and `rank - prefix(b)`.
    /// A rank at or past the total returns `(blocks, rank - total)`.
    pub(crate) fn select(&self, rank: usize) -> (usize, usize) {
        let n = self.tree.len();
        let mut pos = 0;
        let mut rest = rank;
        let mut step = if n == 0 { 0 } else { 1 << n.ilog2() };
        while step > 0 {
            let next = pos + step;
            if next <= n && (self.tree[next - 1] as usize) <= rest {
                pos = next;
                rest -= self.tree[next - 1] as usize;
            }
            step >>= 1;
        }
        (pos, rest)
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.tree.capacity() * std::mem::size_of::<u32>()
    }
}

#[cfg(test)]
mod tests {
    use super::Fenwick;

    #[test]
    fn prefix_and_select_match_a_scan() {
        let sizes: Vec<usize> = (0..37).map(|i| (i * 7) % 11 + 1).collect();
        let mut f = Fenwick::over(sizes.iter().copied());
        let total: usize = sizes.iter().sum();
        for b in 0..=sizes.len() {
            assert_eq!(f.prefix(b), sizes[..b].iter().sum::<usize>());
        }
        for rank in 0..total + 3 {
            let mut b = 0;
            let mut rest = rank;
            while b < sizes.len() && rest >= sizes[b] {
                rest -= sizes[b];
                b += 1;
            }
            assert_eq!(f.select(rank), (b, rest), "rank {rank}");
        }
        f.add(5, -3);
        f.add(0, 2);
        assert_eq!(f.prefix(6), sizes[..6].iter().sum::<usize>() - 1);
    }

    #[test]
    fn empty_tree() {
        let f = Fenwick::default();
        assert_eq!(f.select(0), (0, 0));
        assert_eq!(f.prefix(0), 0);
    }
}
