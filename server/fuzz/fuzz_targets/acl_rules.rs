//! Feeds arbitrary bytes to the ACL rule parser and the ACL file loader: as an ACL file
//! (`user <name> <rules...>` lines), as the words of one ACL SETUSER and of a `user`
//! directive. Nothing may panic; a file that loads must render (ACL SAVE's text) to a
//! file that loads to the same users, unless a selector holds a pattern with parentheses
//! or a first-argument rule holds a tab or CR (Redis's file format cannot carry those:
//! see `round_trips`); and the permission
//! check must answer for any user built.
//!
//! Run from server/fuzz (seeds in corpus/acl_rules/):
//!
//! ```text
//! mkdir -p /tmp/acl-corpus && cp corpus/acl_rules/* /tmp/acl-corpus/
//! cargo +nightly fuzz run acl_rules /tmp/acl-corpus -- -max_total_time=300 -max_len=2048
//! ```

#![no_main]

use goblin_server::acl::{self, file, Acl};
use goblin_server::commands::lookup;
use libfuzzer_sys::fuzz_target;

/// Commands the permission check is asked about for every user built.
const PROBES: &[&[&str]] = &[
    &["get", "k"],
    &["set", "k", "v", "GET"],
    &["mget", "a", "b"],
    &["publish", "ch", "m"],
    &["psubscribe", "p*"],
    &["select", "0"],
    &["ping"],
    &["zunionstore", "d", "2", "a", "b"],
];

fn probe(user: &acl::User) {
    for args in PROBES {
        let mut cmd = lookup(args[0].as_bytes()).expect("a command Goblin has");
        if !cmd.subcommands.is_empty() && args.len() > 1 {
            cmd = cmd.subcommand(args[1].as_bytes()).expect("a subcommand");
        }
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        if let Err(acl::Denial::Key(p) | acl::Denial::Channel(p)) = acl::check(user, cmd, &argv) {
            assert!(p < argv.len());
        }
    }
}

/// Whether Redis's file format can carry these users: no selector holding a parenthesis,
/// and no tab, CR or LF in a rule (a first argument may hold them; the loader trims them
/// from the ends of every rule and splits lines at LF, as Redis's does).
fn round_trips(users: &std::collections::BTreeMap<Vec<u8>, acl::User>) -> bool {
    users.values().all(|u| {
        !u.describe()
            .iter()
            .any(|b| matches!(b, b'\t' | b'\r' | b'\n'))
            && u.selectors[1..]
                .iter()
                .all(|s| !s.describe().iter().any(|b| *b == b'(' || *b == b')'))
    })
}

fuzz_target!(|data: &[u8]| {
    if let Ok(users) = file::parse(data, "fuzz.acl", false) {
        users.values().for_each(probe);
        let text = file::render(users.values());
        if round_trips(&users) {
            let again = file::parse(&text, "fuzz.acl", false).expect("a saved ACL file loads");
            assert_eq!(file::render(again.values()), text, "ACL file round trip");
        }
    }
    let words: Vec<&[u8]> = data
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    if let Some((name, rules)) = words.split_first() {
        let mut acl = Acl::default();
        if acl.set_user(name, rules).is_ok() {
            probe(acl.user(name).expect("set"));
            let described = acl.user(name).expect("set").describe();
            assert!(!described.is_empty());
        }
        let owned: Vec<Vec<u8>> = words.iter().map(|w| w.to_vec()).collect();
        if let Ok(d) = file::directive(&owned, &[]) {
            if let Ok(users) = file::from_directives(&[d], false) {
                users.values().for_each(probe);
            }
        }
    }
});
