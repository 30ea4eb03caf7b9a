//! What the allocator and the kernel say the process holds: the bytes allocated, counted
//! as the allocations happen (a counting wrapper around the system allocator, as Redis's
//! zmalloc counts, so a reading costs the same at 10 keys and 100M; glibc's mallinfo2
//! walked every arena and took up to a second at a million keys), the resident set from
//! /proc, glibc's own report (malloc_info) and giving free memory back (malloc_trim).

/// The process's allocator: the system's (glibc's malloc), counting the bytes in use.
#[global_allocator]
static ALLOCATOR: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// Bytes handed out and not freed (Redis's used_memory).
pub fn allocated() -> u64 {
    ALLOCATOR.allocated() as u64
}

/// Resident set size of this process, from /proc.
pub fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    pages * page
}

/// Physical memory of the machine, from /proc/meminfo (0 when unknown).
pub fn total_system_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .unwrap_or(0)
        * 1024
}

/// The allocator's own report (glibc's malloc_info XML), MEMORY MALLOC-STATS.
pub fn report() -> String {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let mut buf: *mut libc::c_char = std::ptr::null_mut();
        let mut len: libc::size_t = 0;
        // SAFETY: open_memstream gives a FILE writing into a buffer it allocates; after
        // fclose, `buf` holds `len` bytes, which we copy and free.
        unsafe {
            let stream = libc::open_memstream(&mut buf, &mut len);
            if stream.is_null() {
                return String::new();
            }
            libc::malloc_info(0, stream);
            libc::fclose(stream);
            if buf.is_null() {
                return String::new();
            }
            let bytes = std::slice::from_raw_parts(buf.cast::<u8>(), len).to_vec();
            libc::free(buf.cast());
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        "Stats not supported for the current allocator".into()
    }
}

/// Gives the free memory at the top of the heap and free whole pages back to the system
/// (MEMORY PURGE).
pub fn purge() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory the allocator holds.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The figure is process-wide and other tests allocate and free on their own threads
    /// meanwhile, so one of a few tries must see the whole block come and go.
    #[test]
    fn allocations_show_in_the_figure() {
        let seen = (0..5).any(|_| {
            let before = allocated();
            let block = vec![1u8; 8 << 20];
            let during = allocated();
            drop(block);
            let after = allocated();
            during >= before + (8 << 20) && after + (4 << 20) < during
        });
        assert!(seen, "an 8 MiB block never showed in the allocated figure");
        assert!(rss_bytes() > 0);
        assert!(report().contains("<malloc"));
    }
}
