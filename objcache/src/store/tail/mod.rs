//! SSD tails: per-shard pool files under --ssd-dir, the header every tail extent starts
//! with, and [`TailRef`], what a lookup hands a front so that it can read a tail.
//!
//! A tail extent starts with a 64-byte header and is padded to 4 KiB pages. Writes go out in
//! --write-io-chunk pieces; reads (the loops' tail readers, `crate::io::tail_reader`) come
//! back in --io-chunk pieces with O_DIRECT, bypassing the page cache. Every read of an
//! extent's start is checked against the digest, CAS and length it expects ([`verify`],
//! [`verify_header`]), so a reused extent never leaks another object's bytes; a tail
//! streamed chunk by chunk is pinned instead while it is read (see `extents`).
//!
//! ```text
//! tail extent at page P of the pool file (byte offset P * 4096), integers little-endian
//! offset  bytes  field
//!      0      8  magic "GOBTAIL1"
//!      8     32  key digest (SHA-256 of the key)
//!     40      8  CAS value of the object version
//!     48      8  tail length in bytes (u64)
//!     56      8  zero (unused)
//!     64    len  the tail: the value's bytes after its --ram-head bytes in RAM
//! 64+len    pad  zeroes up to the next 4096-byte page (extent_pages(len) pages in all)
//! ```

pub(crate) mod buf;
pub(crate) mod cache;
pub(crate) mod carve;
pub(crate) mod extents;

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

pub use buf::AlignedBuf;

use crate::config::DIRECT_IO_ALIGN;
use crate::store::digest::Digest;

/// Bytes of the header in front of every tail.
pub const TAIL_HEADER: usize = 64;
const MAGIC: &[u8; 8] = b"GOBTAIL1";

/// Pages (4 KiB) an extent holding `tail_len` bytes spans.
pub fn extent_pages(tail_len: usize) -> u32 {
    (TAIL_HEADER + tail_len).div_ceil(DIRECT_IO_ALIGN as usize) as u32
}

/// One shard's pool file.
pub struct PoolFile {
    file: File,
    /// True when the file was opened with O_DIRECT (false on filesystems refusing it).
    pub direct: bool,
}

impl PoolFile {
    /// Creates (truncating) the pool file at `path`, with O_DIRECT where the filesystem allows.
    pub fn create(path: &Path) -> io::Result<PoolFile> {
        let open = |flags| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .custom_flags(flags)
                .open(path)
        };
        match open(libc::O_DIRECT) {
            Ok(file) => Ok(PoolFile { file, direct: true }),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(PoolFile {
                file: open(0)?,
                direct: false,
            }),
            Err(e) => Err(e),
        }
    }

    /// Raw descriptor for the read engines.
    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// Writes a tail with its header at page `page`, in `chunk`-byte writes. Returns the
    /// extent written, as a read of it would return it.
    pub fn write(
        &self,
        page: u32,
        digest: &Digest,
        cas: u64,
        tail: &[u8],
        chunk: usize,
    ) -> io::Result<AlignedBuf> {
        let mut buf = AlignedBuf::new(TAIL_HEADER + tail.len());
        write_header(&mut buf, digest, cas, tail.len());
        buf[TAIL_HEADER..TAIL_HEADER + tail.len()].copy_from_slice(tail);
        self.write_extent(page, &buf, chunk)?;
        Ok(buf)
    }

    /// Writes a complete extent (header, tail, padding) at page `page`, in `chunk`-byte
    /// writes.
    pub fn write_extent(&self, page: u32, extent: &AlignedBuf, chunk: usize) -> io::Result<()> {
        let base = u64::from(page) * DIRECT_IO_ALIGN;
        for (i, piece) in extent.chunks(chunk).enumerate() {
            self.file.write_all_at(piece, base + (i * chunk) as u64)?;
        }
        Ok(())
    }

    /// Reads the extent of a `tail_len`-byte tail at `page` with blocking reads.
    pub fn read_blocking(
        &self,
        page: u32,
        tail_len: usize,
        chunk: usize,
    ) -> io::Result<AlignedBuf> {
        let mut buf = AlignedBuf::new(TAIL_HEADER + tail_len);
        read_chunks(
            self.fd(),
            u64::from(page) * DIRECT_IO_ALIGN,
            &mut buf,
            chunk,
        )?;
        Ok(buf)
    }
}

/// Writes the header of a `tail_len`-byte tail of the object `digest` with `cas` at the
/// start of its extent `buf`.
pub fn write_header(buf: &mut [u8], digest: &Digest, cas: u64, tail_len: usize) {
    buf[..8].copy_from_slice(MAGIC);
    buf[8..40].copy_from_slice(&digest.0);
    buf[40..48].copy_from_slice(&cas.to_le_bytes());
    buf[48..56].copy_from_slice(&(tail_len as u64).to_le_bytes());
}

/// Fills `buf` from `fd` at `offset` with `chunk`-sized preads.
pub fn read_chunks(fd: RawFd, offset: u64, buf: &mut [u8], chunk: usize) -> io::Result<()> {
    for (i, piece) in buf.chunks_mut(chunk).enumerate() {
        let mut done = 0;
        while done < piece.len() {
            let at = offset + (i * chunk + done) as u64;
            // SAFETY: piece[done..] is a valid writable region of the given length.
            let n = unsafe {
                libc::pread(
                    fd,
                    piece[done..].as_mut_ptr().cast(),
                    piece.len() - done,
                    at as libc::off_t,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            done += n as usize;
        }
    }
    Ok(())
}

/// Where a split object's tail lies and what a read of it must find.
#[derive(Clone, Copy, Debug)]
pub struct TailRef {
    /// Pool file descriptor.
    pub fd: RawFd,
    /// Byte offset of the extent.
    pub offset: u64,
    /// Bytes of the extent (page multiple).
    pub extent_len: usize,
    /// Bytes of the tail.
    pub tail_len: usize,
    /// Expected key digest.
    pub digest: Digest,
    /// Expected CAS value.
    pub cas: u64,
}

impl TailRef {
    /// The tail bytes in a finished read, if the read found this object.
    pub fn verify<'a>(&self, buf: &'a [u8]) -> Option<&'a [u8]> {
        verify(buf, &self.digest, self.cas, self.tail_len)
    }

    /// True when `buf`, read from the start of the extent, has this object's header.
    pub fn verify_header(&self, buf: &[u8]) -> bool {
        verify_header(buf, &self.digest, self.cas, self.tail_len)
    }
}

/// The tail bytes in `buf` if its header names `digest`, `cas` and `tail_len`.
pub fn verify<'a>(buf: &'a [u8], digest: &Digest, cas: u64, tail_len: usize) -> Option<&'a [u8]> {
    let ok = buf.len() >= TAIL_HEADER + tail_len && verify_header(buf, digest, cas, tail_len);
    ok.then(|| &buf[TAIL_HEADER..TAIL_HEADER + tail_len])
}

/// True when `buf`, the start of an extent, has the header of `digest`, `cas` and
/// `tail_len` (a streamed tail's first chunk).
pub fn verify_header(buf: &[u8], digest: &Digest, cas: u64, tail_len: usize) -> bool {
    buf.len() >= TAIL_HEADER
        && &buf[..8] == MAGIC
        && buf[8..40] == digest.0
        && buf[40..48] == cas.to_le_bytes()
        && buf[48..56] == (tail_len as u64).to_le_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_read_verify() {
        let dir = std::env::temp_dir().join(format!("goblin-tail-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pool = PoolFile::create(&dir.join("pool")).unwrap();
        let d = Digest::of(b"k");
        let tail: Vec<u8> = (0..300_000u32).map(|i| i as u8).collect();
        assert_eq!(extent_pages(tail.len()), 74);
        pool.write(3, &d, 42, &tail, 1 << 20).unwrap();
        let buf = pool.read_blocking(3, tail.len(), 64 << 10).unwrap();
        assert_eq!(verify(&buf, &d, 42, tail.len()), Some(&tail[..]));
        assert_eq!(verify(&buf, &d, 43, tail.len()), None);
        assert_eq!(verify(&buf, &Digest::of(b"j"), 42, tail.len()), None);
        assert_eq!(verify(&buf, &d, 42, tail.len() - 1), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
