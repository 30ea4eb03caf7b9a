//! Crashes as Redis reports them: a bug report in the log, between Redis's START and END
//! lines, for a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT: "crashed by
//! signal" and a stack trace) and for a server panic (the "Guru Meditation" line). The
//! process then dies of the signal; a panic exits with status 1 instead when
//! `use-exit-on-panic` is set, as Redis's bugReportEnd.

use std::sync::atomic::{AtomicBool, Ordering};

/// use-exit-on-panic: exit(1) after the report instead of dying of the signal.
static EXIT_ON_PANIC: AtomicBool = AtomicBool::new(false);

const START: &str = "\n\n=== REDIS BUG REPORT START: Cut & paste starting from here ===\n";
const END: &str = "\n=== REDIS BUG REPORT END. Make sure to include from START to END. ===\n\n";

/// Size of the main thread's signal stack, where the report is written (backtrace's
/// unwinder needs more than the default SIGSTKSZ).
const ALT_STACK_BYTES: usize = 256 * 1024;

/// The signals a crash report is written for.
const FATAL: [libc::c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGABRT,
];

extern "C" {
    // glibc's execinfo.h: the return addresses on the stack, and their symbols written
    // straight to a descriptor (no allocation).
    fn backtrace(buffer: *mut *mut libc::c_void, size: libc::c_int) -> libc::c_int;
    fn backtrace_symbols_fd(buffer: *const *mut libc::c_void, size: libc::c_int, fd: libc::c_int);
}

/// Sets use-exit-on-panic.
pub fn set_exit_on_panic(on: bool) {
    EXIT_ON_PANIC.store(on, Ordering::Relaxed);
}

/// crash-log-enabled: the crash report on the fatal signals (at start and on CONFIG SET),
/// or, turned off, their default action, so a crash leaves no report and the kernel's core
/// dump shows the fault where it happened (Redis's setupSigSegvAction and
/// removeSigSegvHandlers).
pub fn set_crash_log(enabled: bool) {
    if !enabled {
        for signal in FATAL {
            // SAFETY: restoring a signal's default action has no preconditions.
            unsafe { libc::signal(signal, libc::SIG_DFL) };
        }
        return;
    }
    static ALT_STACK: std::sync::Once = std::sync::Once::new();
    ALT_STACK.call_once(prepare_report);
    for signal in FATAL {
        // SAFETY: a zeroed sigaction is valid; the handler only makes async-signal-safe
        // calls (write, backtrace after its first use, getpid, kill, _exit).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_fatal_signal as *const () as usize;
            action.sa_flags =
                libc::SA_SIGINFO | libc::SA_NODEFER | libc::SA_RESETHAND | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// What the report's handler needs before any signal: the unwinder loaded and the main
/// thread's signal stack.
fn prepare_report() {
    // glibc loads the unwinder on the first backtrace(): done here, not in a handler.
    let mut frames = [std::ptr::null_mut(); 1];
    // SAFETY: the buffer holds the one frame asked for.
    unsafe { backtrace(frames.as_mut_ptr(), 1) };
    // The handler runs on a stack of its own, so a stack overflow (the SIGSEGV of the
    // guard page) is reported too instead of killing the process without a word.
    let stack: &'static mut [u8] = Box::leak(vec![0u8; ALT_STACK_BYTES].into_boxed_slice());
    let alt = libc::stack_t {
        ss_sp: stack.as_mut_ptr().cast(),
        ss_flags: 0,
        ss_size: stack.len(),
    };
    // SAFETY: the stack is leaked, so it outlives the thread that uses it.
    unsafe { libc::sigaltstack(&alt, std::ptr::null_mut()) };
}

extern "C" fn on_fatal_signal(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    _context: *mut libc::c_void,
) {
    let fd = crate::log::handler_fd();
    write_fd(fd, START.as_bytes());
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let (code, address) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    let (mut a, mut b) = (itoa::Buffer::new(), itoa::Buffer::new());
    crate::log::log_from_handler_parts(&[
        b"Goblin ",
        env!("CARGO_PKG_VERSION").as_bytes(),
        b" (Redis ",
        crate::REDIS_VERSION.as_bytes(),
        b" compatible) crashed by signal: ",
        a.format(signal).as_bytes(),
        b", si_code: ",
        b.format(code).as_bytes(),
    ]);
    if matches!(signal, libc::SIGSEGV | libc::SIGBUS) {
        crate::log::log_from_handler_parts(&[
            b"Accessing address: 0x",
            hex(address, &mut [0u8; 20]),
        ]);
    }
    write_fd(fd, b"\n------ STACK TRACE ------\n\nBacktrace:\n");
    let mut frames = [std::ptr::null_mut(); 64];
    // SAFETY: the buffer holds `frames.len()` entries; backtrace fills at most that many.
    unsafe {
        let depth = backtrace(frames.as_mut_ptr(), frames.len() as libc::c_int);
        backtrace_symbols_fd(frames.as_ptr(), depth, fd);
    }
    write_fd(fd, END.as_bytes());
    die(signal);
}

/// Ends the process after a signal's report: dies of the signal (SA_RESETHAND restored its
/// default action), so the status says how it died, as Redis's bugReportEnd.
fn die(signal: libc::c_int) -> ! {
    // SAFETY: signal, kill and _exit are async-signal-safe.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::kill(libc::getpid(), signal);
        libc::_exit(128 + signal);
    }
}

/// `v` in lower-case hexadecimal, in `buf` (no allocation).
fn hex(mut v: usize, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b"0123456789abcdef"[v % 16];
        v /= 16;
        if v == 0 {
            return &buf[at..];
        }
    }
}

fn write_fd(fd: libc::c_int, bytes: &[u8]) {
    // SAFETY: write reads `bytes.len()` bytes of a live slice.
    unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
}

/// A server panic (Redis's serverPanic): the bug report with `message` and where it
/// happened, then exit status 1 with use-exit-on-panic, else death by SIGABRT.
#[track_caller]
pub fn panic(message: &str) -> ! {
    let at = std::panic::Location::caller();
    crate::log::log_raw(crate::config::LogLevel::Warning, START);
    crate::warning!("------------------------------------------------");
    crate::warning!("!!! Software Failure. Press left mouse button to continue");
    crate::warning!("Guru Meditation: {message} #{}:{}", at.file(), at.line());
    crate::log::log_raw(crate::config::LogLevel::Warning, END);
    if EXIT_ON_PANIC.load(Ordering::Relaxed) {
        // SAFETY: _exit ends the process at once.
        unsafe { libc::_exit(1) };
    }
    die(libc::SIGABRT)
}

/// DEBUG SEGFAULT: a write to a read-only page, a real SIGSEGV.
pub fn segfault() -> ! {
    // SAFETY: the page is mapped read-only on purpose: the write faults, and the handler
    // reports and ends the process. Should the map fail, the write to null faults too.
    unsafe {
        let page = libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        let p = if page == libc::MAP_FAILED {
            std::ptr::null_mut()
        } else {
            page.cast::<u8>()
        };
        std::ptr::write_volatile(p, b'x');
    }
    unreachable!("the write faulted")
}
