//! What the allocator and the kernel say the process holds: glibc's mallinfo2 (every
//! arena, plus the chunks it mapped on their own), the resident set from /proc, the
//! allocator's own report (malloc_info) and giving free memory back (malloc_trim).

/// Heap figures of the allocator, bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Heap {
    /// Handed out and not freed: chunks in use in the arenas (`uordblks`) plus the chunks
    /// mapped on their own (`hblkhd`). Redis's used_memory.
    pub allocated: u64,
    /// Held from the system: the arenas (`arena`, free chunks included) plus the mapped
    /// chunks. Redis's allocator_active.
    pub active: u64,
}

/// The allocator's figures now (zeros where glibc's mallinfo2 is not available).
pub fn heap() -> Heap {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 only reads the allocator's statistics.
        let m = unsafe { libc::mallinfo2() };
        Heap {
            allocated: (m.uordblks + m.hblkhd) as u64,
            active: (m.arena + m.hblkhd) as u64,
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        Heap::default()
    }
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
    /// meanwhile, so one of a few tries must see the whole block.
    #[test]
    fn allocations_show_in_the_figure() {
        let seen = (0..5).any(|_| {
            let before = heap();
            let block = vec![1u8; 8 << 20];
            let during = heap();
            assert!(during.active >= during.allocated);
            drop(block);
            during.allocated >= before.allocated + (8 << 20) - 4096
        });
        assert!(seen, "an 8 MiB block never showed in the allocated figure");
        assert!(rss_bytes() > 0);
        assert!(report().contains("<malloc"));
    }
}
