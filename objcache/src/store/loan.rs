//! A RAM head lent to a front for sending by reference: the slot stays pinned (see
//! `heads`) until the loan is dropped, so its bytes stay mapped and unchanged meanwhile.

use std::ops::Range;
use std::sync::Arc;

use crate::store::{Digest, Store};

/// A byte range of a lent head slot; the slot is given back when this is dropped.
pub struct HeadLoan {
    store: Arc<Store>,
    digest: Digest,
    slot: u32,
    ptr: *const u8,
    len: usize,
}

// SAFETY: the loan only reads the slot's bytes, which no one writes while it is pinned, and
// gives it back through the store's shard lock.
unsafe impl Send for HeadLoan {}

impl HeadLoan {
    /// Lends bytes `range` of the head of the live split object `digest` with CAS value
    /// `cas`; `None` when that version is gone or its slots cannot be lent.
    pub fn take(
        store: &Arc<Store>,
        digest: &Digest,
        cas: u64,
        range: Range<usize>,
    ) -> Option<HeadLoan> {
        let (slot, base) = store.shard(digest).lend_head(digest, cas)?;
        let loan = HeadLoan {
            store: Arc::clone(store),
            digest: *digest,
            slot,
            // SAFETY: range lies inside the slot (the caller's range of the head it looked up).
            ptr: unsafe { base.add(range.start) },
            len: range.len(),
        };
        debug_assert!(range.end <= store.config().ram_head as usize);
        Some(loan)
    }

    /// The lent bytes. They never change while the loan lives, and their pages may outlive
    /// it in the kernel's hands: they can be spliced (see `front::http::splice`).
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: ptr..ptr+len lies in a pinned slot of a block mapped for the store's life
        // (kept alive by self.store); the slot is not written until given back.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for HeadLoan {
    fn drop(&mut self) {
        self.store.shard(&self.digest).give_back_head(self.slot);
    }
}
