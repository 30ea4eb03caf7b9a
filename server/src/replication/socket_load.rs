//! repl-diskless-load: a replica loads its master's snapshot straight from the socket, as
//! it arrives, instead of from a file written first (Redis's useDisklessLoad).
//!
//! The link hands the payload's bytes (what [`super::payload`] leaves of them: no header,
//! no end mark) to the loading thread through a channel; the thread's reader
//! ([`ChannelReader`]) sees the end of the snapshot when the link drops its sender (the
//! payload ended, or the link failed, which the loader reports as a truncated file).
//!
//! - `on-empty-db`: so when the keyspace is empty; the loop answers -LOADING meanwhile.
//! - `swapdb`: always, into new databases, swapped in once the load succeeded (the old ones
//!   are kept if it failed). When the master's history is the one this server had (a full
//!   resync of the same data set, later), the old data keeps serving meanwhile (INFO
//!   async_loading:1); otherwise the loop answers -LOADING, as Redis 7 does.

use super::config::DisklessLoad;
use crate::rdb::loading::Loading;
use crate::rdb::read::LoadOptions;
use crate::server::Server;
use std::io::Read;
use std::sync::mpsc::{channel, Receiver, Sender};

/// How a full sync of history `replid` loads: None to a file first, Some(async) from the
/// socket, with the old data served meanwhile when `async`.
pub fn mode(server: &Server, replid: &str) -> Option<bool> {
    match server.config.repl.diskless_load {
        DisklessLoad::Disabled => None,
        DisklessLoad::OnEmptyDb => server
            .keyspace
            .databases()
            .iter()
            .all(|db| db.is_empty())
            .then_some(false),
        DisklessLoad::Swapdb => Some(server.replication.replid == replid),
    }
}

/// Starts loading a payload of `total` bytes (0: unknown) that the returned sender feeds.
pub fn start(total: u64, opts: LoadOptions) -> (Loading, Sender<Vec<u8>>) {
    let (tx, rx) = channel();
    (Loading::stream(ChannelReader::new(rx), total, opts), tx)
}

/// Reads the chunks sent on a channel, in order, until every sender is gone.
#[derive(Debug)]
pub struct ChannelReader {
    rx: Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    pos: usize,
}

impl ChannelReader {
    /// A reader of what `rx` receives.
    pub fn new(rx: Receiver<Vec<u8>>) -> ChannelReader {
        ChannelReader {
            rx,
            chunk: Vec::new(),
            pos: 0,
        }
    }
}

impl Read for ChannelReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.pos == self.chunk.len() {
            match self.rx.recv() {
                Ok(chunk) => {
                    self.chunk = chunk;
                    self.pos = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.pos);
        buf[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `args` on `server` as an authenticated client with no connection.
    fn run(server: &mut Server, args: &[&[u8]]) {
        let mut client = crate::clients::Client::internal(1);
        crate::commands::execute(server, &mut client, &mut Vec::new(), args);
    }

    #[test]
    fn reads_the_chunks_in_order_then_the_end() {
        let (tx, rx) = channel();
        for chunk in [&b"ab"[..], b"", b"cde", b"f"] {
            tx.send(chunk.to_vec()).unwrap();
        }
        drop(tx);
        let mut out = Vec::new();
        ChannelReader::new(rx).read_to_end(&mut out).unwrap();
        assert_eq!(out, b"abcdef");
    }

    #[test]
    fn a_snapshot_fed_in_small_chunks_loads_as_at_once() {
        let mut server = Server::new(crate::config::Config::default());
        for i in 0..50 {
            let (k, v) = (format!("k{i}"), format!("v{i}"));
            run(&mut server, &[b"SET", k.as_bytes(), v.as_bytes()]);
            run(&mut server, &[b"SADD", b"s", k.as_bytes()]);
        }
        let aux = server.snapshots().aux_info();
        let opts = server.snapshots().load_options();
        let dbs = server.keyspace.databases();
        let (bytes, _) = crate::rdb::write::write_snapshot(Vec::new(), dbs, &aux).unwrap();
        let (load, feed) = start(bytes.len() as u64, opts.clone());
        for chunk in bytes.chunks(3) {
            feed.send(chunk.to_vec()).unwrap();
        }
        drop(feed);
        let (loaded, _) = load.finish().unwrap().expect("loaded");
        assert_eq!(crate::rdb::contents(&loaded), crate::rdb::contents(dbs));
        // Cut short (the link failed): an error, not a partial keyspace.
        let (load, feed) = start(0, opts);
        feed.send(bytes[..bytes.len() / 2].to_vec()).unwrap();
        drop(feed);
        assert!(load.finish().is_err());
    }

    #[test]
    fn on_empty_db_only_when_empty_swapdb_async_in_the_same_history() {
        let mut server = Server::new(crate::config::Config::default());
        let other = "f".repeat(40);
        assert_eq!(mode(&server, &other), None);
        server.config.repl.diskless_load = DisklessLoad::OnEmptyDb;
        assert_eq!(mode(&server, &other), Some(false));
        run(&mut server, &[b"SET", b"k", b"v"]);
        assert_eq!(mode(&server, &other), None);
        server.config.repl.diskless_load = DisklessLoad::Swapdb;
        assert_eq!(mode(&server, &other), Some(false));
        let own = server.replication.replid.clone();
        assert_eq!(mode(&server, &own), Some(true), "the same history: async");
    }
}
