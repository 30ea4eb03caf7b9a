//! The cluster bus's messages in Redis 7's binary format (cluster.h's clusterMsg): parsing
//! with Redis's validity checks (clusterIsValidPacket) and encoding. No I/O.
//!
//! Every integer is big-endian. The header, 2256 bytes:
//!
//! ```text
//! offset  size  field
//!      0     4  sig            "RCmb"
//!      4     4  totlen         the whole message's length
//!      8     2  ver            1
//!     10     2  port           client port
//!     12     2  type           0 PING 1 PONG 2 MEET 3 FAIL 4 PUBLISH 5 AUTH_REQ 6 AUTH_ACK
//!                              7 UPDATE 8 MFSTART 9 MODULE 10 PUBLISHSHARD
//!     14     2  count          gossip entries (PING, PONG, MEET)
//!     16     8  currentEpoch
//!     24     8  configEpoch    the sender's, or its master's
//!     32     8  offset         replication offset
//!     40    40  sender         node id
//!     80  2048  myslots        bitmap of the slots it (or its master) serves
//!   2128    40  slaveof        its master's id, or 40 NULs
//!   2168    46  myip           the address it announces, NUL-padded ("" unknown)
//!   2214     2  extensions     number of extensions (PING, PONG, MEET)
//!   2216    30  notused
//!   2246     2  pport          the other client port (TLS)
//!   2248     2  cport          bus port
//!   2250     2  flags          node flags (see node::flags)
//!   2252     1  state          0 ok, 1 fail
//!   2253     3  mflags         mflags[0]: 1 PAUSED, 2 FORCEACK, 4 EXT_DATA
//!   2256        data
//! ```
//!
//! The data by type:
//!
//! ```text
//! PING/PONG/MEET  count x gossip (104 bytes each), then the extensions
//!   gossip:  0 nodename 40 | 40 ping_sent 4 | 44 pong_received 4 | 48 ip 46 | 94 port 2
//!            | 96 cport 2 | 98 flags 2 | 100 pport 2 | 102 notused 2
//!   extension: 0 length 4 (header included, a multiple of 8) | 4 type 2 | 6 unused 2
//!            | 8 payload: 0 hostname (NUL-terminated, padded) | 1 human nodename (same)
//!              | 2 forgotten node (id 40, ttl 8) | 3 shard id (40)
//! FAIL            nodename 40                                   (totlen 2296)
//! PUBLISH         channel_len 4 | message_len 4 | channel | message
//! UPDATE          configEpoch 8 | nodename 40 | slots 2048       (totlen 4352)
//! AUTH_REQUEST, AUTH_ACK, MFSTART   no data                       (totlen 2256)
//! ```

use super::node::{NodeId, SlotBits};
use super::slot::SLOTS;

/// Header bytes before the data.
pub const HEADER_LEN: usize = 2256;
/// Bytes of one gossip entry.
pub const GOSSIP_LEN: usize = 104;
/// Bytes a reader needs to know a message's length (Redis's RCVBUF_MIN_READ_LEN).
pub const MIN_READ: usize = 16;
/// mflags[0]: the message carries extensions.
pub const FLAG0_EXT_DATA: u8 = 4;
/// mflags[0]: a manual failover's vote request (granted though the master is up).
pub const FLAG0_FORCEACK: u8 = 2;
/// mflags[0]: the sender, a master, paused its clients for a manual failover.
pub const FLAG0_PAUSED: u8 = 1;
/// Length of an IP field.
const IP_LEN: usize = 46;

/// Message types.
pub mod types {
    /// PING.
    pub const PING: u16 = 0;
    /// PONG.
    pub const PONG: u16 = 1;
    /// MEET.
    pub const MEET: u16 = 2;
    /// FAIL.
    pub const FAIL: u16 = 3;
    /// PUBLISH.
    pub const PUBLISH: u16 = 4;
    /// FAILOVER_AUTH_REQUEST.
    pub const AUTH_REQUEST: u16 = 5;
    /// FAILOVER_AUTH_ACK.
    pub const AUTH_ACK: u16 = 6;
    /// UPDATE.
    pub const UPDATE: u16 = 7;
    /// MFSTART.
    pub const MFSTART: u16 = 8;
    /// MODULE.
    pub const MODULE: u16 = 9;
    /// PUBLISHSHARD.
    pub const PUBLISHSHARD: u16 = 10;
    /// Number of types.
    pub const COUNT: usize = 11;
}

/// Extension types.
mod ext {
    pub const HOSTNAME: u16 = 0;
    pub const HUMAN_NODENAME: u16 = 1;
    pub const FORGOTTEN_NODE: u16 = 2;
    pub const SHARDID: u16 = 3;
}

/// The header's fields.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Header {
    /// Message type (see [`types`]).
    pub mtype: u16,
    /// Client port.
    pub port: u16,
    /// The sender's current epoch.
    pub current_epoch: u64,
    /// The sender's config epoch (its master's if a replica).
    pub config_epoch: u64,
    /// Replication offset.
    pub offset: u64,
    /// The sender's id.
    pub sender: NodeId,
    /// The slots it claims.
    pub myslots: SlotBits,
    /// Its master, if a replica.
    pub slaveof: Option<NodeId>,
    /// The address it announces ("" unknown).
    pub myip: String,
    /// The other client port.
    pub pport: u16,
    /// Its bus port.
    pub cport: u16,
    /// Its node flags.
    pub flags: u16,
    /// Whether it sees the cluster failing (state 1).
    pub state_fail: bool,
    /// Message flags.
    pub mflags: [u8; 3],
}

/// One gossip entry: what the sender knows of another node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gossip {
    /// The node's id.
    pub id: NodeId,
    /// When the sender pinged it, seconds (truncated).
    pub ping_sent: u32,
    /// When the sender got its last pong, seconds.
    pub pong_received: u32,
    /// Its address.
    pub ip: String,
    /// Client port.
    pub port: u16,
    /// Bus port.
    pub cport: u16,
    /// Its flags as the sender sees them.
    pub flags: u16,
    /// The other client port.
    pub pport: u16,
}

/// A PING extension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ext {
    /// The sender's hostname.
    Hostname(String),
    /// The sender's human-readable node name.
    HumanNodename(String),
    /// A node to forget, for `ttl` seconds.
    ForgottenNode(NodeId, u64),
    /// The sender's shard id.
    ShardId(NodeId),
    /// A type this node does not know (ignored, as Redis).
    Unknown(u16),
}

/// A message's data.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Body {
    /// PING, PONG or MEET.
    Ping {
        /// Gossip entries.
        gossip: Vec<Gossip>,
        /// Extensions.
        exts: Vec<Ext>,
    },
    /// FAIL: the node now failing.
    Fail(NodeId),
    /// PUBLISH or PUBLISHSHARD.
    Publish {
        /// Channel.
        channel: Vec<u8>,
        /// Message.
        message: Vec<u8>,
    },
    /// UPDATE: a node's newer slot configuration.
    Update {
        /// Its config epoch.
        config_epoch: u64,
        /// The node.
        id: NodeId,
        /// Its slots.
        slots: SlotBits,
    },
    /// Another type, its data kept unparsed.
    Other(Vec<u8>),
}

/// A whole message.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Message {
    /// The header.
    pub header: Header,
    /// The data.
    pub body: Body,
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn id_at(b: &[u8], at: usize) -> NodeId {
    b[at..at + 40].try_into().expect("40 bytes")
}

/// A NUL-terminated string in a fixed field.
fn cstr(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// The length a message announces, once [`MIN_READ`] bytes arrived; `Err` for a buffer
/// that is not a bus message (bad signature, length below the minimum).
pub fn announced_len(buf: &[u8]) -> Result<usize, &'static str> {
    if &buf[..4] != b"RCmb" {
        return Err("bad signature");
    }
    let totlen = be32(buf, 4) as usize;
    if totlen < MIN_READ {
        return Err("bad length");
    }
    Ok(totlen)
}

/// Parses one whole message (`buf` is exactly `totlen` bytes), with Redis's checks.
pub fn decode(buf: &[u8]) -> Result<Message, &'static str> {
    if buf.len() < MIN_READ || announced_len(buf)? != buf.len() {
        return Err("length mismatch");
    }
    if be16(buf, 8) != 1 {
        return Err("unsupported protocol version");
    }
    if buf.len() < HEADER_LEN {
        return Err("short message");
    }
    let mtype = be16(buf, 12);
    let count = be16(buf, 14) as usize;
    let mut myslots = SlotBits::default();
    myslots.0.copy_from_slice(&buf[80..80 + SLOTS / 8]);
    let slaveof = id_at(buf, 2128);
    let mut mflags = [0u8; 3];
    mflags.copy_from_slice(&buf[2253..2256]);
    let header = Header {
        mtype,
        port: be16(buf, 10),
        current_epoch: be64(buf, 16),
        config_epoch: be64(buf, 24),
        offset: be64(buf, 32),
        sender: id_at(buf, 40),
        myslots,
        slaveof: (slaveof != [0u8; 40]).then_some(slaveof),
        myip: cstr(&buf[2168..2168 + IP_LEN]),
        pport: be16(buf, 2246),
        cport: be16(buf, 2248),
        flags: be16(buf, 2250),
        state_fail: buf[2252] != 0,
        mflags,
    };
    let data = &buf[HEADER_LEN..];
    let body = match mtype {
        types::PING | types::PONG | types::MEET => {
            let gossip_len = count * GOSSIP_LEN;
            if data.len() < gossip_len {
                return Err("gossip past the end");
            }
            let gossip = data[..gossip_len]
                .chunks(GOSSIP_LEN)
                .map(|g| Gossip {
                    id: id_at(g, 0),
                    ping_sent: be32(g, 40),
                    pong_received: be32(g, 44),
                    ip: cstr(&g[48..48 + IP_LEN]),
                    port: be16(g, 94),
                    cport: be16(g, 96),
                    flags: be16(g, 98),
                    pport: be16(g, 100),
                })
                .collect();
            let mut rest = &data[gossip_len..];
            let mut exts = Vec::new();
            if mflags[0] & FLAG0_EXT_DATA != 0 {
                for _ in 0..be16(buf, 2214) {
                    if rest.len() < 8 {
                        return Err("extension past the end");
                    }
                    let len = be32(rest, 0) as usize;
                    if !len.is_multiple_of(8) || len < 8 || len > rest.len() {
                        return Err("bad extension length");
                    }
                    let payload = &rest[8..len];
                    exts.push(match be16(rest, 4) {
                        ext::HOSTNAME => Ext::Hostname(cstr(payload)),
                        ext::HUMAN_NODENAME => Ext::HumanNodename(cstr(payload)),
                        ext::FORGOTTEN_NODE if payload.len() >= 48 => {
                            Ext::ForgottenNode(id_at(payload, 0), be64(payload, 40))
                        }
                        ext::SHARDID if payload.len() >= 40 => Ext::ShardId(id_at(payload, 0)),
                        ext::FORGOTTEN_NODE | ext::SHARDID => return Err("short extension"),
                        other => Ext::Unknown(other),
                    });
                    rest = &rest[len..];
                }
            }
            if !rest.is_empty() {
                return Err("length mismatch");
            }
            Body::Ping { gossip, exts }
        }
        types::FAIL => {
            if data.len() != 40 {
                return Err("length mismatch");
            }
            Body::Fail(id_at(data, 0))
        }
        types::PUBLISH | types::PUBLISHSHARD => {
            if data.len() < 8 {
                return Err("length mismatch");
            }
            let clen = be32(data, 0) as usize;
            let mlen = be32(data, 4) as usize;
            if clen.checked_add(mlen).and_then(|n| n.checked_add(8)) != Some(data.len()) {
                return Err("length mismatch");
            }
            Body::Publish {
                channel: data[8..8 + clen].to_vec(),
                message: data[8 + clen..].to_vec(),
            }
        }
        types::UPDATE => {
            if data.len() != 8 + 40 + SLOTS / 8 {
                return Err("length mismatch");
            }
            let mut slots = SlotBits::default();
            slots.0.copy_from_slice(&data[48..]);
            Body::Update {
                config_epoch: be64(data, 0),
                id: id_at(data, 8),
                slots,
            }
        }
        types::AUTH_REQUEST | types::AUTH_ACK | types::MFSTART => {
            if !data.is_empty() {
                return Err("length mismatch");
            }
            Body::Other(Vec::new())
        }
        _ => Body::Other(data.to_vec()),
    };
    Ok(Message { header, body })
}

/// Writes `ip` NUL-padded into a 46-byte field, cut at a character boundary to 45 bytes.
fn put_ip(out: &mut [u8], ip: &str) {
    let mut n = ip.len().min(IP_LEN - 1);
    while !ip.is_char_boundary(n) {
        n -= 1;
    }
    out[..n].copy_from_slice(&ip.as_bytes()[..n]);
}

fn padded_ext(out: &mut Vec<u8>, kind: u16, payload: &[u8]) {
    let len = 8 + payload.len().div_ceil(8) * 8;
    out.extend_from_slice(&(len as u32).to_be_bytes());
    out.extend_from_slice(&kind.to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(payload);
    out.resize(out.len() + (len - 8 - payload.len()), 0);
}

/// Encodes `msg` (count, extensions and totlen are computed from the body).
pub fn encode(msg: &Message) -> Vec<u8> {
    let h = &msg.header;
    let mut out = vec![0u8; HEADER_LEN];
    out[..4].copy_from_slice(b"RCmb");
    out[8..10].copy_from_slice(&1u16.to_be_bytes());
    out[10..12].copy_from_slice(&h.port.to_be_bytes());
    out[12..14].copy_from_slice(&h.mtype.to_be_bytes());
    out[16..24].copy_from_slice(&h.current_epoch.to_be_bytes());
    out[24..32].copy_from_slice(&h.config_epoch.to_be_bytes());
    out[32..40].copy_from_slice(&h.offset.to_be_bytes());
    out[40..80].copy_from_slice(&h.sender);
    out[80..80 + SLOTS / 8].copy_from_slice(&h.myslots.0[..]);
    if let Some(m) = &h.slaveof {
        out[2128..2168].copy_from_slice(m);
    }
    put_ip(&mut out[2168..2168 + IP_LEN], &h.myip);
    out[2246..2248].copy_from_slice(&h.pport.to_be_bytes());
    out[2248..2250].copy_from_slice(&h.cport.to_be_bytes());
    out[2250..2252].copy_from_slice(&h.flags.to_be_bytes());
    out[2252] = h.state_fail as u8;
    out[2253..2256].copy_from_slice(&h.mflags);
    match &msg.body {
        Body::Ping { gossip, exts } => {
            out[14..16].copy_from_slice(&(gossip.len() as u16).to_be_bytes());
            for g in gossip {
                let mut e = [0u8; GOSSIP_LEN];
                e[..40].copy_from_slice(&g.id);
                e[40..44].copy_from_slice(&g.ping_sent.to_be_bytes());
                e[44..48].copy_from_slice(&g.pong_received.to_be_bytes());
                put_ip(&mut e[48..48 + IP_LEN], &g.ip);
                e[94..96].copy_from_slice(&g.port.to_be_bytes());
                e[96..98].copy_from_slice(&g.cport.to_be_bytes());
                e[98..100].copy_from_slice(&g.flags.to_be_bytes());
                e[100..102].copy_from_slice(&g.pport.to_be_bytes());
                out.extend_from_slice(&e);
            }
            let mut n = 0u16;
            for x in exts {
                match x {
                    Ext::Hostname(s) | Ext::HumanNodename(s) => {
                        let kind = if matches!(x, Ext::Hostname(_)) {
                            ext::HOSTNAME
                        } else {
                            ext::HUMAN_NODENAME
                        };
                        let mut p = s.as_bytes().to_vec();
                        p.push(0);
                        padded_ext(&mut out, kind, &p);
                    }
                    Ext::ForgottenNode(id, ttl) => {
                        let mut p = id.to_vec();
                        p.extend_from_slice(&ttl.to_be_bytes());
                        padded_ext(&mut out, ext::FORGOTTEN_NODE, &p);
                    }
                    Ext::ShardId(id) => padded_ext(&mut out, ext::SHARDID, id),
                    Ext::Unknown(_) => continue,
                }
                n += 1;
            }
            out[2214..2216].copy_from_slice(&n.to_be_bytes());
            out[2253] |= FLAG0_EXT_DATA;
        }
        Body::Fail(id) => out.extend_from_slice(id),
        Body::Publish { channel, message } => {
            out.extend_from_slice(&(channel.len() as u32).to_be_bytes());
            out.extend_from_slice(&(message.len() as u32).to_be_bytes());
            out.extend_from_slice(channel);
            out.extend_from_slice(message);
        }
        Body::Update {
            config_epoch,
            id,
            slots,
        } => {
            out.extend_from_slice(&config_epoch.to_be_bytes());
            out.extend_from_slice(id);
            out.extend_from_slice(&slots.0[..]);
        }
        Body::Other(data) => out.extend_from_slice(data),
    }
    let len = out.len() as u32;
    out[4..8].copy_from_slice(&len.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(mtype: u16) -> Header {
        let mut myslots = SlotBits::default();
        myslots.set(0, true);
        myslots.set(16383, true);
        Header {
            mtype,
            port: 7000,
            current_epoch: 5,
            config_epoch: 3,
            offset: 9,
            sender: [b'a'; 40],
            myslots,
            slaveof: None,
            myip: "127.0.0.1".into(),
            pport: 0,
            cport: 17000,
            flags: 1,
            state_fail: false,
            mflags: [0; 3],
        }
    }

    #[test]
    fn round_trips_and_sizes() {
        let ping = Message {
            header: header(types::PING),
            body: Body::Ping {
                gossip: vec![Gossip {
                    id: [b'b'; 40],
                    ping_sent: 1,
                    pong_received: 2,
                    ip: "10.0.0.1".into(),
                    port: 7001,
                    cport: 17001,
                    flags: 1,
                    pport: 0,
                }],
                exts: vec![
                    Ext::Hostname("host-a".into()),
                    Ext::ForgottenNode([b'c'; 40], 60),
                    Ext::ShardId([b'd'; 40]),
                ],
            },
        };
        let bytes = encode(&ping);
        // header + one gossip + hostname (8 + 8) + forgotten (8 + 48) + shard id (8 + 40)
        assert_eq!(bytes.len(), HEADER_LEN + GOSSIP_LEN + 16 + 56 + 48);
        let mut back = decode(&bytes).unwrap();
        back.header.mflags[0] &= !FLAG0_EXT_DATA;
        assert!(back == ping);
        let fail = encode(&Message {
            header: header(types::FAIL),
            body: Body::Fail([b'e'; 40]),
        });
        assert_eq!(fail.len(), 2296);
        let update = encode(&Message {
            header: header(types::UPDATE),
            body: Body::Update {
                config_epoch: 4,
                id: [b'f'; 40],
                slots: SlotBits::default(),
            },
        });
        assert_eq!(update.len(), 4352);
        assert!(decode(&update).is_ok());
        let publish = encode(&Message {
            header: header(types::PUBLISH),
            body: Body::Publish {
                channel: b"ch".to_vec(),
                message: b"hello".to_vec(),
            },
        });
        assert!(decode(&publish).is_ok());
    }

    /// A PONG a real Redis 7.0 sent (announcing hostname host-a, serving slots 0-100).
    #[test]
    fn reads_a_redis_pong() {
        let bytes = include_bytes!("../../fuzz/corpus/cluster_bus/redis70_pong");
        let msg = decode(bytes).unwrap();
        assert_eq!(msg.header.mtype, types::PONG);
        assert!(msg.header.myslots.get(100) && !msg.header.myslots.get(101));
        let Body::Ping { gossip, exts } = &msg.body else {
            panic!("not a PONG body")
        };
        assert!(gossip.is_empty());
        assert_eq!(exts, &vec![Ext::Hostname("host-a".into())]);
        assert_eq!(encode(&msg), bytes.to_vec());
    }

    #[test]
    fn refuses_bad_messages() {
        let mut bytes = encode(&Message {
            header: header(types::FAIL),
            body: Body::Fail([b'e'; 40]),
        });
        assert!(decode(&bytes[..100]).is_err());
        bytes[8] = 9;
        assert!(decode(&bytes).is_err());
        assert!(announced_len(b"XXXX\0\0\0\x20........").is_err());
    }

    use proptest::prelude::*;

    fn arb_id() -> impl Strategy<Value = NodeId> {
        proptest::array::uniform::<_, 40>(proptest::sample::select(b"0123456789abcdef".to_vec()))
    }

    fn arb_gossip() -> impl Strategy<Value = Gossip> {
        (
            arb_id(),
            any::<u32>(),
            any::<u32>(),
            "[0-9.:a-f]{0,45}",
            any::<u16>(),
            any::<u16>(),
            any::<u16>(),
        )
            .prop_map(
                |(id, ping_sent, pong_received, ip, port, cport, flags)| Gossip {
                    id,
                    ping_sent,
                    pong_received,
                    ip,
                    port,
                    cport,
                    flags,
                    pport: 0,
                },
            )
    }

    fn arb_ext() -> impl Strategy<Value = Ext> {
        prop_oneof![
            "[a-z0-9.-]{0,60}".prop_map(Ext::Hostname),
            (arb_id(), any::<u64>()).prop_map(|(id, ttl)| Ext::ForgottenNode(id, ttl)),
            arb_id().prop_map(Ext::ShardId),
        ]
    }

    fn arb_body() -> impl Strategy<Value = (u16, Body)> {
        prop_oneof![
            (
                0u16..3,
                proptest::collection::vec(arb_gossip(), 0..5),
                proptest::collection::vec(arb_ext(), 0..4)
            )
                .prop_map(|(t, gossip, exts)| (t, Body::Ping { gossip, exts })),
            arb_id().prop_map(|id| (types::FAIL, Body::Fail(id))),
            (
                proptest::collection::vec(any::<u8>(), 0..20),
                proptest::collection::vec(any::<u8>(), 0..50)
            )
                .prop_map(|(channel, message)| (
                    types::PUBLISH,
                    Body::Publish { channel, message }
                )),
            (
                any::<u64>(),
                arb_id(),
                proptest::collection::vec(0usize..SLOTS, 0..20)
            )
                .prop_map(|(config_epoch, id, set)| {
                    let mut slots = SlotBits::default();
                    for s in set {
                        slots.set(s, true);
                    }
                    (
                        types::UPDATE,
                        Body::Update {
                            config_epoch,
                            id,
                            slots,
                        },
                    )
                }),
        ]
    }

    proptest! {
        /// Any message this node can send parses back to itself.
        #[test]
        fn messages_round_trip(
            (mtype, body) in arb_body(),
            sender in arb_id(),
            epochs in any::<(u64, u64, u64)>(),
            slots in proptest::collection::vec(0usize..SLOTS, 0..30),
            master in proptest::option::of(arb_id()),
            ports in any::<(u16, u16, u16)>(),
        ) {
            let mut h = header(mtype);
            h.sender = sender;
            (h.current_epoch, h.config_epoch, h.offset) = epochs;
            for s in slots {
                h.myslots.set(s, true);
            }
            h.slaveof = master;
            (h.port, h.cport, h.flags) = ports;
            let msg = Message { header: h, body };
            let bytes = encode(&msg);
            let mut back = decode(&bytes).unwrap();
            if matches!(back.body, Body::Ping { .. }) {
                back.header.mflags[0] &= !FLAG0_EXT_DATA;
            }
            prop_assert!(back == msg);
            // Every cut of the message is refused, never a panic.
            for cut in [0, 10, HEADER_LEN - 1, bytes.len() - 1] {
                prop_assert!(decode(&bytes[..cut]).is_err());
            }
        }
    }
}
