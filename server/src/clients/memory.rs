//! What a client costs in memory (CLIENT LIST tot-mem, INFO mem_clients_normal) and the
//! limit `maxmemory-clients` puts on the normal and pubsub clients together (client
//! eviction, as Redis 7.2's evictClients).
//!
//! A client's memory is its connection's buffers (the read buffer's allocation, the
//! replies not yet written, the reply buffer Redis keeps per client), the arguments of the
//! command it runs, the commands it queued in MULTI, and the per-entry overhead of its
//! watched keys, subscriptions and tracking prefixes, plus the client structure itself.
//! Eviction picks the largest clients first by power-of-two size class (Redis's memory
//! usage buckets: a client twice the size of another is evicted before it), and within a
//! class in connection order.

use super::{Buffers, Client, ReplRole};

/// Bookkeeping per argument vector entry (Redis counts a pointer per argument).
const ARG_OVERHEAD: usize = std::mem::size_of::<Vec<u8>>();
/// Bookkeeping per watched key, subscription or tracking prefix besides its name.
const ENTRY_OVERHEAD: usize = 48;
/// The smallest limit applied, whatever `maxmemory-clients` says (Redis's floor, so that a
/// tiny setting cannot leave the server unreachable).
pub const MIN_LIMIT: u64 = 128 * 1024;
/// Size classes below 2^15 bytes share one class, as do those above 2^33 (Redis's
/// CLIENT_MEM_USAGE_BUCKET_MIN_LOG / MAX_LOG).
const MIN_CLASS: u32 = 15;
const MAX_CLASS: u32 = 33;

/// `maxmemory-clients`: bytes, or a percentage of `maxmemory`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientsLimit {
    /// A number of bytes (0: no limit).
    Bytes(u64),
    /// A percentage (0 to 100) of maxmemory (no limit while maxmemory is 0).
    Percent(u64),
    /// No limit (the default).
    #[default]
    Off,
}

impl ClientsLimit {
    /// Parses a CONFIG SET / redis.conf value: a memory value (`3mb`) or `N%`, with Redis's
    /// error texts.
    pub fn parse(text: &str) -> Result<ClientsLimit, String> {
        if let Some(digits) = text.strip_suffix('%') {
            if let Some(p) = crate::numbers::parse_i64(digits.as_bytes()) {
                if p > 100 {
                    return Err("percentage argument must be less or equal to 100".into());
                }
                if p >= 0 {
                    return Ok(match p {
                        0 => ClientsLimit::Off,
                        p => ClientsLimit::Percent(p as u64),
                    });
                }
            }
        }
        match crate::config::memtoull(text) {
            Some(0) => Ok(ClientsLimit::Off),
            Some(v) if v <= i64::MAX as u64 => Ok(ClientsLimit::Bytes(v)),
            Some(_) => Err(format!(
                "argument must be between -100 and {} inclusive",
                i64::MAX
            )),
            None => Err("argument must be a memory or percent value".into()),
        }
    }

    /// The value as CONFIG GET shows it.
    pub fn show(self) -> String {
        match self {
            ClientsLimit::Bytes(v) => v.to_string(),
            ClientsLimit::Percent(p) => format!("{p}%"),
            ClientsLimit::Off => "0".into(),
        }
    }

    /// The limit in bytes under `maxmemory`, at least [`MIN_LIMIT`]; None when there is
    /// none.
    #[inline]
    pub fn bytes(self, maxmemory: u64) -> Option<u64> {
        let bytes = match self {
            ClientsLimit::Off => return None,
            ClientsLimit::Percent(_) if maxmemory == 0 => return None,
            ClientsLimit::Percent(p) => (maxmemory as f64 * p as f64 / 100.0) as u64,
            ClientsLimit::Bytes(v) => v,
        };
        Some(bytes.max(MIN_LIMIT))
    }
}

/// Bytes of the arguments of the commands queued in MULTI (CLIENT LIST multi-mem).
pub fn multi_bytes(client: &Client) -> usize {
    let queued = client.multi.iter().flatten();
    queued.flat_map(|(_, args)| args).map(Vec::len).sum()
}

/// The transaction state's bookkeeping besides [`multi_bytes`]: per queued command and
/// argument, and per watched key.
fn transaction_overhead(client: &Client) -> usize {
    let queued: usize = client
        .multi
        .iter()
        .flatten()
        .map(|(_, args)| args.len() * ARG_OVERHEAD + ENTRY_OVERHEAD)
        .sum();
    let watched: usize = client
        .watched
        .iter()
        .map(|(_, key, _)| key.len() + ENTRY_OVERHEAD)
        .sum();
    queued + watched
}

/// The client's memory with its connection's `buffers` (CLIENT LIST tot-mem).
pub fn usage(client: &Client, buffers: Buffers) -> usize {
    use crate::pubsub::Kind;
    let names = |kind| {
        client
            .subscriptions
            .names(kind)
            .iter()
            .map(|n: &Vec<u8>| n.len() + ENTRY_OVERHEAD)
            .sum::<usize>()
    };
    let subscriptions = names(Kind::Channel) + names(Kind::Pattern) + names(Kind::Shard);
    let prefixes: usize = client
        .tracking
        .prefixes
        .iter()
        .map(|p| p.len() + ENTRY_OVERHEAD)
        .sum();
    std::mem::size_of::<Client>()
        + output(client, buffers)
        + buffers.input_capacity
        + buffers.argv
        + multi_bytes(client)
        + transaction_overhead(client)
        + subscriptions
        + prefixes
}

/// The memory of the client's output: what Redis counts (its reply buffer and the replies
/// waiting past it), or what the output buffers hold allocated if more (room grown for a
/// burst), so that what eviction sees of a client is never less than what it holds.
fn output(client: &Client, buffers: Buffers) -> usize {
    (client.reply_buffer.size + buffers.pending_output).max(buffers.output_capacity)
}

/// Whether the client's memory counts toward `maxmemory-clients`: normal and pubsub
/// clients (monitors included), not replicas or the master.
pub fn counted(client: &Client) -> bool {
    client.repl_role == ReplRole::Normal || client.monitor
}

/// Whether the client may be evicted: counted, and not CLIENT NO-EVICT.
pub fn evictable(client: &Client) -> bool {
    counted(client) && !client.no_evict
}

/// The size class of `bytes`: its bit length, clamped to Redis's bucket range.
pub fn size_class(bytes: usize) -> u32 {
    (usize::BITS - bytes.leading_zeros()).clamp(MIN_CLASS, MAX_CLASS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_shows_as_redis() {
        assert_eq!(ClientsLimit::parse("7%"), Ok(ClientsLimit::Percent(7)));
        assert_eq!(ClientsLimit::parse("0%"), Ok(ClientsLimit::Off));
        assert_eq!(ClientsLimit::parse("1kb"), Ok(ClientsLimit::Bytes(1024)));
        assert_eq!(ClientsLimit::parse("0"), Ok(ClientsLimit::Off));
        assert_eq!(
            ClientsLimit::parse("101%").unwrap_err(),
            "percentage argument must be less or equal to 100"
        );
        for bad in ["-5", "abc", "-5%", "%"] {
            assert_eq!(
                ClientsLimit::parse(bad).unwrap_err(),
                "argument must be a memory or percent value",
                "{bad}"
            );
        }
        assert_eq!(ClientsLimit::Percent(7).show(), "7%");
        assert_eq!(ClientsLimit::Bytes(1024).show(), "1024");
        assert_eq!(ClientsLimit::Off.show(), "0");
    }

    #[test]
    fn limit_in_bytes_has_a_floor_and_follows_maxmemory() {
        assert_eq!(ClientsLimit::Off.bytes(1 << 30), None);
        assert_eq!(ClientsLimit::Percent(7).bytes(0), None);
        assert_eq!(ClientsLimit::Percent(7).bytes(6 << 20), Some(440401));
        assert_eq!(ClientsLimit::Bytes(1).bytes(0), Some(MIN_LIMIT));
        assert_eq!(ClientsLimit::Bytes(3_000_000).bytes(0), Some(3_000_000));
    }

    #[test]
    fn size_classes_double() {
        assert_eq!(size_class(0), MIN_CLASS);
        assert_eq!(size_class(40_000), 16);
        assert_eq!(size_class(65_535), 16);
        assert_eq!(size_class(65_536), 17);
        assert_eq!(size_class(usize::MAX), MAX_CLASS);
    }

    #[test]
    fn usage_grows_with_what_the_client_holds() {
        let mut c = Client::internal(1);
        let base = usage(&c, Buffers::default());
        let buffers = Buffers {
            query: 10,
            input_capacity: 100,
            pending_output: 1000,
            argv: 7,
            output_capacity: 2000,
        };
        assert_eq!(usage(&c, buffers), base + 1107);
        // Allocated output past the reply buffer and what waits counts instead.
        let grown = Buffers {
            output_capacity: c.reply_buffer.size + 5000,
            ..buffers
        };
        assert_eq!(usage(&c, grown), base + 5000 + 107);
        c.watched.push((0, b"key".to_vec(), true));
        c.subscriptions
            .names_mut(crate::pubsub::Kind::Pattern)
            .insert(b"p*".to_vec());
        c.tracking.prefixes.push(b"pre".to_vec());
        assert_eq!(
            usage(&c, Buffers::default()),
            base + 3 * ENTRY_OVERHEAD + 3 + 2 + 3
        );
        assert!(evictable(&c));
        c.no_evict = true;
        assert!(!evictable(&c) && counted(&c));
    }
}
