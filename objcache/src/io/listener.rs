//! Listening sockets: one SO_REUSEPORT listener per event loop, so the kernel spreads new
//! connections over the loops.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{FromRawFd, OwnedFd};

/// Binds a non-blocking listener with SO_REUSEADDR and SO_REUSEPORT set.
pub fn reuseport_listener(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let domain = if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    // SAFETY: plain socket creation; the result is checked.
    let fd = unsafe {
        libc::socket(
            domain,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh socket owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let one: libc::c_int = 1;
    for opt in [libc::SO_REUSEADDR, libc::SO_REUSEPORT] {
        // SAFETY: `one` outlives the call and its size is passed.
        let r = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                opt,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as u32,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    let (sa, len) = goblin_evloop::sockaddr::raw(addr);
    // SAFETY: sa is a valid socket address of length len for the duration of the call.
    let r = unsafe { libc::bind(fd, (&sa as *const libc::sockaddr_storage).cast(), len) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a bound socket.
    if unsafe { libc::listen(fd, 1024) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(std::net::TcpListener::from(owned))
}
