//! Tail reads on a small pool of threads doing blocking preads, for kernels without
//! io_uring. Finished reads come back over a channel and wake the event loop.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

use super::{AlignedBuf, ReadDone, ReadJob};
use crate::store::tail::read_chunks;

struct Work {
    job: ReadJob,
    done: Sender<ReadDone>,
    waker: Arc<mio::Waker>,
}

/// Blocking-pool tail reader of one event loop.
pub struct BlockingReader {
    work: Sender<Work>,
    done_tx: Sender<ReadDone>,
    done_rx: Receiver<ReadDone>,
    waker: Arc<mio::Waker>,
}

impl BlockingReader {
    /// Starts `threads` reader threads that wake `waker` after each read.
    pub fn new(threads: usize, waker: Arc<mio::Waker>) -> std::io::Result<BlockingReader> {
        let (work, rx) = channel::<Work>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..threads.max(1) {
            let rx = Arc::clone(&rx);
            std::thread::Builder::new()
                .name(format!("goblin-tail-{i}"))
                .spawn(move || loop {
                    let next = rx.lock().map(|r| r.recv());
                    let Ok(Ok(w)) = next else { return };
                    let mut buf = AlignedBuf::new(w.job.len);
                    let result =
                        read_chunks(w.job.fd, w.job.offset, &mut buf, w.job.chunk).map(|()| buf);
                    // A closed channel means the loop is gone; nothing is left to notify.
                    if w.done
                        .send(ReadDone {
                            token: w.job.token,
                            result,
                        })
                        .is_ok()
                    {
                        let _ = w.waker.wake();
                    }
                })?;
        }
        let (done_tx, done_rx) = channel();
        Ok(BlockingReader {
            work,
            done_tx,
            done_rx,
            waker,
        })
    }

    /// Hands a read to the pool.
    pub fn submit(&mut self, job: ReadJob) {
        let token = job.token;
        let work = Work {
            job,
            done: self.done_tx.clone(),
            waker: Arc::clone(&self.waker),
        };
        if self.work.send(work).is_err() {
            let _ = self.done_tx.send(ReadDone {
                token,
                result: Err(std::io::Error::other("tail reader threads are gone")),
            });
            let _ = self.waker.wake();
        }
    }

    /// Collects finished reads.
    pub fn drain(&mut self, out: &mut Vec<ReadDone>) {
        out.extend(self.done_rx.try_iter());
    }
}
