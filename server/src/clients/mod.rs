//! The client registry: every connected client's state ([`Client`]) by connection key, the
//! interface through which commands see the other clients (CLIENT LIST / KILL / UNBLOCK,
//! serving blocked clients, timeouts) without knowing about sockets.
//!
//! `net` owns the sockets and the buffers; the registry owns the clients. While a
//! connection is being serviced its client is [leased](Clients::lease) out of the registry
//! (so a command gets `&mut Client` next to `&mut Server`), and every other client stays
//! here, visible to that command. After servicing, `net` [restores](Clients::restore) the
//! client with the sizes of its buffers ([`Buffers`]), which is what CLIENT LIST and INFO
//! report for it (they cannot change until it is serviced again).
//!
//! Replies written on behalf of a client whose connection is not being serviced (a blocked
//! client served by another client's write, a wait that timed out, CLIENT UNBLOCK, a message
//! published to a subscriber) go to the lease's `out`; the client is then
//! [woken](Clients::take_woken) and `net` moves that output to the connection's write buffer
//! when it services it. Output that passes its hard limit meanwhile
//! [overflows](Lease::overflow) the client: `net` closes it without writing more. CLIENT KILL and the idle timeout
//! [doom](Clients::kill) clients: `net` closes them once their replies are written.

mod addr;
mod client;
pub mod memory;
pub mod reply_buffer;

pub use addr::ClientAddr;
pub use client::{Blocked, Client, Queued, ReplRole, ReplyMode};

use crate::resp::reply::ReplyWriter;
use hashbrown::HashMap;

/// The sizes of a connection's buffers, as of its last servicing or as the running
/// command sees them (CLIENT LIST qbuf, qbuf-free, argv-mem, omem; part of tot-mem).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Buffers {
    /// The query buffer as Redis counts it (qbuf): the bytes received and not yet parsed
    /// into arguments; while a command runs, the whole batch read with it.
    pub query: usize,
    /// Allocated size of the read buffer.
    pub input_capacity: usize,
    /// Bytes of replies not yet written.
    pub pending_output: usize,
    /// Bytes of the arguments parsed so far: the running command's, or those of an
    /// unfinished request (argv-mem).
    pub argv: usize,
    /// Allocated size of the output buffers: more than what waits once a burst grew them
    /// (counted in the client's memory when it is more, as Redis counts its reply blocks'
    /// sizes).
    pub output_capacity: usize,
}

impl Buffers {
    /// These sizes with `out`, the output written for the client while its connection was
    /// not serviced, added to its output.
    pub fn with_out(mut self, out: &Vec<u8>) -> Buffers {
        self.pending_output += out.len();
        self.output_capacity += out.capacity();
        self
    }
}

/// A client taken out of the registry while something runs on its behalf; give it back with
/// [`Clients::restore`].
pub struct Lease {
    key: usize,
    /// The client.
    pub client: Box<Client>,
    /// Replies written for the client while its connection was not being serviced.
    pub out: Vec<u8>,
    /// CLIENT KILL or the idle timeout asked to close the connection.
    pub doomed: bool,
    /// The connection's buffer sizes; `net` updates them before restoring.
    pub buffers: Buffers,
    /// Output written for the client passed its hard limit: `net` closes the connection
    /// when it services it, without writing more (set by [`Lease::overflow`]).
    pub overflowed: bool,
}

impl Lease {
    /// Bytes of replies waiting for the client: its connection's, as of its last servicing,
    /// and those written into `out` since.
    pub fn pending_output(&self) -> usize {
        self.buffers.pending_output + self.out.len()
    }

    /// Marks the client's output as over its hard limit (logged once, as Redis logs it).
    pub fn overflow(&mut self) {
        if !self.overflowed {
            warn_output_limit(&self.client, true);
            self.overflowed = true;
        }
    }
}

/// Logs the closing of a client whose output reached its limits: `asap` when it is
/// closed once serviced (Redis's "scheduled to be closed ASAP"), else at once.
pub fn warn_output_limit(client: &Client, asap: bool) {
    crate::warning!(
        "Client id={} addr={} {} for overcoming of output buffer limits.",
        client.id,
        client.addr,
        if asap {
            "scheduled to be closed ASAP"
        } else {
            "closed"
        }
    );
}

/// The client about to run a command, in an eviction check ([`Clients::evict`]).
#[derive(Debug, Clone, Copy)]
pub struct Running {
    /// Its CLIENT ID.
    pub id: u64,
    /// Its memory now.
    pub memory: usize,
    /// Whether it may be evicted.
    pub evictable: bool,
}

/// One registered client.
struct Slot {
    /// `None` while leased.
    client: Option<Box<Client>>,
    out: Vec<u8>,
    doomed: bool,
    buffers: Buffers,
    overflowed: bool,
    /// The client's memory as of its last restore, counted in `Clients::counted_memory`
    /// when [`memory::counted`].
    memory: usize,
    /// An evicted client's memory, counted in `Clients::freeing_memory` until `net`
    /// closes its connection.
    freeing: usize,
}

/// Every connected client, by connection key, with the id -> key mapping.
pub struct Clients {
    slots: Vec<Option<Slot>>,
    ids: HashMap<u64, usize>,
    next_id: u64,
    woken: Vec<usize>,
    blocked: usize,
    /// The memory of the normal and pubsub clients, as of their last restores.
    counted_memory: usize,
    /// The memory of the evicted clients whose connections are not closed yet.
    freeing_memory: usize,
    /// DEBUG REPLYBUFFER's settings.
    pub reply_buffer_policy: reply_buffer::Policy,
}

impl Default for Clients {
    fn default() -> Self {
        Clients {
            slots: Vec::new(),
            ids: HashMap::new(),
            next_id: 1,
            woken: Vec::new(),
            blocked: 0,
            counted_memory: 0,
            freeing_memory: 0,
            reply_buffer_policy: Default::default(),
        }
    }
}

impl Clients {
    /// Registers the client of a new connection under `key` and returns its CLIENT ID.
    pub fn admit(
        &mut self,
        key: usize,
        fd: i32,
        addr: ClientAddr,
        laddr: ClientAddr,
        authenticated: bool,
    ) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        if self.slots.len() <= key {
            self.slots.resize_with(key + 1, || None);
        }
        debug_assert!(self.slots[key].is_none(), "key {key} is taken");
        self.slots[key] = Some(Slot {
            client: Some(Box::new(Client::new(id, fd, addr, laddr, authenticated))),
            out: Vec::new(),
            doomed: false,
            buffers: Buffers::default(),
            overflowed: false,
            memory: 0,
            freeing: 0,
        });
        self.ids.insert(id, key);
        id
    }

    /// A CLIENT ID for a client that has no connection of its own in the registry (the
    /// master's, on a replica).
    pub fn new_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Bytes of output waiting for client `id` (its connection's, as of its last
    /// servicing, and what was written for it since); None when it is gone or leased.
    pub fn pending_output(&self, id: u64) -> Option<usize> {
        let key = *self.ids.get(&id)?;
        let slot = self.slots.get(key)?.as_ref()?;
        slot.client.as_ref()?;
        Some(slot.buffers.pending_output + slot.out.len())
    }

    /// Unregisters a leased client (its connection closed) and gives it back for the
    /// cleanup.
    pub fn remove(&mut self, lease: Lease) -> Box<Client> {
        if let Some(slot) = self.slots.get_mut(lease.key) {
            if let Some(old) = slot.take() {
                self.counted_memory -= old.memory;
                self.freeing_memory -= old.freeing;
            }
        }
        self.ids.remove(&lease.client.id);
        lease.client
    }

    /// The memory of the normal and pubsub clients as of their last servicing (INFO
    /// mem_clients_normal).
    pub fn counted_memory(&self) -> usize {
        self.counted_memory
    }

    /// The memory of the evicted clients whose connections `net` has yet to close: about to
    /// be freed, so key eviction leaves it out (Redis frees an evicted client at once,
    /// before it evicts keys).
    pub fn freeing_memory(&self) -> usize {
        self.freeing_memory
    }

    /// Number of connected clients (leased ones included).
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no client is connected.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Takes the client under `key` out of the registry; `None` when there is none or it is
    /// already leased.
    #[inline]
    pub fn lease(&mut self, key: usize) -> Option<Lease> {
        let slot = self.slots.get_mut(key)?.as_mut()?;
        let client = slot.client.take()?;
        Some(Lease {
            key,
            client,
            out: std::mem::take(&mut slot.out),
            doomed: std::mem::take(&mut slot.doomed),
            buffers: slot.buffers,
            overflowed: slot.overflowed,
        })
    }

    /// The client with CLIENT ID `id`, unless it is missing or leased.
    pub fn get(&self, id: u64) -> Option<&Client> {
        let key = *self.ids.get(&id)?;
        self.slots.get(key)?.as_ref()?.client.as_deref()
    }

    /// [`lease`](Clients::lease) by CLIENT ID.
    pub fn lease_id(&mut self, id: u64) -> Option<Lease> {
        let key = *self.ids.get(&id)?;
        self.lease(key)
    }

    /// Puts a leased client back; with `wake` its connection is queued to be serviced.
    #[inline]
    pub fn restore(&mut self, lease: Lease, wake: bool) {
        let Some(Some(slot)) = self.slots.get_mut(lease.key) else {
            return;
        };
        let memory = match lease.client.evicted || !memory::counted(&lease.client) {
            true => 0,
            false => memory::usage(&lease.client, lease.buffers.with_out(&lease.out)),
        };
        self.counted_memory = self.counted_memory - slot.memory + memory;
        slot.memory = memory;
        slot.client = Some(lease.client);
        slot.out = lease.out;
        slot.doomed |= lease.doomed;
        slot.buffers = lease.buffers;
        slot.overflowed = lease.overflowed;
        if wake {
            self.woken.push(lease.key);
        }
    }

    /// Writes a frame for client `id`, which is not the one running a command (pub/sub
    /// messages, invalidations): into its lease output, waking it unless output already
    /// waits for it. `write` gets the writer in the client's protocol and the client, to
    /// shape the frame. A client past its output limit gets nothing more; one whose output
    /// passes `hard_limit` (non-zero) now is marked overflowed, to be closed when serviced.
    /// False when there is no such client.
    pub fn push_to(
        &mut self,
        id: u64,
        hard_limit: u64,
        write: impl FnOnce(&mut ReplyWriter, &Client),
    ) -> bool {
        let Some(mut lease) = self.lease_id(id) else {
            return false;
        };
        if lease.overflowed {
            self.restore(lease, false);
            return true;
        }
        // Output already waiting means the client was woken and not serviced since.
        let mut wake = lease.out.is_empty();
        let resp3 = lease.client.resp3;
        write(&mut ReplyWriter::new(&mut lease.out, resp3), &lease.client);
        // The hard limit is checked as each frame is added (a publisher's pipeline runs
        // whole before the receiver is serviced); the soft one when `net` services it.
        if hard_limit > 0 && lease.pending_output() as u64 > hard_limit {
            lease.overflow();
            wake = true;
        }
        self.restore(lease, wake);
        true
    }

    /// Marks client `id`'s tracking redirect broken (the client it redirects to is gone).
    pub fn set_redirect_broken(&mut self, id: u64) {
        if let Some(mut lease) = self.lease_id(id) {
            lease.client.tracking.broken_redirect = true;
            self.restore(lease, false);
        }
    }

    /// The clients not leased nor evicted, in key order, with their buffer sizes (the
    /// output written for them while not serviced is counted in `pending_output`).
    pub fn iter(&self) -> impl Iterator<Item = (&Client, Buffers)> {
        self.slots.iter().filter_map(|s| {
            let s = s.as_ref()?;
            let client = s.client.as_deref().filter(|c| !c.evicted)?;
            Some((client, s.buffers.with_out(&s.out)))
        })
    }

    /// Evicts clients, the largest size class first, until the memory of the normal and
    /// pubsub clients is under `limit` (Redis's evictClients). `running` is the client
    /// about to run a command (leased): if it may be evicted its memory now replaces the
    /// one recorded at its last restore, otherwise the recorded one counts (as Redis counts
    /// a client it may not evict as its cron last saw it). Every other client evicted is
    /// marked, its memory taken off and its connection woken (`net` closes it); `log` gets
    /// each. Returns the number evicted and whether `running` is among them.
    pub fn evict(
        &mut self,
        limit: usize,
        running: Option<Running>,
        mut log: impl FnMut(&Client, Buffers),
    ) -> (usize, bool) {
        let mut total = self.counted_memory;
        let mut candidates: Vec<(u32, usize, usize)> = Vec::new();
        let running_key = running.and_then(|r| Some((*self.ids.get(&r.id)?, r)));
        if let Some((key, r)) = running_key.filter(|(_, r)| r.evictable) {
            let recorded = self.slots[key].as_ref().map_or(0, |s| s.memory);
            total = total - recorded + r.memory;
            candidates.push((memory::size_class(r.memory), key, r.memory));
        }
        if total < limit {
            return (0, false);
        }
        for (key, slot) in self.slots.iter().enumerate() {
            let Some(slot) = slot else { continue };
            if let Some(c) = &slot.client {
                if !c.evicted && memory::evictable(c) {
                    candidates.push((memory::size_class(slot.memory), key, slot.memory));
                }
            }
        }
        candidates.sort_by_key(|&(class, key, _)| (std::cmp::Reverse(class), key));
        let (mut evicted, mut running_evicted) = (0, false);
        for (_, key, memory) in candidates {
            if total < limit {
                break;
            }
            total -= memory;
            evicted += 1;
            if running_key.is_some_and(|(k, _)| k == key) {
                running_evicted = true;
                continue;
            }
            let slot = self.slots[key].as_mut().expect("a candidate");
            let client = slot.client.as_mut().expect("not leased");
            log(client, slot.buffers.with_out(&slot.out));
            client.evicted = true;
            self.counted_memory -= slot.memory;
            self.freeing_memory += slot.memory;
            slot.freeing = slot.memory;
            slot.memory = 0;
            self.woken.push(key);
        }
        if total >= limit {
            crate::warning!("Over client maxmemory after evicting all evictable clients");
        }
        (evicted, running_evicted)
    }

    /// The cron's resize of every reply buffer not leased (Redis's
    /// clientsCronResizeOutputBuffer); returns how many shrank and how many grew.
    pub fn resize_reply_buffers(&mut self, now_ms: u64) -> (u64, u64) {
        let policy = self.reply_buffer_policy;
        let (mut shrinks, mut expands) = (0, 0);
        for slot in self.slots.iter_mut().flatten() {
            let pending = slot.buffers.pending_output + slot.out.len();
            let Some(client) = slot.client.as_mut() else {
                continue;
            };
            match client.reply_buffer.cron(policy, pending, now_ms) {
                reply_buffer::Resize::Shrunk => shrinks += 1,
                reply_buffer::Resize::Expanded => expands += 1,
                reply_buffer::Resize::None => {}
            }
        }
        (shrinks, expands)
    }

    /// CLIENT IDs of the clients not leased for which `pred` holds, in key order.
    pub fn ids_where(&self, mut pred: impl FnMut(&Client) -> bool) -> Vec<u64> {
        self.iter()
            .filter(|(c, _)| pred(c))
            .map(|(c, _)| c.id)
            .collect()
    }

    /// Dooms the clients not leased that `pred` picks (their connections close once their
    /// replies are written) and wakes them; returns how many.
    pub fn kill(&mut self, mut pred: impl FnMut(&Client) -> bool) -> usize {
        let mut killed = 0;
        for (key, slot) in self.slots.iter_mut().enumerate() {
            let Some(slot) = slot else { continue };
            if slot.client.as_deref().is_some_and(&mut pred) {
                slot.doomed = true;
                self.woken.push(key);
                killed += 1;
            }
        }
        killed
    }

    /// Closes client `id`'s connection when it is next serviced, without writing what
    /// waits for it (Redis's freeClient of a replica whose sync failed or stalled).
    pub fn close_now(&mut self, id: u64) {
        if let Some(mut lease) = self.lease_id(id) {
            lease.overflowed = true;
            self.restore(lease, true);
        }
    }

    /// Queues client `id`'s connection to be serviced (output to write for it that is not
    /// in its lease, such as a replica's stream).
    pub fn wake(&mut self, id: u64) {
        if let Some(&key) = self.ids.get(&id) {
            self.woken.push(key);
        }
    }

    /// The connections woken since the last call, to be serviced.
    pub fn take_woken(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.woken)
    }

    /// Number of blocked clients (INFO blocked_clients).
    pub fn blocked(&self) -> usize {
        self.blocked
    }

    /// Counts a client that started (`true`) or stopped (`false`) waiting in a blocking
    /// command.
    pub fn count_blocked(&mut self, started: bool) {
        if started {
            self.blocked += 1;
        } else {
            self.blocked -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> ClientAddr {
        ClientAddr::Tcp(std::net::SocketAddr::from(([127, 0, 0, 1], port)))
    }

    fn two() -> Clients {
        let mut clients = Clients::default();
        assert_eq!(clients.admit(0, 10, addr(1000), addr(6379), true), 1);
        assert_eq!(clients.admit(3, 11, addr(1001), addr(6379), false), 2);
        clients
    }

    #[test]
    fn admits_leases_and_removes() {
        let mut clients = two();
        assert_eq!(clients.len(), 2);
        let lease = clients.lease(3).expect("registered");
        assert_eq!(lease.client.id, 2);
        assert!(clients.lease(3).is_none(), "already leased");
        // A leased client is counted but not listed.
        assert_eq!(clients.len(), 2);
        assert_eq!(clients.ids_where(|_| true), vec![1]);
        clients.restore(lease, false);
        assert_eq!(clients.ids_where(|_| true), vec![1, 2]);
        assert!(clients.take_woken().is_empty());
        let gone = clients.lease(0).expect("registered");
        assert_eq!(clients.remove(gone).id, 1);
        assert!(clients.lease_id(1).is_none());
        assert_eq!(clients.len(), 1);
        // A freed key is reused, with a new id.
        assert_eq!(clients.admit(0, 12, addr(1002), addr(6379), true), 3);
        let lease = clients.lease_id(3).expect("registered");
        clients.restore(lease, true);
        assert_eq!(clients.take_woken(), vec![0]);
    }

    #[test]
    fn output_for_a_client_is_kept_counted_and_woken() {
        let mut clients = two();
        let mut lease = clients.lease_id(2).expect("registered");
        lease.out.extend_from_slice(b"*-1\r\n");
        clients.restore(lease, true);
        assert_eq!(clients.take_woken(), vec![3]);
        let (_, buffers) = clients.iter().find(|(c, _)| c.id == 2).expect("listed");
        assert_eq!(buffers.pending_output, 5);
        // Servicing takes the output with the lease and records the buffer sizes.
        let mut lease = clients.lease(3).expect("registered");
        assert_eq!(std::mem::take(&mut lease.out), b"*-1\r\n");
        lease.buffers = Buffers {
            query: 4,
            input_capacity: 16,
            pending_output: 5,
            argv: 0,
            output_capacity: 64,
        };
        clients.restore(lease, false);
        let (_, buffers) = clients.iter().find(|(c, _)| c.id == 2).expect("listed");
        assert_eq!((buffers.pending_output, buffers.input_capacity), (5, 16));
    }

    #[test]
    fn overflow_is_kept_until_the_client_is_serviced() {
        let mut clients = two();
        let mut lease = clients.lease_id(2).expect("registered");
        lease.buffers.pending_output = 10;
        lease.out.extend_from_slice(b"+x\r\n");
        assert_eq!(lease.pending_output(), 14);
        assert!(!lease.overflowed);
        lease.overflow();
        lease.overflow();
        clients.restore(lease, true);
        assert_eq!(clients.take_woken(), vec![3]);
        let lease = clients.lease(3).expect("registered");
        assert!(
            lease.overflowed,
            "net sees the overflow when it services the client"
        );
    }

    #[test]
    fn kill_dooms_and_wakes_the_matching_clients() {
        let mut clients = two();
        let leased = clients.lease(0).expect("registered");
        // The leased client (the one running the command) is not among the candidates.
        assert_eq!(clients.kill(|_| true), 1);
        assert_eq!(clients.take_woken(), vec![3]);
        clients.restore(leased, false);
        assert!(!clients.lease(0).expect("registered").doomed);
        assert!(clients.lease(3).expect("registered").doomed);
    }

    #[test]
    fn evicts_the_largest_class_first_down_to_the_limit() {
        let mut clients = Clients::default();
        for (key, input) in [(0, 100_000), (1, 100_000), (2, 1_000_000)] {
            clients.admit(key, 10, addr(1000), addr(6379), true);
            let mut lease = clients.lease(key).expect("registered");
            lease.buffers.input_capacity = input;
            clients.restore(lease, false);
        }
        let total = clients.counted_memory();
        let mut logged = Vec::new();
        assert_eq!(clients.evict(total + 1, None, |_, _| {}), (0, false));
        // One client too many: the one of the largest class goes, and only it.
        let (n, running) = clients.evict(total, None, |c, _| logged.push(c.id));
        assert_eq!((n, running, logged), (1, false, vec![3]));
        assert_eq!(clients.take_woken(), vec![2]);
        assert!(clients.lease(2).expect("registered").client.evicted);
        assert_eq!(clients.ids_where(|_| true), vec![1, 2]);
        // The running client (leased) may go itself; one that may not is skipped.
        let _leased = clients.lease(0).expect("registered");
        let running = Running {
            id: 1,
            memory: 10_000_000,
            evictable: true,
        };
        assert_eq!(
            clients.evict(1_000_000, Some(running), |_, _| {}),
            (1, true)
        );
        let kept = Running {
            evictable: false,
            ..running
        };
        assert_eq!(clients.evict(1, Some(kept), |_, _| {}), (1, false));
        assert_eq!(clients.take_woken(), vec![1]);
    }

    #[test]
    fn counts_blocked_clients() {
        let mut clients = two();
        clients.count_blocked(true);
        clients.count_blocked(true);
        clients.count_blocked(false);
        assert_eq!(clients.blocked(), 1);
    }
}
