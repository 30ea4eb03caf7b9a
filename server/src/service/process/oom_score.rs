//! The process's out-of-memory score adjustment, as Redis's setOOMScoreAdj writes it to
//! `/proc/self/oom_score_adj`: with `oom-score-adj` on, a master, a replica and a
//! background child each get their value of `oom-score-adj-values` (added to the score
//! the process had when Redis first took control, `relative`, or as it is, `absolute`,
//! clamped to -1000..=1000); turning it off restores the score it had then.

use crate::config::ConfigError;
use crate::numbers::atoi;
use crate::warning;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// oom-score-adj-values' default: master, replica, background child.
pub const DEFAULT_VALUES: [i32; 3] = [0, 200, 800];

/// How the values apply (oom-score-adj).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The score is left alone.
    No,
    /// Added to the score the process had before.
    Relative,
    /// Written as it is.
    Absolute,
}

impl Mode {
    /// The names CONFIG SET takes; `yes` is `relative`, and CONFIG GET names a mode by the
    /// first of its names, as Redis's enum parameters do.
    pub const NAMES: [(&'static str, Mode); 4] = [
        ("no", Mode::No),
        ("yes", Mode::Relative),
        ("relative", Mode::Relative),
        ("absolute", Mode::Absolute),
    ];

    /// The mode of a (lowercase) name.
    pub fn named(name: &str) -> Option<Mode> {
        Self::NAMES.iter().find(|(n, _)| *n == name).map(|p| p.1)
    }

    /// CONFIG GET's name of the mode.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, m)| *m == self)
            .expect("named")
            .0
    }
}

/// Which of the three values applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A master.
    Master = 0,
    /// A replica.
    Replica = 1,
    /// A forked child (snapshot, rewrite).
    Child = 2,
}

/// Parses oom-score-adj-values: three integers from -2000 to 2000. Values that would not
/// rank a replica above its master and a child above both are kept with Redis's warning.
pub fn parse_values(text: &str) -> Result<[i32; 3], ConfigError> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() != 3 {
        return Err(ConfigError::BadValue("wrong number of arguments".into()));
    }
    let mut values = [0; 3];
    for (value, word) in values.iter_mut().zip(&words) {
        *value = word
            .parse::<i64>()
            .ok()
            .filter(|v| (-2000..=2000).contains(v))
            .ok_or_else(|| {
                ConfigError::BadValue(
                    "Invalid oom-score-adj-values, elements must be between -2000 and 2000.".into(),
                )
            })? as i32;
    }
    if values[1] < values[0] || values[2] < values[1] {
        warning!("The oom-score-adj-values configuration may not work for non-privileged processes! Please consult the documentation.");
    }
    Ok(values)
}

/// The settings in force, kept where a forked child can read them without locks.
static MODE: AtomicI32 = AtomicI32::new(0);
static VALUES: [AtomicI32; 3] = [AtomicI32::new(0), AtomicI32::new(200), AtomicI32::new(800)];
/// Whether the score was changed by the server, and the score it had before.
static ADJUSTED: AtomicBool = AtomicBool::new(false);
static BASE: AtomicI32 = AtomicI32::new(0);

const PATH: &str = "/proc/self/oom_score_adj";

/// Applies `mode` and `values` to this process as `class` (Redis's setOOMScoreAdj); they
/// are remembered for the children forked later. False (logged) when the file could not be
/// read or written.
pub fn apply(mode: Mode, values: [i32; 3], class: Class) -> bool {
    MODE.store(mode as i32, Ordering::Relaxed);
    for (slot, v) in VALUES.iter().zip(values) {
        slot.store(v, Ordering::Relaxed);
    }
    write_for(class)
}

/// In a forked child: the child's value, if the parent's mode asks for one (errors are
/// not reported, as in Redis's child).
pub fn enter_child() {
    write_for(Class::Child);
}

fn mode_now() -> Mode {
    match MODE.load(Ordering::Relaxed) {
        0 => Mode::No,
        1 => Mode::Relative,
        _ => Mode::Absolute,
    }
}

fn write_for(class: Class) -> bool {
    let mode = mode_now();
    let value = if mode != Mode::No {
        if !ADJUSTED.swap(true, Ordering::Relaxed) {
            match std::fs::read_to_string(PATH) {
                Ok(text) => BASE.store(atoi(text.as_bytes()), Ordering::Relaxed),
                Err(e) => {
                    warning!(
                        "Unable to read oom_score_adj: {}",
                        crate::errors::os_error_text(&e)
                    );
                    ADJUSTED.store(false, Ordering::Relaxed);
                    return false;
                }
            }
        }
        let mut v = VALUES[class as usize].load(Ordering::Relaxed);
        if mode == Mode::Relative {
            v += BASE.load(Ordering::Relaxed);
        }
        v.clamp(-1000, 1000)
    } else if ADJUSTED.swap(false, Ordering::Relaxed) {
        BASE.load(Ordering::Relaxed)
    } else {
        return true;
    };
    match std::fs::write(PATH, format!("{value}\n")) {
        Ok(()) => true,
        Err(e) => {
            warning!(
                "Unable to write oom_score_adj: {}",
                crate::errors::os_error_text(&e)
            );
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_within_range() {
        assert_eq!(parse_values("10 20 30"), Ok([10, 20, 30]));
        assert!(parse_values("-2001 0 0").is_err());
        assert!(parse_values("1 2").is_err());
        assert!(parse_values("1 2 x").is_err());
    }

    #[test]
    fn modes_are_named_as_redis_names_them() {
        assert_eq!(Mode::named("yes"), Some(Mode::Relative));
        assert_eq!(Mode::Relative.name(), "yes");
        assert_eq!(Mode::Absolute.name(), "absolute");
    }
}
