//! Feeds arbitrary bytes to the AOF's two readers: the manifest parser and the reader of a
//! commands file. Neither may panic, loop or allocate without bound. A manifest that parses
//! and names files must format to text that parses to the same manifest; the commands read
//! from a file, written again as RESP, must read back the same, and the reader must stop
//! where the file ends or at the first bad byte.
//!
//! Run from server/fuzz (seeds in corpus/aof_load/):
//!
//! ```text
//! mkdir -p /tmp/aof-corpus && cp corpus/aof_load/* /tmp/aof-corpus/
//! cargo +nightly fuzz run aof_load /tmp/aof-corpus -- -max_total_time=300 -max_len=4096
//! ```

#![no_main]

use goblin_server::aof::manifest::Manifest;
use goblin_server::aof::stream::Commands;
use goblin_server::propagate::encode;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // A manifest of comment lines alone parses (as Redis reads it) to no files, whose text
    // is empty: only a manifest naming files can go round. A name that needs escapes can
    // format to a line past the reader's 1024 bytes, as Redis's own writer can: such a
    // manifest is not read back either.
    let readable = |text: &str| !text.is_empty() && text.lines().all(|l| l.len() < 1024);
    if let Some(m) = Manifest::parse(data).ok().filter(|m| readable(&m.format())) {
        let text = m.format();
        let again = Manifest::parse(text.as_bytes()).expect("a formatted manifest parses");
        assert_eq!(m.format(), again.format(), "manifest round trip");
    }
    let mut reader = Commands::new(data, 0);
    let mut commands = Vec::new();
    while let Ok(Some(argv)) = reader.next_command() {
        assert!(reader.pos <= data.len());
        commands.push(argv);
    }
    let mut bytes = Vec::new();
    for argv in &commands {
        let args: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
        encode(&mut bytes, &args);
    }
    let mut again = Commands::new(&bytes, 0);
    for argv in &commands {
        assert_eq!(
            again.next_command(),
            Ok(Some(argv.clone())),
            "commands round trip"
        );
    }
    assert_eq!(again.next_command(), Ok(None));
});
