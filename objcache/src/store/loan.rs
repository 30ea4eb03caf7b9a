//! RAM bytes lent to a front for sending by reference: a head slot or an arena block stays
//! pinned (see `heads` and `arena`) until the loan is dropped, so the bytes stay mapped and
//! unchanged meanwhile, and are never rewritten in place afterwards.

use std::ops::Range;
use std::sync::Arc;

use crate::store::shard::Lent;
use crate::store::{Digest, Store};

/// A byte range of an object's RAM bytes; given back when this is dropped.
pub struct Loan {
    store: Arc<Store>,
    digest: Digest,
    lent: Lent,
    ptr: *const u8,
    len: usize,
}

// SAFETY: the loan only reads bytes that no one writes while it is pinned, and gives them
// back through the store's shard lock.
unsafe impl Send for Loan {}

impl Loan {
    /// Lends bytes `range` of the RAM bytes (the head of a split object, else the whole
    /// value) of the live object `digest` with CAS value `cas`, as a lookup saw them;
    /// `None` when that version is gone. Call only when [`Store::lends`].
    pub fn take(
        store: &Arc<Store>,
        digest: &Digest,
        cas: u64,
        range: Range<usize>,
    ) -> Option<Loan> {
        let (lent, base) = store.shard(digest).lend(digest, cas)?;
        Some(Loan {
            store: Arc::clone(store),
            digest: *digest,
            lent,
            // SAFETY: range lies inside the object's RAM bytes (the caller's range of the
            // bytes it looked up), which start at base.
            ptr: unsafe { base.add(range.start) },
            len: range.len(),
        })
    }

    /// The lent bytes. They never change while the loan lives, and their pages may outlive
    /// it in the kernel's hands: they can be spliced (see `front::http::splice`).
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: ptr..ptr+len lies in a pinned slot or block mapped for the store's life
        // (kept alive by self.store), not written while pinned.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for Loan {
    fn drop(&mut self) {
        self.store.shard(&self.digest).give_back(self.lent);
    }
}
