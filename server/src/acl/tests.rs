//! Unit tests of the rule parser and the matcher (expected texts as Redis 7.2 gives them).

use super::*;
use crate::commands::lookup;

fn acl_with(name: &str, rules: &[&str]) -> Acl {
    let mut acl = Acl::default();
    let rules: Vec<&[u8]> = rules.iter().map(|r| r.as_bytes()).collect();
    acl.set_user(name.as_bytes(), &rules).unwrap();
    acl
}

fn describe(acl: &Acl, name: &str) -> String {
    String::from_utf8(acl.user(name.as_bytes()).unwrap().describe()).unwrap()
}

fn run(acl: &Acl, name: &str, args: &[&str]) -> Result<(), Denial> {
    let user = acl.user(name.as_bytes()).unwrap();
    let mut cmd = lookup(args[0].as_bytes()).unwrap();
    if !cmd.subcommands.is_empty() && args.len() > 1 {
        cmd = cmd.subcommand(args[1].as_bytes()).unwrap();
    }
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    check(user, cmd, &args)
}

#[test]
fn default_and_new_users_describe_as_redis() {
    let acl = Acl::default();
    assert_eq!(
        describe(&acl, "default"),
        "on nopass sanitize-payload ~* &* +@all"
    );
    let acl = acl_with("u", &[]);
    assert_eq!(
        describe(&acl, "u"),
        "off sanitize-payload resetchannels -@all"
    );
    let acl = acl_with(
        "u",
        &[
            "on", ">p1", "~a*", "%R~b*", "%W~c*", "&ch", "+get", "+@hash",
        ],
    );
    assert_eq!(
        describe(&acl, "u"),
        format!(
            "on sanitize-payload #{} ~a* %R~b* %W~c* resetchannels &ch -@all +get +@hash",
            String::from_utf8(user::hash_password(b"p1")).unwrap()
        )
    );
}

#[test]
fn command_rules_keep_their_order_and_drop_what_they_override() {
    let acl = acl_with("u", &["+@all", "-get", "+config|get", "-config", "+get"]);
    assert_eq!(
        describe(&acl, "u"),
        "off sanitize-payload resetchannels +@all -config +get"
    );
    let acl = acl_with(
        "u",
        &["+config|get", "+config|set", "-config|get", "+select|0"],
    );
    assert_eq!(
        describe(&acl, "u"),
        "off sanitize-payload resetchannels -@all +config|set -config|get +select|0"
    );
    let acl = acl_with("u", &["+@READ", "-@read", "nocommands", "+GET"]);
    assert_eq!(
        describe(&acl, "u"),
        "off sanitize-payload resetchannels -@all +get"
    );
}

#[test]
fn malformed_rules_fail_with_redis_texts() {
    let mut acl = Acl::default();
    let err = |acl: &mut Acl, rules: &[&str]| {
        let rules: Vec<&[u8]> = rules.iter().map(|r| r.as_bytes()).collect();
        acl.set_user(b"u", &rules).unwrap_err()
    };
    assert_eq!(
        err(&mut acl, &["+nosuch"]),
        "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL"
    );
    assert_eq!(
        err(&mut acl, &["bogus"]),
        "Error in ACL SETUSER modifier 'bogus': Syntax error"
    );
    assert!(err(&mut acl, &["allkeys", "~a"])
        .ends_with("Try 'resetkeys' to start with an empty list of patterns"));
    assert!(err(&mut acl, &["&*", "&a"]).contains("'allchannels' flag"));
    assert!(err(&mut acl, &["<nopass"]).ends_with("does not exist"));
    assert!(err(&mut acl, &["#abc"]).ends_with("lowercase hexadecimal characters"));
    assert!(err(&mut acl, &["+config|get|x"])
        .ends_with("Allowing first-arg of a subcommand is not supported"));
    assert!(err(&mut acl, &["+get|"]).ends_with("Syntax error"));
    assert!(err(&mut acl, &["%X~a"]).ends_with("Syntax error"));
    assert!(err(&mut acl, &["+@nosuch"]).ends_with("Unknown command or category name in ACL"));
    assert_eq!(
        err(&mut acl, &["on", "(+get", "~a"]),
        "Unmatched parenthesis in acl selector starting at '(+get'."
    );
    // Nothing was applied: the user was never created.
    assert!(acl.user(b"u").is_none());
}

#[test]
fn passwords_are_sha256_hex() {
    assert_eq!(
        String::from_utf8(user::hash_password(b"foobar")).unwrap(),
        "c3ab8ff13720e8ad9047dd39466b3c8974e592c2fa383d4a3960714caef0c4f2"
    );
    let acl = acl_with("u", &[">a", ">b", "<a", "on"]);
    let u = acl.user(b"u").unwrap();
    assert!(u.password_ok(b"b") && !u.password_ok(b"a"));
    let acl = acl_with("u", &[">a", "off"]);
    assert!(!acl.user(b"u").unwrap().password_ok(b"a"));
    let acl = acl_with("u", &[">a", "nopass", "on"]);
    assert!(acl.user(b"u").unwrap().password_ok(b"anything"));
}

#[test]
fn keys_are_checked_with_their_read_and_write_flags() {
    let acl = acl_with("u", &["+@all", "%R~r*", "%W~w*", "~rw*"]);
    assert_eq!(run(&acl, "u", &["get", "r1"]), Ok(()));
    assert_eq!(run(&acl, "u", &["get", "w1"]), Err(Denial::Key(1)));
    assert_eq!(run(&acl, "u", &["set", "w1", "v"]), Ok(()));
    assert_eq!(run(&acl, "u", &["set", "r1", "v"]), Err(Denial::Key(1)));
    assert_eq!(run(&acl, "u", &["set", "rw1", "v", "GET"]), Ok(()));
    assert_eq!(
        run(&acl, "u", &["set", "w1", "v", "GET"]),
        Err(Denial::Key(1))
    );
    assert_eq!(
        run(&acl, "u", &["mget", "r1", "rw", "x"]),
        Err(Denial::Key(3))
    );
    // EXISTS reads no value: any pattern matching the name allows it.
    assert_eq!(run(&acl, "u", &["exists", "w1"]), Ok(()));
    // No key specs, no key check.
    assert_eq!(run(&acl, "u", &["ping"]), Ok(()));
}

#[test]
fn commands_subcommands_and_first_args() {
    let acl = acl_with("u", &["+config|get", "+select|0", "allkeys"]);
    assert_eq!(run(&acl, "u", &["config", "get", "x"]), Ok(()));
    assert_eq!(
        run(&acl, "u", &["config", "set", "x", "y"]),
        Err(Denial::Command)
    );
    assert_eq!(run(&acl, "u", &["select", "0"]), Ok(()));
    assert_eq!(run(&acl, "u", &["select", "1"]), Err(Denial::Command));
    // AUTH and the like need no permission.
    assert_eq!(run(&acl, "u", &["auth", "a", "b"]), Ok(()));
    let acl = acl_with("u", &["+@all", "-@dangerous", "allkeys"]);
    assert_eq!(run(&acl, "u", &["flushall"]), Err(Denial::Command));
    assert_eq!(
        run(&acl, "u", &["config", "get", "x"]),
        Err(Denial::Command)
    );
    assert_eq!(run(&acl, "u", &["client", "id"]), Ok(()));
}

#[test]
fn channels_and_selectors() {
    let acl = acl_with("u", &["+@all", "&news.*", "(+get ~sel*)"]);
    assert_eq!(run(&acl, "u", &["publish", "news.a", "m"]), Ok(()));
    assert_eq!(
        run(&acl, "u", &["publish", "other", "m"]),
        Err(Denial::Channel(1))
    );
    assert_eq!(run(&acl, "u", &["psubscribe", "news.*"]), Ok(()));
    assert_eq!(
        run(&acl, "u", &["psubscribe", "news.a"]),
        Err(Denial::Channel(1))
    );
    assert_eq!(
        run(&acl, "u", &["subscribe", "news.a", "x"]),
        Err(Denial::Channel(2))
    );
    assert_eq!(run(&acl, "u", &["get", "sel1"]), Ok(()));
    assert_eq!(run(&acl, "u", &["set", "sel1", "v"]), Err(Denial::Key(1)));
    assert_eq!(
        describe(&acl, "u"),
        "off sanitize-payload resetchannels &news.* +@all (~sel* resetchannels -@all +get)"
    );
    let acl = acl_with("u", &["+@all", "(+get ~sel*)", "clearselectors"]);
    assert_eq!(
        describe(&acl, "u"),
        "off sanitize-payload resetchannels +@all"
    );
    let acl = acl_with("u", &["+@all", "~a", "(+get", "~sel*)", "reset"]);
    assert_eq!(
        describe(&acl, "u"),
        "off sanitize-payload resetchannels -@all"
    );
}

#[test]
fn default_password_mirrors_requirepass() {
    let mut acl = Acl::default();
    assert!(!acl.auth_required());
    acl.set_default_password(Some(b"pw"));
    assert!(acl.auth_required());
    assert!(acl.default_user().password_ok(b"pw"));
    acl.set_default_password(None);
    assert_eq!(
        describe(&acl, "default"),
        "on nopass sanitize-payload ~* &* +@all"
    );
}

#[test]
fn fast_path_follows_changes() {
    let mut acl = Acl::default();
    let mut who = ClientUser::default_user();
    assert!(acl.unrestricted(&mut who));
    acl.set_user(b"default", &[b"-get"]).unwrap();
    assert!(!acl.unrestricted(&mut who));
    acl.set_user(b"default", &[b"+@all"]).unwrap();
    assert!(acl.unrestricted(&mut who));
}

#[test]
fn acl_file_round_trip_and_errors() {
    let text = b"user default on nopass ~* &* +@all\nuser a on #c3ab8ff13720e8ad9047dd39466b3c8974e592c2fa383d4a3960714caef0c4f2 ~k* &c +@read (+set ~w*)\n\n";
    let users = file::parse(text, "users.acl", false).unwrap();
    let rendered = file::render(users.values());
    assert_eq!(
        String::from_utf8(rendered.clone()).unwrap(),
        "user a on sanitize-payload #c3ab8ff13720e8ad9047dd39466b3c8974e592c2fa383d4a3960714caef0c4f2 ~k* resetchannels &c -@all +@read (~w* resetchannels -@all +set)\nuser default on nopass sanitize-payload ~* &* +@all\n"
    );
    assert_eq!(file::parse(&rendered, "users.acl", false).unwrap(), users);
    let err = file::parse(b"usr a\nuser b +nosuch foo\nuser b on\n", "f.acl", false).unwrap_err();
    assert_eq!(
        err,
        "f.acl:1 should start with user keyword followed by the username. f.acl:2: Error in applying operation '+nosuch': Unknown command or category name in ACL. f.acl:2: Syntax error. WARNING: Duplicate user 'b' found on line 3. WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
    );
}

#[test]
fn user_directives() {
    let words = |s: &str| {
        s.split(' ')
            .map(|w| w.as_bytes().to_vec())
            .collect::<Vec<_>>()
    };
    let a = file::directive(&words("alice on >p ~* +@all"), &[]).unwrap();
    assert_eq!(
        file::directive(&words("alice on"), std::slice::from_ref(&a)).unwrap_err(),
        "Error in user declaration 'alice': Duplicate user found. A user can only be defined once in config files"
    );
    assert_eq!(
        file::directive(&words("bob on foo"), &[]).unwrap_err(),
        "Error in user declaration 'bob': Syntax error"
    );
    // Unknown commands are left to the load, which fails on them.
    let b = file::directive(&words("bob on +nosuch"), &[]).unwrap();
    assert!(file::from_directives(&[b], false)
        .unwrap_err()
        .starts_with("Error loading ACL rule '+nosuch' for the user named 'bob'"));
    let users = file::from_directives(&[a], false).unwrap();
    assert!(users[&b"alice"[..]].password_ok(b"p"));
}

mod props {
    use super::*;
    use proptest::prelude::*;

    const OPS: &[&str] = &[
        "+get",
        "-get",
        "+@read",
        "-@write",
        "+@string",
        "+@all",
        "-@all",
        "+config|get",
        "-config",
        "+select|1",
        "+select",
        "~k*",
        "%R~r*",
        "%W~w*",
        "allkeys",
        "resetkeys",
        "&c*",
        "allchannels",
        "resetchannels",
        "on",
        "off",
        ">p",
        "<p",
        "nopass",
        "resetpass",
        "(+set ~s*)",
        "(+@read %R~r* &c)",
        "clearselectors",
        "reset",
        "+publish",
        "-publish",
    ];

    const PROBES: &[&[&str]] = &[
        &["get", "k1"],
        &["get", "r1"],
        &["set", "w1", "v"],
        &["set", "s1", "v"],
        &["config", "get", "x"],
        &["config", "set", "x", "y"],
        &["select", "1"],
        &["select", "2"],
        &["publish", "c1", "m"],
        &["publish", "d", "m"],
        &["mget", "r1", "k1"],
        &["strlen", "r1"],
    ];

    fn decisions(acl: &Acl, name: &str) -> Vec<Result<(), Denial>> {
        PROBES.iter().map(|p| run(acl, name, p)).collect()
    }

    proptest! {
        /// What ACL LIST shows of a user, applied to a new user, makes the same user: the
        /// same text and the same answers (as ACL SAVE then ACL LOAD must).
        #[test]
        fn described_rules_rebuild_the_user(ops in proptest::collection::vec(0..OPS.len(), 0..14)) {
            let mut acl = Acl::default();
            for &i in &ops {
                let _ = acl.set_user(b"u", &[OPS[i].as_bytes()]);
            }
            prop_assume!(acl.user(b"u").is_some());
            let text = acl.user(b"u").unwrap().describe();
            let words: Vec<&[u8]> = text.split(|&b| b == b' ').collect();
            let mut again = Acl::default();
            again.set_user(b"u", &words).unwrap();
            prop_assert_eq!(
                String::from_utf8(again.user(b"u").unwrap().describe()).unwrap(),
                String::from_utf8(text.clone()).unwrap()
            );
            prop_assert_eq!(decisions(&again, "u"), decisions(&acl, "u"));
        }
    }
}
