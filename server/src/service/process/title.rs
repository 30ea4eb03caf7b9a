//! The process title `ps` shows, as Redis sets it (setproctitle.c and
//! redisSetProcTitle): `proc-title-template` expanded (`{title}`, `{listen-addr}`,
//! `{server-mode}`, `{config-file}`, `{port}`, `{tls-port}`, `{unixsocket}`; `{{` is a
//! literal brace), trimmed of spaces, and written over the command line's memory.
//!
//! ```text
//! at start:  argv[0] \0 argv[1] \0 ... \0 VAR=value \0 ... \0
//!            ^ base                                      ^ end (one past the last NUL)
//! the environment is first copied to the heap (clearenv + setenv), so the whole span is
//! the title's: zeroed once, then the title (at most 254 bytes) and its NUL written there.
//! Where the title stops short of argv[0]'s old end, that old NUL becomes '.'; where it
//! ends exactly there, a ' ' and a NUL follow, as Redis's setproctitle does (so Linux's
//! /proc/PID/cmdline shows the title).
//! ```
//!
//! The parent's title is `{title}` = argv[0]; a forked child's is its job's name
//! (`redis-rdb-bgsave`, `redis-aof-rewrite`, `redis-rdb-to-slaves`).

use std::sync::Mutex;

/// proc-title-template's default.
pub const DEFAULT_TEMPLATE: &str = "{title} {listen-addr} {server-mode}";
/// Redis's SPT_MAXTITLE: the longest title is one less.
const MAX_TITLE: usize = 255;

/// The values of the template's variables other than `{title}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vars {
    /// `{listen-addr}`: the first bind address (or `*`) and the port.
    pub listen_addr: String,
    /// `{server-mode}`: `[cluster]` or nothing.
    pub server_mode: String,
    /// `{config-file}`: the configuration file's absolute path, or `-`.
    pub config_file: String,
    /// `{port}`.
    pub port: u16,
    /// `{unixsocket}`: the socket's path, or nothing.
    pub unixsocket: String,
}

/// Expands `template` (Redis's sdstemplate with redisProcTitleGetVariable) and trims the
/// spaces at its ends; None for an unknown variable or an unclosed brace.
pub fn expand(template: &str, title: &str, vars: &Vars) -> Option<String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        if after.is_empty() {
            return None;
        }
        if let Some(quoted) = after.strip_prefix('{') {
            out.push('{');
            rest = quoted;
            continue;
        }
        let close = after.find('}')?;
        match &after[..close] {
            "title" => out.push_str(title),
            "listen-addr" => out.push_str(&vars.listen_addr),
            "server-mode" => out.push_str(&vars.server_mode),
            "config-file" => out.push_str(&vars.config_file),
            "port" => out.push_str(&vars.port.to_string()),
            // Goblin has no TLS.
            "tls-port" => out.push('0'),
            "unixsocket" => out.push_str(&vars.unixsocket),
            _ => return None,
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Some(out.trim_matches(' ').to_owned())
}

/// Whether `template` is acceptable: it expands, and not to nothing with an empty title
/// (Redis's validateProcTitleTemplate, here with the variables that may be empty taken
/// as empty).
pub fn valid_template(template: &str) -> bool {
    let vars = Vars {
        listen_addr: "*:0".into(),
        config_file: "-".into(),
        ..Vars::default()
    };
    expand(template, "", &vars).is_some_and(|t| !t.is_empty())
}

/// The command line's memory, once taken over.
struct Area {
    base: *mut u8,
    len: usize,
    /// Offset of argv[0]'s terminating NUL.
    arg0_nul: usize,
    /// Whether the span was zeroed already.
    reset: bool,
}

// SAFETY: the area is this process's own command-line memory, used only under the lock.
unsafe impl Send for Area {}

/// What the title is made of, and the area it is written to.
struct State {
    area: Option<Area>,
    arg0: String,
    template: String,
    vars: Vars,
}

static STATE: Mutex<State> = Mutex::new(State {
    area: None,
    arg0: String::new(),
    template: String::new(),
    vars: Vars {
        listen_addr: String::new(),
        server_mode: String::new(),
        config_file: String::new(),
        port: 0,
        unixsocket: String::new(),
    },
});

/// Takes over the command line's memory (Redis's spt_init): must run at the start of
/// `main`, before any other thread exists, as it moves the environment to the heap. Does
/// nothing where the memory cannot be found.
pub fn init() {
    let arg0 = std::env::args().next().unwrap_or_default();
    let area = find_area();
    if area.is_some() {
        let vars: Vec<(std::ffi::CString, std::ffi::CString)> = std::env::vars_os()
            .filter_map(|(k, v)| {
                use std::os::unix::ffi::OsStringExt;
                Some((
                    std::ffi::CString::new(k.into_vec()).ok()?,
                    std::ffi::CString::new(v.into_vec()).ok()?,
                ))
            })
            .collect();
        // SAFETY: no other thread exists yet (see above); setenv copies its arguments.
        unsafe {
            libc::clearenv();
            for (k, v) in &vars {
                libc::setenv(k.as_ptr(), v.as_ptr(), 1);
            }
        }
    }
    let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
    state.area = area;
    state.arg0 = arg0;
}

/// The span of argv's and the environment's strings, from /proc/self/stat (fields 48 to
/// 51: arg_start, arg_end, env_start, env_end), when they are contiguous and argv[0]
/// starts it.
fn find_area() -> Option<Area> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which may hold spaces: the third field is index 0.
    let fields: Vec<u64> = stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .skip(45)
        .take(4)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    let [arg_start, arg_end, env_start, env_end] = fields[..] else {
        return None;
    };
    let end = if env_start == arg_end && env_end > env_start {
        env_end
    } else {
        arg_end
    };
    if arg_start == 0 || end <= arg_start {
        return None;
    }
    let base = arg_start as usize as *mut u8;
    let len = (end - arg_start) as usize;
    // SAFETY: [arg_start, end) is this process's argument and environment block, mapped
    // and writable for the life of the process.
    let bytes = unsafe { std::slice::from_raw_parts(base, len) };
    let arg0_nul = bytes.iter().position(|&b| b == 0)?;
    let arg0 = std::env::args_os().next()?;
    if bytes[..arg0_nul] != *std::os::unix::ffi::OsStrExt::as_bytes(arg0.as_os_str()) {
        return None;
    }
    Some(Area {
        base,
        len,
        arg0_nul,
        reset: false,
    })
}

/// Sets the template and its variables, and the parent's title from them when `write_now`
/// (else only the children's titles follow them: set-proc-title no at start); false when
/// the template does not expand.
pub fn set(template: &str, vars: Vars, write_now: bool) -> bool {
    let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(title) = expand(template, &state.arg0, &vars) else {
        return false;
    };
    state.template = template.into();
    state.vars = vars;
    if write_now {
        write(&mut state, &title);
    }
    true
}

/// A forked child's title for `job`, computed in the parent before the fork (the child
/// then only copies bytes, see [`write_child`]).
pub fn for_child(job: &str) -> Option<String> {
    let state = STATE.lock().unwrap_or_else(|e| e.into_inner());
    state.area.as_ref()?;
    expand(&state.template, job, &state.vars)
}

/// In a forked child: writes the title [`for_child`] made.
pub fn write_child(title: &str) {
    // The parent's thread that could hold the lock does not exist in the child; a poisoned
    // or held lock only means no title.
    if let Ok(mut state) = STATE.try_lock() {
        write(&mut state, title);
    }
}

fn write(state: &mut State, title: &str) {
    let Some(area) = state.area.as_mut() else {
        return;
    };
    // SAFETY: see find_area; the lock makes this the only user.
    let bytes = unsafe { std::slice::from_raw_parts_mut(area.base, area.len) };
    let room = MAX_TITLE.min(area.len);
    if area.reset {
        bytes[..room].fill(0);
    } else {
        bytes.fill(0);
        area.reset = true;
    }
    let n = title.len().min(room - 1);
    bytes[..n].copy_from_slice(&title.as_bytes()[..n]);
    let nul = area.arg0_nul;
    if n < nul {
        bytes[nul] = b'.';
    } else if n == nul && nul + 1 < area.len {
        bytes[nul] = b' ';
        bytes[nul + 1] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> Vars {
        Vars {
            listen_addr: "127.0.0.1:6379".into(),
            server_mode: String::new(),
            config_file: "/etc/redis.conf".into(),
            port: 6379,
            unixsocket: String::new(),
        }
    }

    #[test]
    fn expands_as_redis() {
        let v = vars();
        assert_eq!(
            expand(DEFAULT_TEMPLATE, "/usr/bin/redis-server", &v).unwrap(),
            "/usr/bin/redis-server 127.0.0.1:6379"
        );
        assert_eq!(
            expand("T {{x} {port} {tls-port} {config-file}", "", &v).unwrap(),
            "T {x} 6379 0 /etc/redis.conf"
        );
        assert_eq!(expand("{invalid-var}", "t", &v), None);
        assert_eq!(expand("{title", "t", &v), None);
        assert_eq!(expand("x{", "t", &v), None);
    }

    #[test]
    fn templates_that_expand_to_nothing_are_invalid() {
        assert!(valid_template(DEFAULT_TEMPLATE));
        assert!(!valid_template("{title}"));
        assert!(!valid_template("  "));
        assert!(!valid_template("{nope}"));
        assert!(valid_template("--my--title--template"));
    }
}
