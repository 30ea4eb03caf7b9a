//! The origin client on io_uring (--mirror-client uring): each origin connection's connect,
//! request writes and response reads are io_uring submissions, completed through the
//! loop's [`EventRing`]. One operation is in flight per connection at a time; its buffer
//! and address live in the connection, which is kept until that operation completes even
//! when the fetch is abandoned (the socket is shut down so that it completes at once).

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use io_uring::{opcode, types};

use super::origin::{Fetch, Limits, Progress};
use crate::io::event_ring::EventRing;

/// Bytes of one receive.
const RECV_BYTES: usize = 256 << 10;

/// The operation a completion belongs to (low byte of its user data).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// The connect.
    Connect = 1,
    /// A write of request bytes.
    Send = 2,
    /// A read of response bytes.
    Recv = 3,
}

/// One origin connection on io_uring.
pub struct RingConn {
    fd: OwnedFd,
    addr: Box<libc::sockaddr_storage>,
    addr_len: libc::socklen_t,
    buf: Box<[u8]>,
    /// An operation is in flight.
    pub busy: bool,
    /// The connect completed.
    pub connected: bool,
    /// Dropped while busy: remove when the operation completes.
    pub doomed: bool,
    /// The fetch it carries.
    pub fetch: Fetch,
}

impl RingConn {
    /// A socket for `addr`; [`OriginRing::start`] connects it.
    pub fn new(addr: SocketAddr) -> io::Result<RingConn> {
        let domain = if addr.is_ipv4() {
            libc::AF_INET
        } else {
            libc::AF_INET6
        };
        // SAFETY: plain socket creation; the result is checked.
        let fd = unsafe { libc::socket(domain, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh socket owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let one: libc::c_int = 1;
        // SAFETY: `one` outlives the call and its size is passed.
        unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_NODELAY,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as u32,
            );
        }
        let (addr, addr_len) = goblin_evloop::sockaddr::raw(addr);
        Ok(RingConn {
            fd,
            addr: Box::new(addr),
            addr_len,
            buf: vec![0; RECV_BYTES].into_boxed_slice(),
            busy: false,
            connected: false,
            doomed: false,
            fetch: Fetch::default(),
        })
    }

    /// Shuts the socket down so that an operation in flight completes now.
    pub fn shutdown(&self) {
        // SAFETY: shutting down our own socket.
        unsafe { libc::shutdown(self.fd.as_raw_fd(), libc::SHUT_RDWR) };
    }
}

/// The origin ring of one HTTP loop.
pub struct OriginRing {
    ring: EventRing,
}

impl OriginRing {
    /// A ring for up to `entries` operations at once.
    pub fn new(entries: u32) -> io::Result<OriginRing> {
        Ok(OriginRing {
            ring: EventRing::new(entries)?,
        })
    }

    /// The eventfd to register in the loop.
    pub fn eventfd(&self) -> i32 {
        self.ring.eventfd()
    }

    fn submit(&mut self, key: usize, op: Op, conn: &mut RingConn) {
        let fd = types::Fd(conn.fd.as_raw_fd());
        let sqe = match op {
            Op::Connect => opcode::Connect::new(
                fd,
                (&*conn.addr as *const libc::sockaddr_storage).cast(),
                conn.addr_len,
            )
            .build(),
            Op::Send => {
                let unsent = conn.fetch.unsent();
                opcode::Send::new(fd, unsent.as_ptr(), unsent.len() as u32).build()
            }
            Op::Recv => opcode::Recv::new(fd, conn.buf.as_mut_ptr(), conn.buf.len() as u32).build(),
        };
        conn.busy = true;
        // SAFETY: the address, the request bytes and the receive buffer belong to the
        // connection, which stays in the loop's slab until this operation completes (a
        // busy connection is only marked doomed, never removed), and none of them is
        // modified or moved on the heap while the operation is in flight.
        unsafe {
            self.ring
                .push(sqe.user_data(((key as u64) << 8) | op as u64))
        };
    }

    /// Starts the connection's fetch: connects first if needed, then sends.
    pub fn start(&mut self, key: usize, conn: &mut RingConn) {
        let op = if conn.connected {
            Op::Send
        } else {
            Op::Connect
        };
        self.submit(key, op, conn);
    }

    /// Reads more of the connection's response.
    pub fn recv(&mut self, key: usize, conn: &mut RingConn) {
        self.submit(key, Op::Recv, conn);
    }

    /// Finished operations as `(connection key, operation, result)`.
    pub fn completions(&mut self) -> Vec<(usize, Op, i32)> {
        self.ring
            .completions()
            .into_iter()
            .filter_map(|(data, res)| {
                let op = match data & 0xff {
                    1 => Op::Connect,
                    2 => Op::Send,
                    3 => Op::Recv,
                    _ => return None,
                };
                Some(((data >> 8) as usize, op, res))
            })
            .collect()
    }

    /// Applies a completion to its (live, not doomed) connection and submits the next
    /// operation, except after a receive. Returns the fetch's progress.
    pub fn advance(
        &mut self,
        key: usize,
        op: Op,
        res: i32,
        conn: &mut RingConn,
        limits: &Limits,
    ) -> Progress {
        conn.busy = false;
        if conn.fetch.fill().is_none() {
            return Progress::Pending;
        }
        if res < 0 {
            return conn.fetch.failed();
        }
        match op {
            Op::Connect => {
                conn.connected = true;
                self.submit(key, Op::Send, conn);
                Progress::Pending
            }
            Op::Send => {
                conn.fetch.sent(res as usize);
                let next = if conn.fetch.unsent().is_empty() {
                    Op::Recv
                } else {
                    Op::Send
                };
                self.submit(key, next, conn);
                Progress::Pending
            }
            Op::Recv if res == 0 => conn.fetch.closed(),
            // The caller reads on with [`OriginRing::recv`] (or pauses).
            Op::Recv => conn.fetch.received(&conn.buf[..res as usize], limits),
        }
    }
}
