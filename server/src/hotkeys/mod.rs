//! HOTKEYS (Redis 8.6): a tracking session that ranks keys by the time the commands naming
//! them took and by their network bytes, in a top-K sketch ([`sketch`]) per metric.
//!
//! While a session is active, each command with keys that a client runs (at the top level
//! or queued in MULTI; not a script's own calls) is [`record`]ed after it ran: its time in
//! microseconds and its bytes (the request as RESP plus the reply) count in the session's
//! totals, and, when the command is sampled (probability 1/SAMPLE) and its slot selected
//! (SLOTS, cluster mode), are split evenly (integer division) among its keys and added to
//! each key in the sketches, as Redis's hotkeyStatsUpdateCurrentCmd does. With no session
//! active, the command path pays one test of [`Hotkeys::active`].

mod report;
pub mod sketch;
mod start;

use crate::cluster::node::SlotBits;
use crate::commands::{container, help_reply, keyspecs, Command, Ctx, Flags, StatSlot};
use crate::rng::Rng;
use sketch::TopK;

/// The HOTKEYS container and its subcommands.
pub static COMMANDS: [Command; 1] = [Command {
    name: "hotkeys",
    arity: -2,
    flags: Flags::NONE,
    handler: container,
    subcommands: &SUBCOMMANDS,
    slot: StatSlot::new(),
}];

const SUB_FLAGS: Flags = Flags::ADMIN.with(Flags::NOSCRIPT);

static SUBCOMMANDS: [Command; 5] = [
    Command::simple("hotkeys|start", -2, SUB_FLAGS, start::start),
    Command::simple("hotkeys|stop", 2, SUB_FLAGS, stop),
    Command::simple("hotkeys|get", 2, SUB_FLAGS, report::get),
    Command::simple("hotkeys|reset", 2, SUB_FLAGS, reset),
    Command::simple("hotkeys|help", 2, Flags::LOADING.with(Flags::STALE), help),
];

/// The server's HOTKEYS state: the last session started (until RESET) and whether it
/// still tracks.
#[derive(Default)]
pub struct Hotkeys {
    /// A session tracks now (the only thing the command path reads).
    pub active: bool,
    session: Option<Box<Session>>,
}

/// Which metrics a session ranks keys by.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Metrics {
    /// Time of the commands (by-cpu-time-us).
    pub cpu: bool,
    /// Network bytes of the commands (by-net-bytes).
    pub net: bool,
}

/// What HOTKEYS START asked for.
#[derive(Debug, PartialEq, Eq)]
pub struct Options {
    /// The metrics tracked.
    pub metrics: Metrics,
    /// How many keys GET lists per metric (COUNT, 10 by default).
    pub count: usize,
    /// Auto-stop after this many milliseconds (DURATION; 0: never).
    pub duration_ms: u64,
    /// A command is sampled with probability 1/ratio (SAMPLE, 1 by default).
    pub sample_ratio: u32,
    /// The slots whose keys are tracked (SLOTS); None: all.
    pub slots: Option<SlotBits>,
}

/// Totals of time (microseconds) or bytes over the commands recorded.
#[derive(Default, Clone, Copy)]
struct Totals {
    all_commands_all_slots: u64,
    all_commands_selected_slots: u64,
    sampled_commands_selected_slots: u64,
}

impl Totals {
    fn add(&mut self, amount: u64, selected: bool, sampled_apart: bool) {
        self.all_commands_all_slots += amount;
        if selected {
            self.all_commands_selected_slots += amount;
            if sampled_apart {
                self.sampled_commands_selected_slots += amount;
            }
        }
    }
}

/// One tracking session.
struct Session {
    count: usize,
    sample_ratio: u32,
    /// The SLOTS given, as a set (None: every slot).
    slots: Option<SlotBits>,
    /// DURATION in ms while active (0: none); once stopped, how long it tracked.
    duration_ms: u64,
    start_ms: u64,
    /// The process's user and system CPU time at the start, microseconds.
    rusage_start: (u64, u64),
    cpu: Option<TopK>,
    net: Option<TopK>,
    time: Totals,
    bytes: Totals,
    rng: Rng,
}

/// Cuckoo Heavy Keeper's decay, the paper's and Redis's.
const DECAY: f64 = 1.08;

impl Session {
    fn new(options: &Options, now_ms: u64, seed: u64) -> Session {
        // As Redis: the sketch names 10 times the keys listed, over about 100 buckets per
        // key listed, for accuracy.
        let sketch = |on: bool| {
            on.then(|| {
                TopK::new(
                    options.count * 10,
                    (options.count * 100).next_power_of_two(),
                    DECAY,
                    seed,
                )
            })
        };
        Session {
            count: options.count,
            sample_ratio: options.sample_ratio,
            slots: options.slots.clone(),
            duration_ms: options.duration_ms,
            start_ms: now_ms,
            rusage_start: crate::clock::cpu_us(libc::RUSAGE_SELF),
            cpu: sketch(options.metrics.cpu),
            net: sketch(options.metrics.net),
            time: Totals::default(),
            bytes: Totals::default(),
            rng: Rng::seeded(seed.rotate_left(17)),
        }
    }

    /// Whether a command is sampled: always at ratio 1, else with probability 1/ratio.
    fn sampled(&mut self) -> bool {
        if self.sample_ratio <= 1 {
            return true;
        }
        self.rng.unit() < 1.0 / self.sample_ratio as f64
    }

    /// Adds a command that took `micros` and moved `bytes`, naming `keys` in `slot`.
    fn add(&mut self, keys: &[&[u8]], slot: Option<u16>, micros: u64, bytes: u64) {
        let sampled = self.sampled();
        let selected = match (&self.slots, slot) {
            (Some(bits), Some(slot)) => bits.get(slot as usize),
            (Some(_), None) => false,
            (None, _) => true,
        };
        let sampled_apart = sampled && self.sample_ratio > 1;
        self.time.add(micros, selected, sampled_apart);
        self.bytes.add(bytes, selected, sampled_apart);
        if !sampled || !selected {
            return;
        }
        let n = keys.len() as u64;
        for key in keys {
            if let Some(cpu) = &mut self.cpu {
                cpu.update(key, micros / n);
            }
            if let Some(net) = &mut self.net {
                net.update(key, bytes / n);
            }
        }
    }

    /// Whether its DURATION ran out by `now_ms`.
    fn expired(&self, now_ms: u64) -> bool {
        self.duration_ms > 0 && now_ms >= self.start_ms + self.duration_ms
    }
}

impl Hotkeys {
    /// Ends the active session whose DURATION ran out (it keeps DURATION as its length).
    fn expire(&mut self, now_ms: u64) {
        if self.active && self.session.as_ref().is_some_and(|s| s.expired(now_ms)) {
            self.active = false;
        }
    }
}

/// The size of a request as RESP multibulk: `*argc`, then `$len`, the bytes, CRLF each.
fn request_bytes(args: &[&[u8]]) -> u64 {
    let digits = |n: usize| n.checked_ilog10().unwrap_or(0) as u64 + 1;
    let head = 3 + digits(args.len());
    head + args
        .iter()
        .map(|a| 5 + digits(a.len()) + a.len() as u64)
        .sum::<u64>()
}

/// Records command `cmd` (`args`) that just ran for `micros` and replied from
/// `reply_start`, while a session is active. Cold: only a session calls it.
#[cold]
#[inline(never)]
pub fn record(ctx: &mut Ctx, cmd: &Command, args: &[&[u8]], micros: u64, reply_start: usize) {
    // A script's own calls count in its EVAL / FCALL, as Redis skips nested calls.
    if ctx.server.scripting.running.is_some() {
        return;
    }
    let now_ms = ctx.now_ms;
    ctx.server.hotkeys.expire(now_ms);
    if !ctx.server.hotkeys.active {
        return;
    }
    let Some(found) = keyspecs::keys(cmd, args) else {
        return;
    };
    let keys: Vec<&[u8]> = found
        .iter()
        .filter(|k| !k.flags.is_not_key())
        .map(|k| args[k.pos])
        .collect();
    if keys.is_empty() {
        return;
    }
    let bytes = request_bytes(args) + (ctx.out.position().saturating_sub(reply_start)) as u64;
    let slot = ctx
        .server
        .cluster
        .is_some()
        .then(|| crate::cluster::slot::key_slot(keys[0]));
    if let Some(session) = ctx.server.hotkeys.session.as_mut() {
        session.add(&keys, slot, micros, bytes);
    }
}

/// HOTKEYS STOP: ends the active session (its data stays for GET); null when none is.
fn stop(ctx: &mut Ctx, _: &[&[u8]]) {
    let now_ms = ctx.now_ms;
    let hotkeys = &mut ctx.server.hotkeys;
    hotkeys.expire(now_ms);
    match hotkeys.session.as_mut().filter(|_| hotkeys.active) {
        Some(session) => {
            session.duration_ms = now_ms.saturating_sub(session.start_ms);
            hotkeys.active = false;
            ctx.out.ok();
        }
        None => ctx.out.null(),
    }
}

/// HOTKEYS RESET: drops the stopped session's data.
fn reset(ctx: &mut Ctx, _: &[&[u8]]) {
    let now_ms = ctx.now_ms;
    ctx.server.hotkeys.expire(now_ms);
    if ctx.server.hotkeys.active {
        return ctx.error("ERR hotkey tracking session in progress, stop tracking first");
    }
    ctx.server.hotkeys.session = None;
    ctx.out.ok();
}

/// HOTKEYS HELP.
fn help(ctx: &mut Ctx, _: &[&[u8]]) {
    help_reply(
        ctx,
        "HOTKEYS",
        &[
            "START <METRICS count [CPU] [NET]> [COUNT k] [DURATION duration] [SAMPLE ratio] [SLOTS count slot...]",
            "    Starts hotkeys tracking with specified metrics.",
            "    * METRICS count [CPU] [NET]",
            "        Specify count of metrics and choose amongst:",
            "        - CPU: Track hotkeys by CPU time percentage",
            "        - NET: Track hotkeys by network bytes percentage",
            "    * COUNT k",
            "        Specifies the value of K for the top-K hotkeys tracking. Default: 10",
            "    * DURATION duration",
            "        Specifies tracking duration in seconds. 0 means tracking will continue until manually stopped. Default: 0",
            "    * SAMPLE ratio",
            "        Keys are tracked with probability 1/ratio. Default: 1 (tracks every key)",
            "    * SLOTS count slot...",
            "        Specify which slots to track keys from. Only available in cluster mode. Default: empty (track all slots)",
            "STOP",
            "    Stop hotkeys tracking. Results are still available via GET",
            "GET",
            "    Get results from hotkeys tracking.",
            "RESET",
            "    Reset memory used for hotkeys tracking. Tracking must have been stopped.",
            "    Results will no longer be available after this command.",
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(cpu: bool, net: bool, sample_ratio: u32, slots: Vec<u16>) -> Options {
        let slots = (!slots.is_empty()).then(|| {
            let mut bits = SlotBits::default();
            slots.iter().for_each(|&s| bits.set(s as usize, true));
            bits
        });
        Options {
            metrics: Metrics { cpu, net },
            count: 10,
            duration_ms: 0,
            sample_ratio,
            slots,
        }
    }

    #[test]
    fn request_bytes_is_the_multibulk_size() {
        // *2\r\n$3\r\nGET\r\n$3\r\nkey\r\n
        assert_eq!(request_bytes(&[b"GET", b"key"]), 22);
        let long = vec![b'x'; 10];
        // *1\r\n$10\r\nxxxxxxxxxx\r\n
        assert_eq!(request_bytes(&[&long]), 4 + 5 + 12);
    }

    #[test]
    fn weights_split_among_keys_with_integer_division() {
        let mut s = Session::new(&options(true, true, 1, vec![]), 1000, 9);
        s.add(&[b"a", b"b", b"c"], None, 10, 100);
        let cpu = s.cpu.as_ref().unwrap().list();
        assert!(cpu.iter().all(|&(_, c)| c == 3) && cpu.len() == 3);
        assert_eq!(s.net.as_ref().unwrap().total(), 99);
        assert_eq!(s.bytes.all_commands_all_slots, 100);
        assert_eq!(s.time.all_commands_all_slots, 10);
        // Less than a microsecond per key: the key gets nothing by CPU.
        s.add(&[b"a", b"b", b"c"], None, 2, 3);
        assert_eq!(s.cpu.as_ref().unwrap().total(), 9);
    }

    #[test]
    fn only_selected_slots_reach_the_sketch() {
        let mut s = Session::new(&options(false, true, 1, vec![5]), 0, 1);
        s.add(&[b"in"], Some(5), 1, 10);
        s.add(&[b"out"], Some(6), 1, 20);
        assert_eq!(s.net.as_ref().unwrap().list(), vec![(&b"in"[..], 10)]);
        assert_eq!(s.bytes.all_commands_all_slots, 30);
        assert_eq!(s.bytes.all_commands_selected_slots, 10);
        assert_eq!(s.bytes.sampled_commands_selected_slots, 0);
    }

    #[test]
    fn sampling_keeps_about_one_in_ratio() {
        let mut s = Session::new(&options(false, true, 10, vec![]), 0, 5);
        for _ in 0..10_000 {
            s.add(&[b"k"], None, 1, 1);
        }
        let kept = s.net.as_ref().unwrap().total();
        assert!((700..1300).contains(&kept), "{kept}");
        // Without SLOTS every slot is selected: the sampled total is kept (GET hides it).
        assert_eq!(s.bytes.sampled_commands_selected_slots, kept);
        assert_eq!(s.bytes.all_commands_all_slots, 10_000);
    }

    #[test]
    fn duration_expires_the_session() {
        let mut h = Hotkeys {
            active: true,
            session: Some(Box::new(Session::new(
                &Options {
                    duration_ms: 1000,
                    ..options(true, false, 1, vec![])
                },
                5000,
                1,
            ))),
        };
        h.expire(5999);
        assert!(h.active);
        h.expire(6000);
        assert!(!h.active);
        assert_eq!(h.session.as_ref().unwrap().duration_ms, 1000);
    }
}
