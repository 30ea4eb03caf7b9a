//! Fuzzes the memcache protocol end to end (line splitting, parsing, classic and meta
//! commands, data blocks, swallowing) against a small RAM store: any input must be
//! answered without a panic, in one piece or split at a fuzzer-chosen point.
#![no_main]

use std::sync::OnceLock;

use goblin_objcache::front::memcache::session::Session;
use goblin_objcache::{Store, StoreArgs};
use libfuzzer_sys::fuzz_target;

fn store() -> &'static Store {
    static STORE: OnceLock<Store> = OnceLock::new();
    STORE.get_or_init(|| {
        let args = StoreArgs {
            small_memory: Some(8 << 20),
            max_item_size: Some(64 << 10),
            block: Some(1 << 20),
            cores: Some(1),
            ..StoreArgs::default()
        };
        Store::new(args.resolve().expect("valid test config")).expect("RAM store")
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, body)) = data.split_first() else {
        return;
    };
    let cut = (cut as usize * body.len()) / 256;
    let mut s = Session::default();
    s.feed(&body[..cut]);
    s.process(store());
    s.feed(&body[cut..]);
    s.process(store());
});
