//! Feeds arbitrary text to the nodes.conf loader. It may refuse the text but never panic;
//! a configuration it loads writes out to a file that loads to the same configuration.
//!
//! Run from server/fuzz (seeds in corpus/nodes_conf/):
//!
//! ```text
//! mkdir -p /tmp/nodes-corpus && cp corpus/nodes_conf/* /tmp/nodes-corpus/
//! cargo +nightly fuzz run nodes_conf /tmp/nodes-corpus -- -max_total_time=300 -max_len=4096
//! ```

#![no_main]

use goblin_server::cluster::nodes_conf;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(state) = nodes_conf::parse(&text, 0) else {
        return;
    };
    let file = nodes_conf::file_text(&state);
    let again = nodes_conf::parse(&file, 0).expect("a written nodes.conf loads");
    assert_eq!(nodes_conf::file_text(&again), file, "nodes.conf round trip");
});
