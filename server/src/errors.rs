//! Error replies Redis words one way, each written once: constants for the fixed texts
//! and small functions for the formatted ones. A text used by a single command stays
//! beside its command.

/// The bare error Redis answers a failed SAVE or fork with (its shared.err).
pub const ERR: &str = "ERR";
/// A malformed argument list.
pub const SYNTAX: &str = "ERR syntax error";
/// An integer argument that does not parse or does not fit.
pub const NOT_AN_INTEGER: &str = "ERR value is not an integer or out of range";
/// A float argument that does not parse (or is NaN).
pub const NOT_A_FLOAT: &str = "ERR value is not a valid float";
/// A key holding a value of another type than the command works on.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
/// A database index past the configured `databases`.
pub const DB_INDEX_OUT_OF_RANGE: &str = "ERR DB index is out of range";
/// A key that must exist does not.
pub const NO_SUCH_KEY: &str = "ERR no such key";
/// COPY or MOVE onto the source itself.
pub const SAME_SOURCE_AND_DESTINATION: &str = "ERR source and destination objects are the same";
/// A SCAN-family cursor that is not an unsigned integer.
pub const INVALID_CURSOR: &str = "ERR invalid cursor";
/// A blocking timeout that does not fit.
pub const TIMEOUT_OUT_OF_RANGE: &str = "ERR timeout is out of range";
/// A score range bound that is not a float.
pub const MIN_MAX_NOT_FLOAT: &str = "ERR min or max is not a float";
/// A lex range bound without `[`, `(`, `-` or `+`.
pub const MIN_MAX_NOT_STRING_RANGE: &str = "ERR min or max not valid string range item";
/// A client name with a space, a newline or a special character.
pub const BAD_CLIENT_NAME: &str =
    "ERR Client names cannot contain spaces, newlines or special characters.";
/// SAVE or BGSAVE while a BGSAVE child runs.
pub const BGSAVE_IN_PROGRESS: &str = "ERR Background save already in progress";
/// A command other than AUTH, HELLO and the like before authentication.
pub const NOAUTH: &str = "NOAUTH Authentication required.";

/// A command that may grow memory while used memory is over maxmemory.
pub const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

/// A write (or PING) while the last BGSAVE failed under stop-writes-on-bgsave-error.
pub const MISCONF: &str = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.";
/// A command without the `loading` flag during the start-up load.
pub const LOADING: &str = "LOADING Redis is loading the dataset in memory";
/// A replica whose link is down refusing a command (replica-serve-stale-data no).
pub const MASTERDOWN: &str =
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";

/// The arity error of command `name` (lower case, as typed in the table).
pub fn wrong_arity(name: &str) -> String {
    format!("ERR wrong number of arguments for '{name}' command")
}

/// The reply to a subcommand `sub` of `command` that does not exist or takes other
/// arguments (Redis's addReplySubcommandSyntaxError).
pub fn subcommand_syntax(sub: &str, command: &str) -> String {
    format!("ERR unknown subcommand or wrong number of arguments for '{sub}'. Try {command} HELP.")
}

/// An I/O error as C's strerror words it (Redis's messages carry that text).
pub fn os_error_text(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        // SAFETY: strerror returns a valid NUL-terminated string for any errno.
        Some(code) => unsafe { std::ffi::CStr::from_ptr(libc::strerror(code)) }
            .to_string_lossy()
            .into_owned(),
        None => e.to_string(),
    }
}

/// The bytes before the first NUL: what Redis's `%s` prints of an argument.
pub fn until_nul(arg: &[u8]) -> &[u8] {
    match arg.iter().position(|&b| b == 0) {
        Some(end) => &arg[..end],
        None => arg,
    }
}

/// An argument as Redis's `%.128s` prints it: up to its first NUL, at most 128 bytes, bytes
/// that are not UTF-8 replaced.
pub fn shown_128(arg: &[u8]) -> std::borrow::Cow<'_, str> {
    let text = until_nul(arg);
    String::from_utf8_lossy(&text[..text.len().min(128)])
}
