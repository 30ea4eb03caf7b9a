//! Listening sockets with the options std does not set: SO_REUSEPORT (the store's loops
//! share a port, the kernel spreading connections over them), IPV6_V6ONLY (an IPv6 listener
//! beside an IPv4 one on the same port, as Redis binds `* -::*`) and the backlog; and
//! Unix-domain listeners with their permissions and backlog.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;

/// How to set up a listener. SO_REUSEADDR is always set, as Redis and the store do.
#[derive(Debug, Clone, Copy)]
pub struct ListenOptions {
    /// Set SO_REUSEPORT.
    pub reuse_port: bool,
    /// For an IPv6 address: accept IPv6 only (IPV6_V6ONLY), leaving IPv4 to its own socket.
    pub v6_only: bool,
    /// The listen backlog.
    pub backlog: i32,
}

/// Binds a non-blocking, close-on-exec listener on `addr`.
pub fn bind(addr: SocketAddr, options: ListenOptions) -> io::Result<std::net::TcpListener> {
    let domain = if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    let owned = stream_socket(domain)?;
    set_flag(&owned, libc::SOL_SOCKET, libc::SO_REUSEADDR)?;
    if options.reuse_port {
        set_flag(&owned, libc::SOL_SOCKET, libc::SO_REUSEPORT)?;
    }
    if options.v6_only && addr.is_ipv6() {
        set_flag(&owned, libc::IPPROTO_IPV6, libc::IPV6_V6ONLY)?;
    }
    let (sa, len) = crate::sockaddr::raw(addr);
    bind_and_listen(&owned, &sa, len, options.backlog)?;
    Ok(std::net::TcpListener::from(owned))
}

/// Binds a non-blocking, close-on-exec Unix-domain listener at `path` with listen(2)
/// backlog `backlog`, its file's mode set to `perm` unless 0 (then the umask decides). A
/// socket file left at `path` by an earlier run is removed first, as Redis and memcached
/// do; anything else there makes the bind fail.
pub fn bind_unix(
    path: &Path,
    perm: u32,
    backlog: i32,
) -> io::Result<std::os::unix::net::UnixListener> {
    let (sa, len) = crate::sockaddr::unix(path)?;
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
        std::fs::remove_file(path)?;
    }
    let owned = stream_socket(libc::AF_UNIX)?;
    bind_and_listen(&owned, &sa, len, backlog)?;
    if perm != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(perm))?;
    }
    Ok(std::os::unix::net::UnixListener::from(owned))
}

/// A fresh non-blocking, close-on-exec stream socket of `domain`.
fn stream_socket(domain: libc::c_int) -> io::Result<OwnedFd> {
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
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Binds `socket` to the `len` bytes of `sa` and listens with `backlog`.
fn bind_and_listen(
    socket: &OwnedFd,
    sa: &libc::sockaddr_storage,
    len: libc::socklen_t,
    backlog: i32,
) -> io::Result<()> {
    let fd = socket.as_raw_fd();
    // SAFETY: sa is a valid socket address of length len for the duration of the call.
    if unsafe { libc::bind(fd, (sa as *const libc::sockaddr_storage).cast(), len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a bound socket.
    if unsafe { libc::listen(fd, backlog) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sets a boolean socket option to 1.
fn set_flag(socket: &OwnedFd, level: libc::c_int, option: libc::c_int) -> io::Result<()> {
    let one: libc::c_int = 1;
    // SAFETY: `one` outlives the call and its size is passed.
    let r = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            level,
            option,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as u32,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTIONS: ListenOptions = ListenOptions {
        reuse_port: false,
        v6_only: true,
        backlog: 16,
    };

    #[test]
    fn ipv6_listener_is_v6_only_and_a_taken_port_is_refused() {
        let v4 = bind("127.0.0.1:0".parse().unwrap(), OPTIONS).unwrap();
        let port = v4.local_addr().unwrap().port();
        // A machine without IPv6 on loopback refuses ::1 outright.
        if let Ok(v6) = bind(SocketAddr::new("::1".parse().unwrap(), port), OPTIONS) {
            let mut value: libc::c_int = 0;
            let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: value and len outlive the call and len is value's size.
            let r = unsafe {
                libc::getsockopt(
                    v6.as_raw_fd(),
                    libc::IPPROTO_IPV6,
                    libc::IPV6_V6ONLY,
                    (&mut value as *mut libc::c_int).cast(),
                    &mut len,
                )
            };
            assert_eq!((r, value), (0, 1));
        }
        // Without SO_REUSEPORT a second IPv4 listener on the port is refused.
        let again = bind(SocketAddr::new("127.0.0.1".parse().unwrap(), port), OPTIONS);
        assert_eq!(again.unwrap_err().kind(), io::ErrorKind::AddrInUse);
    }

    #[test]
    fn unix_listener_takes_its_mode_and_replaces_a_stale_socket() {
        let dir = std::env::temp_dir().join(format!("evloop-unix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.sock");
        let first = bind_unix(&path, 0o700, 16).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        drop(first);
        // The file outlives its listener; the next bind removes it.
        let again = bind_unix(&path, 0o755, 16).unwrap();
        std::os::unix::net::UnixStream::connect(&path).unwrap();
        drop(again);
        // A regular file is not taken for a stale socket.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, b"data").unwrap();
        assert!(bind_unix(&path, 0, 16).is_err());
        let long = dir.join("x".repeat(200));
        assert!(bind_unix(&long, 0, 16).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reuse_port_listeners_share_a_port() {
        let shared = ListenOptions {
            reuse_port: true,
            ..OPTIONS
        };
        let first = bind("127.0.0.1:0".parse().unwrap(), shared).unwrap();
        let addr = first.local_addr().unwrap();
        let second = bind(addr, shared).unwrap();
        assert_eq!(second.local_addr().unwrap(), addr);
    }
}
