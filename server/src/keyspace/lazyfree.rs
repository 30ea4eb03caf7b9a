//! Lazy free: large values and whole databases are dropped on a background thread, as
//! Redis's lazyfree does, so freeing them does not stall the event loop.

use super::db::Db;
use super::value::Value;
use goblin_zset::hash::HashEncoding;
use goblin_zset::set::SetEncoding;
use goblin_zset::Encoding as ZSetEncoding;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

/// Values whose [`free_effort`] is above this are freed on the lazy-free thread.
const LAZYFREE_THRESHOLD: usize = 64;

/// What freeing `value` costs, as Redis's lazyfreeGetFreeEffort weighs it by encoding: a
/// quicklist's nodes, a hashtable's entries, a skiplist's members; for a stream its nodes
/// (Redis counts its radix tree's nodes, a few more) and, per group, one plus the first
/// group's pending entries; 1 for a string and every listpack or intset.
fn free_effort(value: &Value) -> usize {
    match value {
        Value::List(l) => l.quicklist_nodes().unwrap_or(1),
        Value::Set(s) if s.encoding() == SetEncoding::Hashtable => s.len(),
        Value::Hash(h) if h.encoding() == HashEncoding::Hashtable => h.len(),
        Value::ZSet(z) if z.encoding() == ZSetEncoding::Skiplist => z.len(),
        Value::Stream(s) => {
            let groups = s.groups();
            let pending = groups.values().next().map_or(0, |g| g.pending_len());
            s.node_count() + groups.len() * (1 + pending)
        }
        _ => 1,
    }
}

/// Something big to drop off the event loop.
pub(super) enum Garbage {
    /// One value.
    Value(Value),
    /// A whole database (FLUSHDB / FLUSHALL ASYNC, a reload).
    Db(Box<Db>),
}

impl Garbage {
    /// The objects the lazy-free thread frees for it, as Redis counts them (0: small enough
    /// to free here): a large value is one, a database is one per key.
    fn objects(&self) -> usize {
        match self {
            Garbage::Value(v) => usize::from(free_effort(v) > LAZYFREE_THRESHOLD),
            Garbage::Db(db) => db.len(),
        }
    }
}

/// The lazy-free thread and its counters.
pub(super) struct LazyFree {
    sender: mpsc::Sender<Garbage>,
    /// Objects queued and not yet freed (INFO lazyfree_pending_objects).
    pending: Arc<AtomicUsize>,
    /// Objects freed so far (INFO lazyfreed_objects).
    freed: Arc<AtomicUsize>,
}

impl LazyFree {
    /// Starts the thread.
    pub(super) fn start() -> LazyFree {
        let (sender, receiver) = mpsc::channel::<Garbage>();
        let pending = Arc::new(AtomicUsize::new(0));
        let freed = Arc::new(AtomicUsize::new(0));
        let (p, f) = (pending.clone(), freed.clone());
        std::thread::Builder::new()
            .name("lazyfree".into())
            .spawn(move || {
                use crate::service::process::affinity;
                affinity::enter(affinity::Role::Bio);
                for garbage in receiver {
                    let objects = garbage.objects();
                    drop(garbage);
                    p.fetch_sub(objects, Ordering::Relaxed);
                    f.fetch_add(objects, Ordering::Relaxed);
                }
            })
            .expect("spawn the lazy-free thread");
        LazyFree {
            sender,
            pending,
            freed,
        }
    }

    /// Frees `garbage` here when small, on the background thread otherwise.
    pub(super) fn dispose(&self, garbage: Garbage) {
        let objects = garbage.objects();
        if objects > 0 {
            self.pending.fetch_add(objects, Ordering::Relaxed);
            if let Err(mpsc::SendError(g)) = self.sender.send(garbage) {
                self.pending.fetch_sub(objects, Ordering::Relaxed);
                drop(g);
            }
        }
    }

    /// Objects queued and not yet freed.
    pub(super) fn pending(&self) -> usize {
        self.pending.load(Ordering::Relaxed)
    }

    /// Objects freed so far.
    pub(super) fn freed(&self) -> usize {
        self.freed.load(Ordering::Relaxed)
    }

    /// Starts the freed count again (CONFIG RESETSTAT; the pending count stays true).
    pub(super) fn reset_freed(&self) {
        self.freed.store(0, Ordering::Relaxed);
    }
}
