//! The command line as Redis reads it: an optional configuration file first, then
//! `--directive value...` options that become configuration lines read after the file's.
//!
//! Redis's rule (server.c's main): an argument starting with `--` opens a new line with the
//! directive's name, unless the line before has only its name so far (`--port --bla`: then
//! `--bla` is port's value); any other argument is a value, appended to the current line
//! quoted as sdscatrepr quotes it. `"--port 6380"` as one argument is a whole line. `--save`
//! and `--sentinel` followed by another `--` option get an empty value. Errors in these
//! lines are then reported as configuration-file errors (`>>> 'port "6379" "6380"'`).
//!
//! Goblin's own flags (Goblin Store's, `--help`) are clap's: when one stands where a
//! directive name may, it and its value go to clap instead of into the lines.

use crate::commands::monitor::repr;

/// The command line split between clap and the configuration lines.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Split {
    /// The arguments for clap: the program name, the configuration file, Goblin's own flags.
    pub clap: Vec<String>,
    /// The options as configuration lines, one per directive, joined by newlines.
    pub options: String,
}

/// Splits `argv` (program name first). `goblin_flag` says whether an argument (`--name`,
/// `--name=value` or `-x`) is one of Goblin's own flags, and whether it takes a value.
pub fn split(argv: &[String], goblin_flag: impl Fn(&str) -> Option<FlagKind>) -> Split {
    let mut out = Split::default();
    let mut args = argv.iter().peekable();
    if let Some(program) = args.next() {
        out.clap.push(program.clone());
    }
    if let Some(first) = args.next_if(|a| !a.starts_with('-')) {
        out.clap.push(first.clone());
    }
    let mut lines: Vec<String> = Vec::new();
    // Whether the current line has a value (or is whole), so a `--` argument opens a new one.
    let mut line_done = true;
    while let Some(arg) = args.next() {
        if line_done {
            if let Some(kind) = goblin_flag(arg) {
                out.clap.push(arg.clone());
                if kind == FlagKind::TakesValue && !arg.contains('=') {
                    out.clap.extend(args.next().cloned());
                }
                continue;
            }
        }
        match arg.strip_prefix("--") {
            Some(name) if line_done => {
                lines.push(format!("{name} "));
                // Only the name so far (`--port`, not `"--port 6380"`): the next argument
                // is its value, whatever it looks like.
                line_done = crate::resp::parse::split_args(arg.as_bytes())
                    .is_none_or(|words| words.len() != 1);
                let next_is_option = args.peek().is_some_and(|next| next.starts_with("--"));
                let bare =
                    name.eq_ignore_ascii_case("save") || name.eq_ignore_ascii_case("sentinel");
                if !line_done && bare && (next_is_option || args.peek().is_none()) {
                    if name.eq_ignore_ascii_case("save") {
                        lines.last_mut().expect("pushed").push_str("\"\"");
                    }
                    line_done = next_is_option;
                }
            }
            _ => {
                if lines.is_empty() {
                    lines.push(String::new());
                }
                let line = lines.last_mut().expect("one line");
                repr(line, arg.as_bytes());
                line.push(' ');
                line_done = true;
            }
        }
    }
    out.options = lines.join("\n");
    out
}

/// Whether one of Goblin's own flags takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagKind {
    /// `--flag VALUE` (or `--flag=VALUE`).
    TakesValue,
    /// `--flag` alone.
    Switch,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(args: &[&str]) -> String {
        let argv: Vec<String> = std::iter::once("goblin-server")
            .chain(args.iter().copied())
            .map(String::from)
            .collect();
        split(&argv, |a| match a {
            "--memory" => Some(FlagKind::TakesValue),
            "--no-memcache" => Some(FlagKind::Switch),
            _ => None,
        })
        .options
    }

    #[test]
    fn options_become_quoted_lines() {
        assert_eq!(lines(&["--port", "6380"]), "port \"6380\" ");
        assert_eq!(lines(&["--port"]), "port ");
        assert_eq!(
            lines(&["--port", "6379", "6380"]),
            "port \"6379\" \"6380\" "
        );
        assert_eq!(
            lines(&["--port", "--loglevel", "verbose"]),
            "port \"--loglevel\" \"verbose\" "
        );
        assert_eq!(
            lines(&["--port", "--bla", "--loglevel", "verbose"]),
            "port \"--bla\" \nloglevel \"verbose\" "
        );
        assert_eq!(
            lines(&["--replicaof", "--127.0.0.1", "--abc"]),
            "replicaof \"--127.0.0.1\" \nabc "
        );
    }

    #[test]
    fn name_and_value_in_one_argument() {
        assert_eq!(
            lines(&["--maxmemory 700mb", "--maxmemory-policy volatile-lru"]),
            "maxmemory 700mb \nmaxmemory-policy volatile-lru "
        );
        assert_eq!(
            lines(&[
                "--proc-title-template --my--title--template",
                "--loglevel verbose"
            ]),
            "proc-title-template --my--title--template \nloglevel verbose "
        );
    }

    #[test]
    fn empty_save_and_sentinel() {
        assert_eq!(lines(&["--save", "--port", "1"]), "save \"\"\nport \"1\" ");
        assert_eq!(lines(&["--save"]), "save \"\"");
        assert_eq!(
            lines(&["--sentinel", "--port", "1"]),
            "sentinel \nport \"1\" "
        );
    }

    #[test]
    fn config_file_and_values_before_any_option() {
        let argv: Vec<String> = [
            "goblin-server",
            "/tmp/r.conf",
            "loglevel",
            "verbose",
            "--port",
            "1",
        ]
        .map(String::from)
        .into();
        let split = split(&argv, |_| None);
        assert_eq!(split.clap, ["goblin-server", "/tmp/r.conf"]);
        assert_eq!(split.options, "\"loglevel\" \"verbose\" \nport \"1\" ");
    }

    #[test]
    fn goblin_flags_go_to_clap_where_a_name_may_stand() {
        let argv: Vec<String> = [
            "goblin-server",
            "--port",
            "1",
            "--memory",
            "1g",
            "--no-memcache",
            "--logfile",
            "--memory",
        ]
        .map(String::from)
        .into();
        let split = split(&argv, |a| match a {
            "--memory" => Some(FlagKind::TakesValue),
            "--no-memcache" => Some(FlagKind::Switch),
            _ => None,
        });
        assert_eq!(
            split.clap,
            ["goblin-server", "--memory", "1g", "--no-memcache"]
        );
        assert_eq!(split.options, "port \"1\" \nlogfile \"--memory\" ");
    }
}
