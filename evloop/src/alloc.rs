//! The allocator settings both servers start with.

/// Large buffers come and go: the store's fill bodies, tail reads and hot tails, and the
/// sorted sets' arenas and member indexes as they grow. glibc raises its mmap threshold
/// each time such a buffer is freed, after which they come from the heap, whose freed holes
/// are not given back: RSS then outgrows --memory, and a big set's old copies stay resident.
/// A fixed threshold keeps every buffer of 64 KiB or more in its own mapping, returned to
/// the system when freed and grown by `mremap` without a copy. The process calls this once
/// at start, before it allocates.
pub fn keep_large_buffers_out_of_the_heap() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only changes allocator parameters.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 10);
    }
}
