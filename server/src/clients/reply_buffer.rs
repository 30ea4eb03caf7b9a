//! The size Redis gives a client's reply buffer (CLIENT LIST `rbs`, `rbp`), resized by the
//! cron as Redis 7's clientsCronResizeOutputBuffer does:
//!
//! ```text
//! starts at 16 KiB with its peak at 16 KiB; the peak is the most reply bytes the buffer
//! held (at most its size) since the last reset:
//!   size/2 >= 1 KiB and peak < size/2     -> shrink to max(1 KiB, peak + 1)
//!   size*2 < 32 KiB and peak == size      -> grow to min(16 KiB, size * 2)
//! every peak-reset-time ms (5000; DEBUG REPLYBUFFER PEAK-RESET-TIME) the peak becomes
//! what the buffer holds now, so an idle client's buffer shrinks to 1 KiB.
//! ```
//!
//! Goblin's connections write from one growable buffer; this is the size Redis's static
//! buffer would have under the same replies, which is what CLIENT LIST reports and INFO's
//! reply_buffer_shrinks / reply_buffer_expands count.

/// The size a reply buffer starts at and grows back to (PROTO_REPLY_CHUNK_BYTES).
pub const CHUNK: usize = 16 * 1024;
/// The smallest size it shrinks to (PROTO_REPLY_MIN_BYTES).
pub const MIN: usize = 1024;
/// The default peak-reset-time in milliseconds.
pub const DEFAULT_PEAK_RESET_MS: i64 = 5000;

/// The server-wide settings of DEBUG REPLYBUFFER.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// Milliseconds between two peak resets; negative: never.
    pub peak_reset_ms: i64,
    /// Whether the cron resizes buffers at all.
    pub resizing: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            peak_reset_ms: DEFAULT_PEAK_RESET_MS,
            resizing: true,
        }
    }
}

/// What a resize did, for the INFO counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resize {
    /// Unchanged.
    None,
    /// Made smaller.
    Shrunk,
    /// Made larger.
    Expanded,
}

/// One client's reply buffer size and peak.
#[derive(Debug, Clone, Copy)]
pub struct ReplyBuffer {
    /// The buffer's size (`rbs`).
    pub size: usize,
    /// The most bytes it held since the last reset (`rbp`).
    pub peak: usize,
    /// Unix milliseconds of the last reset (Redis starts it from its seconds clock, so the
    /// first cron resets it).
    last_reset_ms: u64,
}

impl Default for ReplyBuffer {
    fn default() -> Self {
        ReplyBuffer {
            size: CHUNK,
            peak: CHUNK,
            last_reset_ms: 0,
        }
    }
}

impl ReplyBuffer {
    /// Notes that `pending` reply bytes wait to be written (the buffer holds at most its size).
    #[inline]
    pub fn note(&mut self, pending: usize) {
        self.peak = self.peak.max(pending.min(self.size));
    }

    /// The cron's look at the buffer: resized as the policy says, the peak reset when due
    /// (to `pending`, the bytes it holds now).
    pub fn cron(&mut self, policy: Policy, pending: usize, now_ms: u64) -> Resize {
        if !policy.resizing {
            return Resize::None;
        }
        let (shrink_to, expand_to) = (self.size / 2, self.size * 2);
        let (new_size, resize) = if shrink_to >= MIN && self.peak < shrink_to {
            (MIN.max(self.peak + 1), Resize::Shrunk)
        } else if expand_to < CHUNK * 2 && self.peak == self.size {
            (CHUNK.min(expand_to), Resize::Expanded)
        } else {
            (self.size, Resize::None)
        };
        if policy.peak_reset_ms >= 0
            && now_ms.saturating_sub(self.last_reset_ms) >= policy.peak_reset_ms as u64
        {
            self.peak = pending.min(new_size);
            self.last_reset_ms = now_ms;
        }
        self.size = new_size;
        resize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(peak_reset_ms: i64) -> Policy {
        Policy {
            peak_reset_ms,
            resizing: true,
        }
    }

    #[test]
    fn an_idle_buffer_shrinks_to_the_minimum() {
        let mut b = ReplyBuffer::default();
        let mut now = 1_000_000;
        for _ in 0..10 {
            b.cron(policy(100), 0, now);
            now += 100;
        }
        assert_eq!((b.size, b.peak), (MIN, 0));
    }

    #[test]
    fn a_busy_buffer_doubles_up_to_the_chunk() {
        let mut b = ReplyBuffer {
            size: MIN,
            peak: 0,
            last_reset_ms: 0,
        };
        let mut sizes = Vec::new();
        for now in 1..8 {
            b.note(1 << 20);
            if b.cron(policy(-1), 0, now) == Resize::Expanded {
                sizes.push(b.size);
            }
        }
        assert_eq!(sizes, [2048, 4096, 8192, 16384]);
        assert_eq!(b.size, CHUNK);
    }

    #[test]
    fn resizing_off_keeps_the_size() {
        let mut b = ReplyBuffer::default();
        let off = Policy {
            peak_reset_ms: 0,
            resizing: false,
        };
        assert_eq!(b.cron(off, 0, 10_000), Resize::None);
        assert_eq!((b.size, b.peak), (CHUNK, CHUNK));
    }
}
