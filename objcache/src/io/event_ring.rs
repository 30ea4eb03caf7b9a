//! An io_uring whose completions wake a mio loop through a registered eventfd, with a
//! backlog for submissions that find the queue full. Shared by the tail reader and the
//! HTTP front's origin client.

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use io_uring::{squeue, IoUring};

/// A ring with an eventfd and a submission backlog.
pub struct EventRing {
    ring: IoUring,
    eventfd: OwnedFd,
    backlog: VecDeque<squeue::Entry>,
}

impl EventRing {
    /// Creates a ring of `entries` submission slots with a registered eventfd.
    pub fn new(entries: u32) -> io::Result<EventRing> {
        let ring = IoUring::new(entries)?;
        // SAFETY: eventfd has no memory preconditions; the result is checked.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor owned by nobody else.
        let eventfd = unsafe { OwnedFd::from_raw_fd(fd) };
        ring.submitter().register_eventfd(eventfd.as_raw_fd())?;
        Ok(EventRing {
            ring,
            eventfd,
            backlog: VecDeque::new(),
        })
    }

    /// The eventfd to register for readability in the event loop.
    pub fn eventfd(&self) -> RawFd {
        self.eventfd.as_raw_fd()
    }

    /// Queues a submission and submits what the queue takes.
    ///
    /// # Safety
    /// Every buffer and address the entry points at must stay valid until its completion
    /// is returned by [`EventRing::completions`].
    pub unsafe fn push(&mut self, sqe: squeue::Entry) {
        self.backlog.push_back(sqe);
        self.submit();
    }

    fn submit(&mut self) {
        while let Some(sqe) = self.backlog.front() {
            // SAFETY: push's contract covers every entry in the backlog.
            let pushed = unsafe { self.ring.submission().push(sqe).is_ok() };
            if !pushed {
                if self.ring.submit().is_err() {
                    break;
                }
                // SAFETY: as above.
                if unsafe { self.ring.submission().push(sqe).is_err() } {
                    break;
                }
            }
            self.backlog.pop_front();
        }
        if let Err(e) = self.ring.submit() {
            crate::store_log!(Warning, "io_uring submit failed: {e}");
        }
    }

    /// Clears the eventfd and returns the completions as `(user data, result)`, then
    /// submits what waited in the backlog.
    pub fn completions(&mut self) -> Vec<(u64, i32)> {
        let mut counter = [0u8; 8];
        // SAFETY: reading 8 bytes into a local buffer from our own non-blocking eventfd.
        unsafe {
            libc::read(self.eventfd.as_raw_fd(), counter.as_mut_ptr().cast(), 8);
        }
        let done = self
            .ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        if !self.backlog.is_empty() {
            self.submit();
        }
        done
    }
}
