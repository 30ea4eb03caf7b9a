//! tcp-keepalive on accepted sockets, as Redis's anetKeepAlive: SO_KEEPALIVE, the first
//! probe after `interval` seconds of silence, then one every third of it, and the peer
//! declared dead after three unanswered probes.

use std::os::fd::RawFd;

/// Turns keepalive probes on for socket `fd` with Redis's timings for `interval` seconds.
pub fn enable(fd: RawFd, interval: u64) -> std::io::Result<()> {
    let idle = interval.min(i32::MAX as u64) as libc::c_int;
    let options = [
        (libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1),
        (libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, idle),
        (libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, (idle / 3).max(1)),
        (libc::IPPROTO_TCP, libc::TCP_KEEPCNT, 3),
    ];
    for (level, name, value) in options {
        // SAFETY: setsockopt reads one c_int from a valid pointer of the given length.
        let rc = unsafe {
            libc::setsockopt(
                fd,
                level,
                name,
                (&value as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn option(fd: RawFd, level: libc::c_int, name: libc::c_int) -> libc::c_int {
        let mut value: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt writes at most `len` bytes into `value`.
        let rc = unsafe {
            libc::getsockopt(
                fd,
                level,
                name,
                (&mut value as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        assert_eq!(rc, 0);
        value
    }

    #[test]
    fn sets_redis_timings() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let fd = stream.as_raw_fd();
        enable(fd, 300).unwrap();
        assert_ne!(option(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE), 0);
        assert_eq!(option(fd, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE), 300);
        assert_eq!(option(fd, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL), 100);
        assert_eq!(option(fd, libc::IPPROTO_TCP, libc::TCP_KEEPCNT), 3);
        enable(fd, 2).unwrap();
        assert_eq!(option(fd, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL), 1);
    }
}
