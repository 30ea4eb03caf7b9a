//! Feeds arbitrary bytes to the cluster bus's message parser, and what parses to the
//! gossip processing of a small cluster state. Neither may panic; a parsed message encodes
//! to bytes that parse again and encode to the same bytes.
//!
//! Run from server/fuzz (seeds in corpus/cluster_bus/: a PING with gossip and extensions, a
//! FAIL, an UPDATE, a PUBLISH, as Goblin encodes them):
//!
//! ```text
//! mkdir -p /tmp/bus-corpus && cp corpus/cluster_bus/* /tmp/bus-corpus/
//! cargo +nightly fuzz run cluster_bus /tmp/bus-corpus -- -max_total_time=300 -max_len=8192
//! ```

#![no_main]

use goblin_server::cluster::config::ClusterConfig;
use goblin_server::cluster::gossip::{self, Env, LinkView};
use goblin_server::cluster::node::{flags, Node};
use goblin_server::cluster::state::ClusterState;
use goblin_server::cluster::wire;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() >= wire::MIN_READ {
        let _ = wire::announced_len(data);
    }
    let Ok(msg) = wire::decode(data) else {
        return;
    };
    let bytes = wire::encode(&msg);
    let again = wire::decode(&bytes).expect("an encoded message parses");
    assert_eq!(wire::encode(&again), bytes, "encode/decode round trip");

    // What the message does to a state that knows its sender (as a master with slots) and
    // one other node, on an inbound and on an outbound link.
    let mut x = 7u64;
    let mut random = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let config = ClusterConfig::default();
    let none = |_: u16| 1;
    let env = Env {
        config: &config,
        now: 1_700_000_000_000,
        keys_in_slot: &none,
    };
    for (inbound, known) in [(true, true), (false, true), (false, false)] {
        let mut state = ClusterState::new(&mut random, 0);
        let me = state.myself;
        state.add_slot(me, 1);
        let mut other = Node::new([b'f'; 40], flags::MASTER | flags::PFAIL, 0);
        other.config_epoch = 3;
        state.nodes.insert(other.id, other);
        if known {
            let mut s = Node::new(again.header.sender, flags::MASTER, 0);
            s.ip = "127.0.0.1".into();
            state.nodes.insert(s.id, s);
        }
        let link = LinkView {
            inbound,
            node: (!inbound).then_some(again.header.sender),
            peer_ip: "127.0.0.1".into(),
            local_ip: "127.0.0.1".into(),
        };
        state.size = 2;
        let _ = gossip::process(
            &mut state,
            &env,
            &link,
            again.clone(),
            &|_| true,
            &mut random,
        );
        state.update_state(true, 15000, env.now);
    }
});
