//! ACL files (`aclfile`) and `user` directives: parsing their text into users, all or
//! nothing, with Redis's error texts (ACLLoadFromFile, ACLAppendUserForLoading), and the
//! text ACL SAVE writes.

use super::selector::has_spaces;
use super::user::{merge_selector_args, User};
use super::RuleError;
use crate::errors::until_nul;
use std::collections::BTreeMap;

/// Parses an ACL file's text (`filename` as configured, for the messages). Every line is
/// `user <name> <rules...>` or blank; any error and nothing is loaded: the error is the
/// one line Redis answers ACL LOAD with.
pub fn parse(
    text: &[u8],
    filename: &str,
    pubsub_default_all: bool,
) -> Result<BTreeMap<Vec<u8>, User>, String> {
    let mut users: BTreeMap<Vec<u8>, User> = BTreeMap::new();
    let mut errors = String::new();
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        let linenum = i + 1;
        let line = trim(line, b" \t\r\n");
        if line.is_empty() {
            continue;
        }
        let argv: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        if argv[0] != b"user" || argv.len() < 2 {
            errors.push_str(&format!(
                "{filename}:{linenum} should start with user keyword followed by the username. "
            ));
            continue;
        }
        let name = argv[1];
        if has_spaces(name) {
            errors.push_str(&format!(
                "'{filename}:{linenum}: username '{}' contains invalid characters. ",
                String::from_utf8_lossy(until_nul(name))
            ));
            continue;
        }
        if users.contains_key(name) {
            errors.push_str(&format!(
                "WARNING: Duplicate user '{}' found on line {linenum}. ",
                String::from_utf8_lossy(until_nul(name))
            ));
            continue;
        }
        let mut user = User::new(name, pubsub_default_all);
        let merged = match merge_selector_args(&argv[2..]) {
            Ok(m) => m,
            Err(_) => {
                errors.push_str(&format!(
                    "{filename}:{linenum}: Unmatched parenthesis in selector definition."
                ));
                Vec::new()
            }
        };
        let mut syntax_error = false;
        for op in &merged {
            let op = trim(op, b"\t\r\n");
            if let Err(e) = user.apply(op, pubsub_default_all) {
                if e == RuleError::Unknown {
                    errors.push_str(&format!(
                        "{filename}:{linenum}: Error in applying operation '{}': {}. ",
                        String::from_utf8_lossy(until_nul(op)),
                        e.message()
                    ));
                } else if !syntax_error {
                    errors.push_str(&format!("{filename}:{linenum}: {}. ", e.message()));
                    syntax_error = true;
                }
            }
        }
        users.insert(name.to_vec(), user);
    }
    if errors.is_empty() {
        Ok(users)
    } else {
        errors.push_str(
            "WARNING: ACL errors detected, no change to the previously active ACL rules was performed",
        );
        Err(errors)
    }
}

/// The text of an ACL file holding `users` (ACL SAVE): one `user` line each, by name.
pub fn render<'a>(users: impl Iterator<Item = &'a User>) -> Vec<u8> {
    let mut out = Vec::new();
    for u in users {
        out.extend_from_slice(b"user ");
        out.extend_from_slice(&u.name);
        out.push(b' ');
        out.extend_from_slice(&u.describe());
        out.push(b'\n');
    }
    out
}

/// A `user` directive of the configuration, checked as Redis checks it when reading the
/// file (rules naming unknown commands pass: Redis leaves them to the load).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserDirective {
    /// The user's name.
    pub name: Vec<u8>,
    /// Its rules, selectors merged.
    pub rules: Vec<Vec<u8>>,
}

/// Checks `user <name> <rules...>` (`words` without `user`) against the directives
/// already read; the error is the text of Redis's `Error in user declaration` line.
pub fn directive(words: &[Vec<u8>], seen: &[UserDirective]) -> Result<UserDirective, String> {
    let fail = |at: usize, e: RuleError| {
        // Redis names argv[at] of the whole line ("user" is argv[0]), whatever `at` counted.
        let word = match at {
            0 => b"user".as_slice(),
            n => words.get(n - 1).map(Vec::as_slice).unwrap_or_default(),
        };
        format!(
            "Error in user declaration '{}': {}",
            String::from_utf8_lossy(until_nul(word)),
            e.message()
        )
    };
    let Some((name, rules)) = words.split_first() else {
        return Err(fail(0, RuleError::Syntax));
    };
    if seen.iter().any(|d| d.name == *name) {
        return Err(fail(1, RuleError::Duplicate));
    }
    let rules: Vec<&[u8]> = rules.iter().map(Vec::as_slice).collect();
    let merged = merge_selector_args(&rules).map_err(|at| fail(at, RuleError::Syntax))?;
    let mut probe = User::new(b"probe", false);
    for (j, op) in merged.iter().enumerate() {
        match probe.apply(op, false) {
            Ok(()) | Err(RuleError::Unknown) => {}
            Err(e) => return Err(fail(j, e)),
        }
    }
    Ok(UserDirective {
        name: name.clone(),
        rules: merged,
    })
}

/// The users the `user` directives define (Redis's ACLLoadConfiguredUsers); the error is
/// the line Redis logs before exiting.
pub fn from_directives(
    directives: &[UserDirective],
    pubsub_default_all: bool,
) -> Result<BTreeMap<Vec<u8>, User>, String> {
    let mut users = BTreeMap::new();
    for d in directives {
        if has_spaces(&d.name) {
            return Err("Spaces not allowed in ACL usernames".to_owned());
        }
        // The default user is reset, not created (so it keeps Redis's reset's flags).
        let mut user = User::new(&d.name, pubsub_default_all);
        if d.name == b"default" {
            user.apply(b"reset", pubsub_default_all)
                .expect("reset is a valid rule");
        }
        for op in &d.rules {
            user.apply(op, pubsub_default_all).map_err(|e| {
                format!(
                    "Error loading ACL rule '{}' for the user named '{}': {}",
                    String::from_utf8_lossy(until_nul(op)),
                    String::from_utf8_lossy(until_nul(&d.name)),
                    e.message()
                )
            })?;
        }
        if !user.enabled {
            crate::notice!(
                "The user '{}' is disabled (there is no 'on' modifier in the user description). Make sure this is not a configuration error.",
                String::from_utf8_lossy(&d.name)
            );
        }
        users.insert(d.name.clone(), user);
    }
    Ok(users)
}

fn trim<'a>(mut s: &'a [u8], set: &[u8]) -> &'a [u8] {
    while let [first, rest @ ..] = s {
        if !set.contains(first) {
            break;
        }
        s = rest;
    }
    while let [rest @ .., last] = s {
        if !set.contains(last) {
            break;
        }
        s = rest;
    }
    s
}
